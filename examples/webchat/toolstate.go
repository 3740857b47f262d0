package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/toolstate"
)

// toolStates keeps the health of the backend tools per chat id
// (toolstate): a tool that keeps failing stops being offered, until it is
// reset through the HTTP API.
type toolStates struct {
	tracker *toolstate.Tracker
	api     http.Handler
}

// newToolStates keeps the states as a document of each chat in st, the
// chats' own database. acc guards the HTTP API, with the same
// authorization and cross-origin check as the chat routes. Store problems
// are logged to logw and do not stop a chat.
func newToolStates(st store.Docs, tools []*agentloop.Tool, acc access, logw io.Writer) *toolStates {
	states := toolstate.NewDocStore(st)
	return &toolStates{
		tracker: &toolstate.Tracker{
			Store: states,
			OnError: func(chatID string, err error) {
				fmt.Fprintf(logw, "webchat: tool states of chat %q: %v\n", chatID, err)
			},
		},
		api: toolstate.NewHandler(states, toolstate.WithTools(toolstate.Names(tools)...), toolstate.WithAuthorize(acc.authorize),
			toolstate.WithCrossOriginProtection(acc.origins), toolstate.WithLogger(slog.New(slog.NewTextHandler(logw, nil)))),
	}
}

// prepare is the chat handler's Prepare: each run of a chat gets the hooks
// of that chat's tool states.
func (t *toolStates) prepare(r *http.Request, req *aisdk.ChatRequest) ([]agentloop.Option, error) {
	if req.ID == "" {
		return nil, nil
	}
	return []agentloop.Option{agentloop.WithHooks(t.tracker.Hooks(req.ID))}, nil
}
