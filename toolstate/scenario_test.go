package toolstate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/toolstate"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScenario_DependentToolOfferedOnceItsDependencySucceeded(t *testing.T) {
	clk := newClock()
	store := newDocs(t)
	tr := &toolstate.Tracker{
		Docs:   store,
		Config: &toolstate.Config{Dependencies: map[string][]string{"dependent_tool": {"base_tool"}}},
		Now:    clk.Now,
	}
	model := simtest.NewModel(
		// Run 1.
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"base_tool"}}, Reply: []simtest.Step{simtest.Call("c1", "base_tool", nil)}},
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"base_tool", "dependent_tool"}, ToolResults: map[string]string{"c1": "base_tool ok"}},
			Reply: []simtest.Step{simtest.Text("both ready")}},
		// Run 2 of the same conversation.
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"base_tool", "dependent_tool"}}, Reply: []simtest.Step{simtest.Text("still both")}},
		// Run 1 of another conversation: its base_tool has not succeeded.
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"base_tool"}}, Reply: []simtest.Step{simtest.Text("other")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{okTool(t, "base_tool"), okTool(t, "dependent_tool")}}

	assert.Equal(t, "both ready", runOnce(t, agent, tr, "chat-1", "go"))
	assert.Equal(t, "still both", runOnce(t, agent, tr, "chat-1", "again"))
	assert.Equal(t, "other", runOnce(t, agent, tr, "chat-2", "hi"))
	assert.Zero(t, model.Remaining())

	s, err := toolstate.Load(context.Background(), store, "chat-2")
	require.NoError(t, err)
	assert.Equal(t, toolstate.StatusWaiting, s.Tools["dependent_tool"].Status)
	assert.Equal(t, "waits for base_tool to succeed", s.Tools["dependent_tool"].Reason)
}

func TestScenario_FailingToolHiddenAfterThreeConsecutiveErrorsUntilResetOverHTTP(t *testing.T) {
	clk := newClock()
	store := newDocs(t)
	tr := &toolstate.Tracker{Docs: store, Now: clk.Now}
	both := []string{"failing_tool", "other_tool"}
	call := func(id string, ok bool) simtest.Turn {
		args := map[string]bool{}
		if ok {
			args["ok"] = true
		}
		return simtest.Turn{Expect: simtest.Expect{Tools: both}, Reply: []simtest.Step{simtest.Call(id, "failing_tool", args)}}
	}
	model := simtest.NewModel(
		// Run 1: fail, fail, success (resets the count), fail, fail, fail.
		call("c1", false), call("c2", false), call("c3", true), call("c4", false), call("c5", false), call("c6", false),
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"other_tool"}, ToolResults: map[string]string{"c6": "backend unreachable"}},
			Reply: []simtest.Step{simtest.Text("gave up")}},
		// Run 2: still failed.
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"other_tool"}}, Reply: []simtest.Step{simtest.Text("still hidden")}},
		// Run 3, after the reset.
		simtest.Turn{Expect: simtest.Expect{Tools: both}, Reply: []simtest.Step{simtest.Text("back")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{failingTool(t, "failing_tool"), okTool(t, "other_tool")}}

	assert.Equal(t, "gave up", runOnce(t, agent, tr, "chat-1", "try"))
	s, err := toolstate.Load(context.Background(), store, "chat-1")
	require.NoError(t, err)
	ft := s.Tools["failing_tool"]
	assert.Equal(t, toolstate.StatusFailed, ft.Status)
	assert.Equal(t, 3, ft.ConsecutiveFailures, "the success after two failures reset the count")
	assert.Equal(t, 5, ft.Failures)
	assert.Equal(t, 1, ft.Successes)
	assert.Contains(t, ft.Reason, "3 consecutive failures")
	assert.Contains(t, ft.Reason, "backend unreachable")

	assert.Equal(t, "still hidden", runOnce(t, agent, tr, "chat-1", "again"))

	srv := httptest.NewServer(toolstate.NewHandler(store, toolstate.HandlerOptions{Now: clk.Now}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/agents/chat-1/tool-states/reset", "application/json", strings.NewReader(`{"toolName":"failing_tool"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	assert.Equal(t, "back", runOnce(t, agent, tr, "chat-1", "once more"))
	assert.Zero(t, model.Remaining())
}

// Another process is another tracker over the same stored documents (on
// SQLite, store/sqlitestore's tests run replicas on one file).
func TestScenario_StatesLoadIntactInAnotherProcess(t *testing.T) {
	clk := newClock()
	id := "user 7/chat ../../etc" // any chat id
	shared := memstore.New(memstore.Options{})
	t.Cleanup(func() { _ = shared.Close() })
	store1 := shared
	require.NoError(t, store1.PutChat(context.Background(), &store.Chat{ID: id}))
	cfg := &toolstate.Config{FailureThreshold: 2, Dependencies: map[string][]string{"dependent_tool": {"base_tool"}}}
	tr := &toolstate.Tracker{Docs: store1, Config: cfg, Now: clk.Now}
	model := simtest.NewModel(
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"base_tool", "failing_tool"}}, Reply: []simtest.Step{
			simtest.Call("c1", "base_tool", nil), simtest.Call("c2", "failing_tool", nil)}},
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"base_tool", "dependent_tool", "failing_tool"}}, Reply: []simtest.Step{
			simtest.Call("c3", "failing_tool", nil)}},
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"base_tool", "dependent_tool"}}, Reply: []simtest.Step{simtest.Text("done")}},
		// After the restart.
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"base_tool", "dependent_tool"}}, Reply: []simtest.Step{simtest.Text("same")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{okTool(t, "base_tool"), okTool(t, "dependent_tool"), failingTool(t, "failing_tool")}}
	assert.Equal(t, "done", runOnce(t, agent, tr, id, "go"))
	before, err := toolstate.Load(context.Background(), store1, id)
	require.NoError(t, err)

	// A new process: the same stored documents, and a new tracker.
	store2 := shared
	after, err := toolstate.Load(context.Background(), store2, id)
	require.NoError(t, err)
	assert.Empty(t, cmp.Diff(before, after))
	assert.Equal(t, *cfg, after.Config)
	assert.Equal(t, toolstate.StatusFailed, after.Tools["failing_tool"].Status)
	assert.Equal(t, 1, after.Tools["base_tool"].Successes)

	tr2 := &toolstate.Tracker{Docs: store2, Now: clk.Now} // the stored config applies
	assert.Equal(t, "same", runOnce(t, agent, tr2, id, "again"))
	assert.Zero(t, model.Remaining())
}

func TestScenario_CorruptStateReportedAndConversationStartsFresh(t *testing.T) {
	ctx := context.Background()
	st := newDocs(t)
	const bad = `{"version":1,"states":{"x":{"status":"sideways"`
	version := corrupt(t, st, "chat-1", bad)

	_, err := toolstate.Load(ctx, st, "chat-1")
	require.ErrorIs(t, err, toolstate.ErrCorrupt)
	assert.Contains(t, err.Error(), `conversation "chat-1" (document "toolstate", version`)

	fresh, err := toolstate.LoadOrFresh(ctx, st, "chat-1", toolstate.Config{FailureThreshold: 5})
	require.ErrorIs(t, err, toolstate.ErrCorrupt)
	require.NotNil(t, fresh)
	assert.Empty(t, fresh.Tools)
	assert.Equal(t, 5, fresh.Config.FailureThreshold)

	// A run of the conversation reports the corruption, offers every tool
	// and leaves a valid state behind.
	var reported []error
	tr := &toolstate.Tracker{Docs: st, Now: newClock().Now, OnError: func(id string, err error) {
		assert.Equal(t, "chat-1", id)
		reported = append(reported, err)
	}}
	model := simtest.NewModel(
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"base_tool"}}, Reply: []simtest.Step{simtest.Call("c1", "base_tool", nil)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("fine")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{okTool(t, "base_tool")}}
	assert.Equal(t, "fine", runOnce(t, agent, tr, "chat-1", "go"))
	require.Len(t, reported, 1)
	assert.ErrorIs(t, reported[0], toolstate.ErrCorrupt)

	s, err := toolstate.Load(ctx, st, "chat-1")
	require.NoError(t, err)
	assert.Equal(t, 1, s.Tools["base_tool"].Successes)

	// The corrupt state is kept aside, not lost.
	kept, err := st.GetDoc(ctx, "chat-1", toolstate.CorruptName(toolstate.DocName, version))
	require.NoError(t, err)
	assert.Equal(t, bad, string(kept.Data))
}

func TestTracker_CorruptStateCancelsRunWithoutOnError(t *testing.T) {
	st := newDocs(t)
	corrupt(t, st, "c", `{"version":99,"states":{}}`)
	tr := &toolstate.Tracker{Docs: st}
	agent := &agentloop.Agent{Model: simtest.NewModel(), Tools: []*agentloop.Tool{okTool(t, "base_tool")}}
	_, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, &agentloop.RunOptions{ConversationID: "c", Hooks: tr.Hooks()}))
	var ce *agentloop.CancelledError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, toolstate.ErrVersion)
	assert.Contains(t, err.Error(), "version 99")
}
