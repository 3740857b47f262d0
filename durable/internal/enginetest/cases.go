package enginetest

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/store/memstore"
)

// cmpItems compares items by their JSON-visible content (Go errors behind
// results are not recorded).
var cmpItems = cmp.Transformer("json", func(it agentloop.Item) string {
	b, err := json.Marshal(it)
	if err != nil {
		panic(err)
	}
	return string(b)
})

func collect(t *testing.T, seq iter.Seq2[agentloop.Item, error]) []agentloop.Item {
	t.Helper()
	var items []agentloop.Item
	for it, err := range seq {
		require.NoError(t, err)
		items = append(items, it)
	}
	return items
}

func inProcess(t *testing.T, agent *agentloop.Agent, conversationID string, h agentloop.History) []agentloop.Item {
	t.Helper()
	return collect(t, agent.Stream(context.Background(), h, &agentloop.RunOptions{ConversationID: conversationID}))
}

func drain[T agentloop.Item](t *testing.T, seq iter.Seq2[agentloop.Item, error]) T {
	t.Helper()
	last, err := agentloop.Drain(seq)
	require.NoError(t, err)
	v, ok := last.(T)
	require.Truef(t, ok, "the run ended with %T", last)
	return v
}

var user = func(text string) agentloop.History { return agentloop.History{agentloop.UserMessage(text)} }

// The engine replays each model call's items as they are in process (in
// whole parts, if it says so); the tool calls run once each.
func testItems(t *testing.T, s *suite) {
	want := inProcess(t, weatherAgent(&counter{}), "chat-1", user("weather?"))
	var c counter
	r := s.newHarness(t).Open(weatherAgent(&c), nil)
	got := collect(t, r.Stream(t.Context(), "chat-1/1", "chat-1", user("weather?")))
	require.Empty(t, cmp.Diff(s.items(want), got, cmpItems), "items (-in process +engine)")
	assert.Equal(t, map[string]int{"model 0": 1, "tool weather": 2, "model 1": 1}, c.counts())
}

// A replay of a run that ended (a recovery's replay of its record) makes
// no model or tool call and ends with the same last item.
func testReplay(t *testing.T, s *suite) {
	var c counter
	h := s.newHarness(t)
	r := h.Open(weatherAgent(&c), nil)
	live := drain[agentloop.Final](t, r.Stream(t.Context(), "chat-1/1", "chat-1", user("weather?")))
	before := c.counts()

	id := s.replay(t, h, "chat-1/1", "")
	replayed := drain[agentloop.Final](t, r.Stream(t.Context(), id, "", nil))
	assert.Equal(t, before, c.counts(), "a replay makes no call")
	assert.Empty(t, cmp.Diff(agentloop.Item(live), agentloop.Item(replayed), cmpItems))
}

// A run paused on an approval ends with Pending, recorded; another
// process later yields that record, and a new run whose history carries
// the approval goes on from the approved call: the call runs once, and
// the first model call is not made again.
func testApproval(t *testing.T, s *suite) {
	var c counter
	agent := approvalAgent(&c)
	h := s.newHarness(t)
	r := h.Open(agent, nil)
	p := drain[agentloop.Pending](t, r.Stream(t.Context(), "chat-2/1", "chat-2", user("pay")))
	require.Len(t, p.Approvals, 1)
	assert.Equal(t, map[string]int{"model 0": 1}, c.counts(), "nothing runs before the approval")

	r = h.Open(agent, nil) // another process, later
	p = drain[agentloop.Pending](t, r.Stream(t.Context(), "chat-2/1", "chat-2", nil))
	require.Len(t, p.Approvals, 1, "the recorded outcome")
	approved, err := p.History.AppendApprovals(agentloop.Approval{CallID: p.Approvals[0].ID, Approved: true})
	require.NoError(t, err)
	f := drain[agentloop.Final](t, r.Stream(t.Context(), "chat-2/2", "chat-2", approved))
	assert.Equal(t, "Transferred.", f.Text)
	assert.Equal(t, map[string]int{"model 0": 1, "tool transfer": 1, "model 1": 1}, c.counts())
}

// design.md §6.4 under an engine: a sub-agent's approval pauses the run
// with the sub-run's state in its history and the usage made so far; a
// replay pauses again without a call; after a restart the approval, in a
// new run, resumes the sub-run where it stopped.
func testNestedApproval(t *testing.T, s *suite) {
	var c counter
	agent := nestedAgent(&c)
	h := s.newHarness(t)
	r := h.Open(agent, nil)
	p := drain[agentloop.Pending](t, r.Stream(t.Context(), "chat-n/1", "chat-n", user("pay 5")))
	require.Len(t, p.Approvals, 1)
	callID := p.History[1].Parts[0].ToolCall.ID
	assert.Equal(t, callID+"/call_1_0", p.Approvals[0].ID, "the sub-run's call, under the lead's call")
	assert.Equal(t, "pay", p.Approvals[0].Name)
	tm := p.History[len(p.History)-1]
	require.Equal(t, agentloop.PartSubRun, tm.Parts[0].Type, "the history holds the sub-run's state")
	assert.Equal(t, "researcher", tm.Parts[0].SubRun.Agent)
	assert.Equal(t, agentloop.Usage{Input: 30, Output: 3}, p.Usage, "the lead's call and the researcher's two")
	assert.Equal(t, map[string]agentloop.Usage{"lead": {Input: 10, Output: 1}, "researcher": {Input: 20, Output: 2}}, p.AgentUsage)

	t.Run("AReplayPausesAgainWithoutACall", func(t *testing.T) {
		id := s.replay(t, h, "chat-n/1", "")
		before := c.counts()
		replayed := drain[agentloop.Pending](t, r.Stream(t.Context(), id, "", nil))
		assert.Equal(t, p.Approvals, replayed.Approvals)
		assert.Equal(t, before, c.counts(), "a replay makes no call")
	})

	r = h.Open(agent, nil) // another process, later
	p = drain[agentloop.Pending](t, r.Stream(t.Context(), "chat-n/1", "chat-n", nil))
	require.Len(t, p.Approvals, 1, "the recorded outcome")
	approved, err := p.History.AppendApprovals(agentloop.Approval{CallID: p.Approvals[0].ID, Approved: true})
	require.NoError(t, err)
	f := drain[agentloop.Final](t, r.Stream(t.Context(), "chat-n/2", "chat-n", approved))
	assert.Equal(t, "The researcher paid.", f.Text)
	require.NoError(t, f.History.Validate())
	assert.Equal(t, "paid 5", f.History[len(f.History)-2].Parts[0].ToolResult.Content, "the sub-run's answer is the call's result")
	assert.Equal(t, map[string]int{
		"lead model 0": 1, "researcher model 0": 1, "tool lookup": 1, "researcher model 1": 1, // before the pause: once
		"tool pay": 1, "researcher model 2": 1, "lead model 1": 1,
	}, c.counts())
	assert.Equal(t, agentloop.Usage{Input: 20, Output: 2}, f.Usage, "the resumed run's own calls: the researcher's last and the lead's")
	assert.Equal(t, map[string]agentloop.Usage{"lead": {Input: 10, Output: 1}, "researcher": {Input: 10, Output: 1}}, f.AgentUsage)
}

// A sub-agent's client tool call pauses the run as the lead's Pending;
// its result, in a new run, resumes the sub-run with it.
func testNestedClientCall(t *testing.T, s *suite) {
	var c counter
	r := s.newHarness(t).Open(locatorAgent(&c), nil)
	p := drain[agentloop.Pending](t, r.Stream(t.Context(), "chat-l/1", "chat-l", user("where am I")))
	require.Len(t, p.ClientCalls, 1)
	assert.Equal(t, "get_location", p.ClientCalls[0].Name)
	h, err := p.History.AppendResults(agentloop.ToolResult{CallID: p.ClientCalls[0].ID, Content: "Berlin"})
	require.NoError(t, err)
	f := drain[agentloop.Final](t, r.Stream(t.Context(), "chat-l/2", "chat-l", h))
	assert.Equal(t, "Noted: You are in Berlin.", f.Text)
	assert.Equal(t, map[string]int{"lead model 0": 1, "locator model 0": 1, "locator model 1": 1, "lead model 1": 1}, c.counts())
}

// design.md §3.10 under an engine: a sub-run's usage adds up to the run's
// Usage and AgentUsage as in process; a run replayed past the agent
// tool's step (as a recovery replays it) does not yield the sub-run's
// items again, yet counts its usage: the step recorded it.
func testSubRunUsage(t *testing.T, s *suite) {
	want := drain[agentloop.Final](t, helperAgent(&counter{}).Stream(t.Context(), user("help"), &agentloop.RunOptions{ConversationID: "chat-u"}))
	require.Equal(t, agentloop.Usage{Input: 9, Output: 4}, want.Usage)
	var c counter
	h := s.newHarness(t)
	r := h.Open(helperAgent(&c), nil)
	live := drain[agentloop.Final](t, r.Stream(t.Context(), "chat-u/1", "chat-u", user("help")))
	assert.Equal(t, want.Usage, live.Usage)
	assert.Equal(t, want.AgentUsage, live.AgentUsage)

	t.Run("AcrossAReplay", func(t *testing.T) {
		id := s.replay(t, h, "chat-u/1", "helper")
		var nested int
		replayed := drain[agentloop.Final](t, func(yield func(agentloop.Item, error) bool) {
			for it, err := range r.Stream(t.Context(), id, "", nil) {
				if _, ok := it.(*agentloop.Nested); ok {
					nested++
				}
				if !yield(it, err) {
					return
				}
			}
		})
		assert.Zero(t, nested, "the replayed step yields no sub-run items")
		assert.Equal(t, map[string]int{"lead model 0": 1, "helper model 0": 1, "lead model 1": 2}, c.counts(), "only the last model call runs again")
		assert.Equal(t, want.Usage, replayed.Usage)
		assert.Equal(t, want.AgentUsage, replayed.AgentUsage)
	})
}

// A ChatServer whose Runner is the engine's answers a chat end to end,
// saves it, and makes each model and tool call once.
func testChatServer(t *testing.T, s *suite) {
	var c counter
	agent := weatherAgent(&c)
	st := memstore.New(memstore.Options{})
	t.Cleanup(func() { _ = st.Close() })
	chat := &aisdk.ChatServer{Agent: agent, Store: st, Logger: slog.New(slog.DiscardHandler), KeepAlive: -1}
	chat.Runner = s.newHarness(t).Open(agent, chat.RunItem)
	require.NoError(t, chat.Validate())
	srv := httptest.NewServer(chat.Routes("/api"))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { assert.NoError(t, chat.Shutdown(context.Background())) })

	client := &aisdktest.ChatClient{URL: srv.URL + "/api/chat", ChatID: "chat-s"}
	msgs, err := client.Send(t.Context(), "weather?")
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	var text string
	for _, p := range msgs[1].Parts {
		text += p.Text
	}
	assert.Contains(t, text, "Sunny in both.")

	saved, err := st.GetChat(t.Context(), client.ChatID)
	require.NoError(t, err)
	end := saved.History[len(saved.History)-1]
	assert.Equal(t, agentloop.RoleAssistant, end.Role)
	assert.Equal(t, "Sunny in both.", end.Text())
	assert.Equal(t, map[string]int{"model 0": 1, "tool weather": 2, "model 1": 1}, c.counts())
}
