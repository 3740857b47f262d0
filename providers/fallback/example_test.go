package fallback_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/ollama/ollama/api"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/fallback"
	"github.com/agentloop/agentloop/providers/ollama"
)

// A local Ollama model first, a hosted model when the local server is down
// (here a stand-in that answers like the Anthropic API).
func Example() {
	hosted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello from the hosted model.\"}}\n\n"+
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer hosted.Close()

	// Nothing listens on the local address. The client does not retry, so
	// the fallback moves on at once instead of after the default client's
	// backoff.
	localURL, err := url.Parse("http://127.0.0.1:1")
	if err != nil {
		fmt.Println(err)
		return
	}
	local, err := ollama.New(ollama.Config{Model: "qwen3:4b", Client: api.NewClient(localURL, http.DefaultClient)})
	if err != nil {
		fmt.Println(err)
		return
	}
	remote, err := anthropic.New(anthropic.Config{Model: "claude-haiku-4-5", BaseURL: hosted.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	model, err := fallback.New(fallback.Config{
		Models: []agentloop.Model{local, remote},
		OnFallback: func(_ context.Context, failed int, err error) {
			fmt.Printf("model %d failed, trying the next\n", failed)
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	agent := &agentloop.Agent{Model: model}
	text, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("Hi!")}, nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(text)
	// Output:
	// model 0 failed, trying the next
	// Hello from the hosted model.
}
