package main

import (
	"fmt"
	"io"
	"net/http"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/toolstate"
)

// toolStates keeps the health of the backend tools per chat id
// (toolstate): a tool that keeps failing stops being offered, until it is
// reset through the HTTP API.
type toolStates struct {
	store   toolstate.Store
	tracker *toolstate.Tracker
	api     http.Handler
}

// newToolStates keeps the states in files under dir, or in memory when dir
// is "". Store problems are logged to logw and do not stop a chat.
func newToolStates(dir string, tools []*agentloop.Tool, logw io.Writer) (*toolStates, error) {
	var store toolstate.Store = toolstate.NewMemoryStore()
	if dir != "" {
		fs, err := toolstate.NewFileStore(dir)
		if err != nil {
			return nil, err
		}
		store = fs
	}
	return &toolStates{
		store: store,
		tracker: &toolstate.Tracker{
			Store: store,
			OnError: func(chatID string, err error) {
				fmt.Fprintf(logw, "webchat: tool states of chat %q: %v\n", chatID, err)
			},
		},
		api: toolstate.NewHandler(store, toolstate.WithTools(toolstate.Names(tools)...)),
	}, nil
}

// prepare is the chat handler's Prepare: each run of a chat gets the hooks
// of that chat's tool states.
func (t *toolStates) prepare(r *http.Request, req *aisdk.ChatRequest) ([]agentloop.Option, error) {
	if req.ID == "" {
		return nil, nil
	}
	return []agentloop.Option{agentloop.WithHooks(t.tracker.Hooks(req.ID))}, nil
}
