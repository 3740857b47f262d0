package aisdk_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/simtest"
)

func view(t *testing.T, api http.Handler, id string) aisdk.ChatView {
	t.Helper()
	code, body := do(api, http.MethodGet, "/api/chats/"+id, "")
	require.Equal(t, http.StatusOK, code, body)
	var v aisdk.ChatView
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	return v
}

// branchIDs returns the view's other versions as "parent>id: text".
func branchIDs(v aisdk.ChatView) []string {
	var out []string
	for _, b := range v.Branches {
		text := ""
		for _, p := range b.Message.Parts {
			text += p.Text
		}
		out = append(out, b.ParentID+">"+b.Message.ID+": "+text)
	}
	return out
}

// The versions an edit or a regeneration replaced come back with the
// chat, each under the message it follows, so a page shows the same
// versions after a reload.
func TestBranches_EditsAndRegenerationsAreKeptWithTheChat(t *testing.T) {
	var n atomic.Int32
	model := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text(fmt.Sprint("answer ", n.Add(1)))}, nil
	})
	ids := 0
	h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: model}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler),
		NewMessageID: func() string { ids++; return fmt.Sprint("a", ids) }}
	api := h.Routes("/api")
	post := func(body string) {
		t.Helper()
		code, resp := do(api, http.MethodPost, "/api/chat", body)
		require.Equal(t, http.StatusOK, code, resp)
	}
	post(`{"id":"c","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Hello"}]}]}`)
	assert.Nil(t, view(t, api, "c").Branches, "one version so far")

	// Regenerate a1: a2 replaces it; a1 is another version after u1.
	post(`{"id":"c","trigger":"regenerate-message","messageId":"a1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Hello"}]}]}`)
	v := view(t, api, "c")
	require.Len(t, v.Messages, 2)
	assert.Equal(t, "a2", v.Messages[1].ID)
	assert.Equal(t, []string{"u1>a1: answer 1"}, branchIDs(v))

	// A second exchange, then an edit of the first message: u1 and what
	// followed it (a2, u2, a3) become another version, and a1 stays under u1.
	post(`{"id":"c","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Hello"}]},` +
		`{"id":"a2","role":"assistant","parts":[{"type":"text","text":"answer 2"}]},` +
		`{"id":"u2","role":"user","parts":[{"type":"text","text":"More"}]}]}`)
	post(`{"id":"c","messages":[{"id":"u1b","role":"user","parts":[{"type":"text","text":"Hi"}]}]}`)
	v = view(t, api, "c")
	require.Len(t, v.Messages, 2)
	assert.Equal(t, []string{"u1b", "a4"}, []string{v.Messages[0].ID, v.Messages[1].ID})
	assert.Equal(t, []string{">u1: Hello", "u1>a2: answer 2", "a2>u2: More", "u2>a3: answer 3", "u1>a1: answer 1"}, branchIDs(v),
		"parents first, though a1 was kept before its parent")

	// A continuation or a new message keeps no version.
	post(`{"id":"c","messages":[{"id":"u1b","role":"user","parts":[{"type":"text","text":"Hi"}]},` +
		`{"id":"a4","role":"assistant","parts":[{"type":"text","text":"answer 4"}]},` +
		`{"id":"u3","role":"user","parts":[{"type":"text","text":"Thanks"}]}]}`)
	assert.Len(t, view(t, api, "c").Branches, 5)
}
