package openairesponses_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/openairesponses"
)

// Stream a reply from the Responses API (here a local stand-in that sends a
// reasoning summary and a short answer).
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1"}}`,
			`{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"A greeting."}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","encrypted_content":"gAAA"}}`,
			`{"type":"response.output_text.delta","output_index":1,"delta":"Hello there."}`,
			`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":9,"output_tokens":3}}}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
	}))
	defer srv.Close()

	cfg := openairesponses.ConfigFromEnv("gpt-5-mini")
	cfg.BaseURL = srv.URL + "/v1" // unset, the OpenAI API
	cfg.ReasoningSummary = "auto"
	model, err := openairesponses.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("Say hello.")}}
	for chunk, err := range model.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch c := chunk.(type) {
		case agentloop.ReasoningDelta:
			fmt.Println("thinking:", c.Text)
		case agentloop.ReasoningEnd:
			fmt.Println("reasoning item:", c.Signature)
		case agentloop.TextDelta:
			fmt.Print(c.Text)
		case agentloop.Usage:
			fmt.Printf("\n[%d in, %d out]", c.Input, c.Output)
		case agentloop.Finish:
			fmt.Printf(" %s\n", c.Reason)
		}
	}
	// Output:
	// thinking: A greeting.
	// reasoning item: rs_1
	// Hello there.
	// [9 in, 3 out] stop
}
