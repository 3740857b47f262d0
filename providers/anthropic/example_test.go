package anthropic_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/anthropic"
)

// Stream a reply from a server that answers like the Messages API (here a
// local stand-in with a short recorded-style body).
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n"+
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: ping\ndata: {\"type\":\"ping\"}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello from \"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Claude.\"}}\n\n"+
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":4}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer srv.Close()

	cfg := anthropic.ConfigFromEnv("claude-sonnet-4-5")
	cfg.BaseURL = srv.URL // unset, the real API
	model, err := anthropic.New(cfg)
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
	// Hello from Claude.
	// [12 in, 4 out] stop
}
