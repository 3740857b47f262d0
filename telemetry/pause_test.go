package telemetry_test

import (
	"context"
	"encoding/json"
	"testing"

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
	last, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("pick")}, agentloop.WithConversationID(conv)))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := last.(agentloop.Pending)
	if !ok {
		t.Fatalf("last item %T, want Pending", last)
	}
	h, err := p.History.AppendResults(agentloop.ToolResult{CallID: "call_pick", Content: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func pickAgent(t *testing.T, hooks *agentloop.Hooks) *agentloop.Agent {
	t.Helper()
	pick, err := agentloop.NewClientTool("pick", "", nil)
	if err != nil {
		t.Fatal(err)
	}
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
	if err := st.PutChat(ctx, chat); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, telemetry.Options{Pauses: st})
	agent := pickAgent(t, h.hooks)
	for range 2 {
		pauseOnce(t, agent, "chat-1")
		pauseOnce(t, agent, "no-chat")
	}
	d, err := st.GetDoc(ctx, "chat-1", telemetry.PauseDoc)
	if err != nil {
		t.Fatalf("the chat's record: %v", err)
	}
	var rec struct {
		SpanID string   `json:"spanId"`
		Calls  []string `json:"calls"`
	}
	if err := json.Unmarshal(d.Data, &rec); err != nil || len(rec.Calls) != 1 || rec.Calls[0] != "call_pick" {
		t.Fatalf("record %s (%v), want the span and call_pick", d.Data, err)
	}
	runs := h.ended("invoke_agent")
	if last := runs[len(runs)-2]; rec.SpanID != last.SpanContext().SpanID().String() {
		t.Errorf("the record holds span %s, want the latest paused run's %s", rec.SpanID, last.SpanContext().SpanID())
	}
	if _, err := st.GetDoc(ctx, "", store.ChatlessName("no-chat", telemetry.PauseDoc)); err != nil {
		t.Errorf("the record of a conversation that is no chat: %v", err)
	}
	if err := st.DeleteChat(ctx, "chat-1", chat.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := store.GetConversationDoc(ctx, st, "chat-1", telemetry.PauseDoc); err == nil {
		t.Error("the record outlived its chat")
	}
}

// Without Pauses nothing is kept and nothing is linked: links are opt-in.
func TestPauses_NilLinksNothing(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	agent := pickAgent(t, h.hooks)
	resumed := pauseOnce(t, agent, "c")
	if _, err := drain(t, agent.Stream(context.Background(), resumed, agentloop.WithConversationID("c"))); err != nil {
		t.Fatal(err)
	}
	runs := h.ended("invoke_agent")
	if links := runs[len(runs)-1].Links(); len(links) != 0 {
		t.Errorf("links %v without Pauses", links)
	}
}
