package toolstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/toolstate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// brokenStore fails every call, like a full disk.
type brokenStore struct{ err error }

func (b brokenStore) GetDoc(context.Context, string, string) (*store.Doc, error) { return nil, b.err }
func (b brokenStore) PutDoc(context.Context, *store.Doc) error                   { return b.err }
func (b brokenStore) DeleteDoc(context.Context, string, string, int64) error     { return b.err }

func TestTracker_StoreFailureWithOnErrorOffersEveryToolAndReports(t *testing.T) {
	diskFull := errors.New("disk full")
	var reported []error
	tr := &toolstate.Tracker{Docs: brokenStore{diskFull}, OnError: func(id string, err error) { reported = append(reported, err) }}
	model := simtest.NewModel(
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"a", "b"}}, Reply: []simtest.Step{simtest.Call("c1", "a", nil)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{okTool(t, "a"), okTool(t, "b")}}
	assert.Equal(t, "ok", runOnce(t, agent, tr, "c", "go"))
	require.Len(t, reported, 3, "two model calls and one result")
	for _, err := range reported {
		assert.ErrorIs(t, err, diskFull)
	}
}

func TestTracker_StoreFailureWithoutOnErrorCancelsTheRun(t *testing.T) {
	diskFull := errors.New("disk full")
	tr := &toolstate.Tracker{Docs: brokenStore{diskFull}}
	agent := &agentloop.Agent{Model: simtest.NewModel(), Tools: []*agentloop.Tool{okTool(t, "a")}}
	_, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, &agentloop.RunOptions{ConversationID: "c", Hooks: tr.Hooks()}))
	assert.ErrorIs(t, err, diskFull)
}

func TestTracker_ResultsOfHiddenToolsAreNotRecorded(t *testing.T) {
	clk := newClock()
	store := newDocs(t)
	require.NoError(t, toolstate.Update(context.Background(), store, "c", func(s *toolstate.State) error {
		s.Disable("a", "off", clk.Now())
		return nil
	}))
	tr := &toolstate.Tracker{Docs: store, Now: clk.Now}
	model := simtest.NewModel(
		// The model calls the hidden tool anyway; the loop answers it with an error.
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"b"}}, Reply: []simtest.Step{simtest.Call("c1", "a", nil), simtest.Call("c2", "made_up", nil)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{okTool(t, "a"), okTool(t, "b")}}
	assert.Equal(t, "ok", runOnce(t, agent, tr, "c", "go"))
	s, err := toolstate.Load(context.Background(), store, "c")
	require.NoError(t, err)
	assert.Zero(t, s.Tools["a"].Failures)
	assert.NotContains(t, s.Tools, "made_up")
}

func TestState_LongFailureDetailIsCutOnARuneBoundary(t *testing.T) {
	clk := newClock()
	s := toolstate.NewState(toolstate.Config{FailureThreshold: 1})
	s.RecordFailure("t", strings.Repeat("é", 300), clk.Now())
	r := s.Tools["t"].Reason
	assert.True(t, utf8.ValidString(r))
	assert.Less(t, len(r), 260)
	assert.True(t, strings.HasSuffix(r, "…"))
}

func TestTracker_InvalidConfigFailsTheRunNamingTheProblem(t *testing.T) {
	tr := &toolstate.Tracker{Docs: newDocs(t), Config: &toolstate.Config{FailureThreshold: -2}}
	agent := &agentloop.Agent{Model: simtest.NewModel(), Tools: []*agentloop.Tool{okTool(t, "a")}}
	_, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, &agentloop.RunOptions{ConversationID: "c", Hooks: tr.Hooks()}))
	require.ErrorIs(t, err, toolstate.ErrInvalidState)
	assert.Contains(t, err.Error(), "failure threshold -2 is negative")
}

func TestTracker_ARunWithoutAConversationIDIsReportedNotTracked(t *testing.T) {
	var reported []error
	st := newDocs(t)
	tr := &toolstate.Tracker{Docs: st, OnError: func(id string, err error) { reported = append(reported, err) }}
	model := simtest.NewModel(
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"a"}}, Reply: []simtest.Step{simtest.Call("c1", "a", nil)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{okTool(t, "a")}}
	text, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, &agentloop.RunOptions{Hooks: tr.Hooks()}))
	require.NoError(t, err)
	assert.Equal(t, "ok", text)
	require.Len(t, reported, 1, "reported once, at the run's start")
	assert.ErrorIs(t, reported[0], toolstate.ErrEmptyID)
	assert.ErrorContains(t, reported[0], "RunOptions.ConversationID")

	// Without OnError the run fails instead of going on untracked.
	tr = &toolstate.Tracker{Docs: st}
	_, err = agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, &agentloop.RunOptions{Hooks: tr.Hooks()}))
	assert.ErrorIs(t, err, toolstate.ErrEmptyID)
}

// The hooks are shared by every run: each run records in its own
// conversation.
func TestTracker_OneHooksServeEveryConversation(t *testing.T) {
	st := newDocs(t)
	tr := &toolstate.Tracker{Docs: st, Now: newClock().Now}
	agent := &agentloop.Agent{Tools: []*agentloop.Tool{failingTool(t, "flaky")}, Hooks: tr.Hooks()}
	for _, id := range []string{"c", "chat"} {
		agent.Model = simtest.NewModel(
			simtest.Turn{Reply: []simtest.Step{simtest.Call("c1", "flaky", nil)}},
			simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
		)
		_, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage(id)}, &agentloop.RunOptions{ConversationID: id}))
		require.NoError(t, err)
	}
	for _, id := range []string{"c", "chat"} {
		s, err := toolstate.Load(context.Background(), st, id)
		require.NoError(t, err)
		assert.Equal(t, 1, s.Tools["flaky"].Failures, "conversation %q", id)
	}
}

func TestTracker_NilStoreIsAnErrorNotAPanic(t *testing.T) {
	var reported []error
	tr := &toolstate.Tracker{OnError: func(id string, err error) { reported = append(reported, err) }}
	model := simtest.NewModel(simtest.Turn{Expect: simtest.Expect{Tools: []string{"a"}}, Reply: []simtest.Step{simtest.Text("ok")}})
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{okTool(t, "a")}}
	assert.Equal(t, "ok", runOnce(t, agent, tr, "c", "go"))
	require.Len(t, reported, 1)
	assert.ErrorContains(t, reported[0], "toolstate: no store")
	_, err := tr.Summary(context.Background(), "c")
	assert.ErrorContains(t, err, "toolstate: no store")
}

// Only results that say something about the tool's health are counted: the
// tool's own error and a timeout are failures; arguments that did not fit
// the schema (the model's mistake) and calls a cancel cut short are not.
func TestTracker_CountsOnlyTheToolsOwnFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newDocs(t)
		tr := &toolstate.Tracker{Docs: store, Now: newClock().Now}
		slow, err := agentloop.NewRawTool("slow", "Waits.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		})
		require.NoError(t, err)
		slow.Timeout = time.Minute // fake time: the test runs in a synctest bubble
		model := simtest.NewModel(
			simtest.Turn{Reply: []simtest.Step{
				simtest.Call("c1", "flaky", map[string]bool{"ok": false}), // the tool's own error
				simtest.Call("c2", "flaky", `{"ok": "yes"}`),              // not the schema: not counted
				simtest.Call("c3", "slow", nil),                           // timeout
			}},
			simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
		)
		agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{failingTool(t, "flaky"), slow}}
		assert.Equal(t, "ok", runOnce(t, agent, tr, "c", "go"))
		s, err := toolstate.Load(context.Background(), store, "c")
		require.NoError(t, err)
		assert.Equal(t, 1, s.Tools["flaky"].Failures, "the schema mismatch is not the tool's failure")
		assert.Equal(t, 1, s.Tools["slow"].Failures, "a timeout is a failure")

		// A call cut short by a cancel is not counted.
		ctx, cancel := context.WithCancelCause(context.Background())
		block, err := agentloop.NewRawTool("block", "Blocks.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
			cancel(agentloop.Cancel("stop"))
			<-ctx.Done()
			return "", ctx.Err()
		})
		require.NoError(t, err)
		agent = &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Call("c4", "block", nil)}}), Tools: []*agentloop.Tool{block}}
		_, err = agentloop.Drain(agent.Stream(ctx, agentloop.History{agentloop.UserMessage("x")}, &agentloop.RunOptions{ConversationID: "c", Hooks: tr.Hooks()}))
		require.ErrorIs(t, err, agentloop.ErrCancelled)
		s, err = toolstate.Load(context.Background(), store, "c")
		require.NoError(t, err)
		assert.Zero(t, s.Tools["block"].Failures)
	})
}
