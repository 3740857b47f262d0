package toolstate_test

import (
	"log"
	"net/http"
	"path/filepath"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/toolstate"
)

// Wiring a web chat: tool states persist per chat id in a file store, each
// chat request runs with its chat's hooks, and the two endpoints are served.
func Example_webChat() {
	var agent *agentloop.Agent // the app's agent, with its Tools
	store, err := toolstate.NewFileStore(filepath.Join("data", "tool-states"))
	if err != nil {
		log.Fatal(err)
	}
	tracker := &toolstate.Tracker{
		Store:  store,
		Config: &toolstate.Config{FailureThreshold: 3},
		OnError: func(chatID string, err error) {
			log.Printf("tool states of chat %s: %v", chatID, err) // the run goes on
		},
	}
	chat := &aisdk.Handler{
		Agent: agent,
		Prepare: func(r *http.Request, req *aisdk.ChatRequest) ([]agentloop.Option, error) {
			if req.ID == "" {
				return nil, &aisdk.HTTPError{Status: http.StatusBadRequest, Message: "the chat id is missing"}
			}
			if line, err := tracker.Summary(r.Context(), req.ID, toolstate.Names(agent.Tools)...); err == nil {
				log.Printf("chat %s: %s", req.ID, line)
			}
			return []agentloop.Option{agentloop.WithHooks(tracker.Hooks(req.ID))}, nil
		},
	}
	mux := http.NewServeMux()
	mux.Handle("/api/chat", chat)
	mux.Handle("/agents/", toolstate.NewHandler(store,
		toolstate.WithTools(toolstate.Names(agent.Tools)...),
		toolstate.WithConfig(*tracker.Config),
		toolstate.WithAuthorize(func(r *http.Request, chatID string) error {
			return nil // check here that the caller owns chatID
		}),
	))
}
