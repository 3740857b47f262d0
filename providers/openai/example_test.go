package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/openai"
)

// Stream a reply from any OpenAI-compatible server (here a local stand-in
// with a short recorded-style body).
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello \"}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"there.\"}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3}}\n\n"+
			"data: [DONE]\n\n")
	}))
	defer srv.Close()

	cfg := openai.ConfigFromEnv("gpt-4.1-mini")
	cfg.BaseURL = srv.URL + "/v1" // unset, the OpenAI API
	model, err := openai.New(cfg)
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
		case agentloop.TextDelta:
			fmt.Print(c.Text)
		case agentloop.Usage:
			fmt.Printf("\n[%d in, %d out]", c.Input, c.Output)
		case agentloop.Finish:
			fmt.Printf(" %s\n", c.Reason)
		}
	}
	// Output:
	// Hello there.
	// [9 in, 3 out] stop
}
