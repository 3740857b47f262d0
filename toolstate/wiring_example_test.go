package toolstate_test

import (
	"log"
	"net/http"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/toolstate"
)

// Wiring a web chat: tool states are documents in the app's store (of each
// stored chat, or, for a stateless handler as here, of no chat), the agent
// carries the tracker's hooks (the handler runs each chat with its chat id
// as the conversation id), and the two endpoints are served.
func Example_webChat() {
	var agent *agentloop.Agent             // the app's agent, with its Tools
	st := memstore.New(memstore.Options{}) // in production: sqlitestore or pgstore
	tracker := &toolstate.Tracker{
		Docs:   st,
		Config: &toolstate.Config{FailureThreshold: 3},
		OnError: func(chatID string, err error) {
			log.Printf("tool states of chat %s: %v", chatID, err) // the run goes on
		},
	}
	agent.Hooks = agentloop.ComposeHooks(agent.Hooks, tracker.Hooks())
	chat := &aisdk.Handler{Agent: agent}
	mux := http.NewServeMux()
	mux.Handle("/api/chat", chat)
	mux.Handle("/agents/", toolstate.NewHandler(st, toolstate.HandlerOptions{
		Tools:  toolstate.Names(agent.Tools),
		Config: tracker.Config,
		Authorize: func(r *http.Request, chatID string) error {
			return nil // check here that the caller owns chatID
		},
	}))
}
