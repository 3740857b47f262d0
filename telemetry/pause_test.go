package telemetry_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/telemetry"
)

// pauseOnce runs agent until it pauses for a client tool, in conversation
// conv, and returns the history to resume with.
func pauseOnce(t *testing.T, agent *agentloop.Agent, conv string) agentloop.History {
	t.Helper()
	last, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("pick")}, &agentloop.RunOptions{ConversationID: conv}))
	require.NoError(t, err)
	p, ok := last.(agentloop.Pending)
	require.True(t, ok, "last item %T, want Pending", last)
	h, err := p.History.AppendResults(agentloop.ToolResult{CallID: "call_pick", Content: "blue"})
	require.NoError(t, err)
	return h
}

// pickAgent's model calls the client tool pick after a user message, and
// answers after its result.
func pickAgent(t *testing.T, hooks *agentloop.Hooks) *agentloop.Agent {
	t.Helper()
	pick, err := agentloop.NewClientTool("pick", "", nil)
	require.NoError(t, err)
	return &agentloop.Agent{Model: simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		if req.Messages[len(req.Messages)-1].Role == agentloop.RoleUser {
			return []simtest.Step{simtest.Call("call_pick", "pick", map[string]any{})}, nil
		}
		return []simtest.Step{simtest.Text("done")}, nil
	}), Tools: []*agentloop.Tool{pick}, Hooks: hooks}
}

// A paused run of a stored chat is a document of the chat, deleted with
// it; one of a conversation that is no chat is a document of no chat.
// Either way there is one record per conversation, replaced by each pause.
func TestPauses_OneRecordPerConversationBesideItsChat(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Options{})
	chat := &store.Chat{ID: "chat-1"}
	require.NoError(t, st.PutChat(ctx, chat))
	h := newHarness(t, telemetry.Options{Pauses: st})
	agent := pickAgent(t, h.hooks)
	for range 2 {
		pauseOnce(t, agent, "chat-1")
		pauseOnce(t, agent, "no-chat")
	}
	d, err := st.GetDoc(ctx, "chat-1", telemetry.PauseDoc)
	require.NoError(t, err, "the chat's record")
	var rec struct {
		SpanID string   `json:"spanId"`
		Calls  []string `json:"calls"`
	}
	require.NoError(t, json.Unmarshal(d.Data, &rec))
	assert.Equal(t, []string{"call_pick"}, rec.Calls)
	runs := h.ended("invoke_agent")
	assert.Equal(t, runs[len(runs)-2].SpanContext().SpanID().String(), rec.SpanID, "the latest paused run of chat-1")
	_, err = st.GetDoc(ctx, "", store.ChatlessName("no-chat", telemetry.PauseDoc))
	assert.NoError(t, err, "the record of a conversation that is no chat")

	require.NoError(t, st.DeleteChat(ctx, "chat-1", chat.Version))
	_, err = store.GetConversationDoc(ctx, st, "chat-1", telemetry.PauseDoc)
	assert.ErrorIs(t, err, store.ErrNotFound, "the record went with its chat")
}

// Without Pauses nothing is kept and nothing is linked: links are opt-in.
func TestPauses_NilLinksNothing(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	agent := pickAgent(t, h.hooks)
	resumed := pauseOnce(t, agent, "c")
	_, err := drain(t, agent.Stream(context.Background(), resumed, &agentloop.RunOptions{ConversationID: "c"}))
	require.NoError(t, err)
	runs := h.ended("invoke_agent")
	assert.Empty(t, runs[len(runs)-1].Links())
}
