package ollama_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/ollama"
)

// A tiny recorded /api/chat stream: thinking, text, one tool call, the end.
const recorded = `{"model":"qwen3:4b","message":{"role":"assistant","content":"","thinking":"The user wants the weather."},"done":false}
{"model":"qwen3:4b","message":{"role":"assistant","content":"Let me check."},"done":false}
{"model":"qwen3:4b","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","function":{"index":0,"name":"get_weather","arguments":{"city":"Tokyo"}}}]},"done":false}
{"model":"qwen3:4b","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":234,"eval_count":17}
`

func Example() {
	// A stand-in for an Ollama server.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = io.WriteString(w, recorded)
	}))
	defer srv.Close()

	// With Host unset, the model would use OLLAMA_HOST or 127.0.0.1:11434.
	model, err := ollama.New(ollama.Config{Model: "qwen3:4b", Host: srv.URL, Think: ollama.ThinkOn})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("Weather in Tokyo?")}}
	for chunk, err := range model.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch c := chunk.(type) {
		case agentloop.ReasoningDelta:
			fmt.Println("thinking:", c.Text)
		case agentloop.ReasoningEnd:
			fmt.Println("thinking done")
		case agentloop.TextDelta:
			fmt.Println("text:", c.Text)
		case agentloop.ToolCall:
			fmt.Printf("call %s: %s(%s)\n", c.ID, c.Name, c.Args)
		case agentloop.Usage:
			fmt.Printf("tokens: %d in, %d out\n", c.Input, c.Output)
		case agentloop.Finish:
			fmt.Println("finish:", c.Reason)
		}
	}
	// Output:
	// thinking: The user wants the weather.
	// thinking done
	// text: Let me check.
	// call call_1: get_weather({"city":"Tokyo"})
	// tokens: 234 in, 17 out
	// finish: tool_calls
}
