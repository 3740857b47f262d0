package gemini_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/gemini"
)

func Example() {
	// A stand-in for the Gemini API; leave BaseURL and APIKey empty to use
	// the real one with GEMINI_API_KEY or GOOGLE_API_KEY.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hello!\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n")
	}))
	defer srv.Close()

	model, err := gemini.New(context.Background(), gemini.Config{Model: "gemini-2.5-flash", APIKey: "key", BaseURL: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	agent := &agentloop.Agent{Model: model}
	last, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("Hi")}, nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(last.(agentloop.Final).Text)
	// Output: Hello!
}
