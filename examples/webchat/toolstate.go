package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/agentloop/agentloop"
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
	return &toolStates{
		tracker: &toolstate.Tracker{
			Docs: st,
			OnError: func(chatID string, err error) {
				fmt.Fprintf(logw, "webchat: tool states of chat %q: %v\n", chatID, err)
			},
		},
		api: toolstate.NewHandler(st, toolstate.HandlerOptions{
			Tools:                 toolstate.Names(tools),
			Authorize:             acc.authorize,
			CrossOriginProtection: acc.origins,
			Logger:                slog.New(slog.NewTextHandler(logw, nil)),
		}),
	}
}

// hooks are the agent's hooks for the tool states: the chat handler runs
// each chat with its chat id as the conversation id, which the tracker
// reads from the run.
func (t *toolStates) hooks() *agentloop.Hooks { return t.tracker.Hooks() }
