package agentloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// design.md §3.2: a cancel from the range body on TurnStart comes before the model
// call: no model call, no delta, no hook but the end notifications, and the
// turn still ends with a TurnEnd that carries the error.
func TestCancel_OnTurnStartMakesNoModelCall(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("should never be said")))
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	var hooked []string
	a := &agentloop.Agent{Model: m, Hooks: &agentloop.Hooks{
		OnTextDelta: func(context.Context, string) error { hooked = append(hooked, "text"); return nil },
		OnTurnEnd: func(_ context.Context, e agentloop.TurnEnd) error {
			hooked = append(hooked, fmt.Sprintf("turn end (err: %v)", e.Err != nil))
			return nil
		},
	}}
	var items []agentloop.Item
	var err error
	for it, e := range a.Stream(ctx, user("x"), nil) {
		if e != nil {
			err = e
			break
		}
		items = append(items, it)
		if _, ok := it.(agentloop.TurnStart); ok {
			cancel(agentloop.Cancel("changed my mind"))
		}
	}
	var ce *agentloop.CancelledError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "changed my mind", ce.Reason)
	assert.Equal(t, 0, m.Calls(), "no model call after the cancel")
	assert.Equal(t, []string{"turn end (err: true)"}, hooked)
	require.Len(t, items, 2)
	end, ok := items[1].(agentloop.TurnEnd)
	require.True(t, ok, "TurnStart is balanced by a TurnEnd: %T", items[1])
	assert.ErrorIs(t, end.Err, agentloop.ErrCancelled)
	assert.Equal(t, agentloop.FinishError, end.FinishReason)
	assert.Equal(t, []agentloop.Role{"user"}, roles(ce.History), "nothing was stored for the turn")
}

// design.md §3.2: a BeforeModelCall hook that fires the caller's cancel (instead
// of returning an error) also stops the turn before the model call.
func TestCancel_FromBeforeModelCallHookMakesNoModelCall(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("never")))
	ctx, cancel := context.WithCancelCause(t.Context())
	a := &agentloop.Agent{Model: m, Hooks: &agentloop.Hooks{BeforeModelCall: func(context.Context, *agentloop.Request) error {
		cancel(agentloop.Cancel("budget exhausted"))
		return nil
	}}}
	items, err := collect(a.Stream(ctx, user("x"), nil))
	require.ErrorIs(t, err, agentloop.ErrCancelled)
	assert.Equal(t, 0, m.Calls())
	assert.Empty(t, items, "the turn was never announced")
}

// design.md §3.4: a failed model call ends its turn with a TurnEnd (and OnTurnEnd) that
// carries the run's error, so the item sequence stays balanced.
func TestTurnEnd_FailedModelCallStillEndsTheTurn(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("Half"), simtest.Fail("connection reset")))
	var hookEnd agentloop.TurnEnd
	a := &agentloop.Agent{Model: m, Hooks: &agentloop.Hooks{OnTurnEnd: func(_ context.Context, e agentloop.TurnEnd) error {
		hookEnd = e
		return nil
	}}}
	items, err := collect(a.Stream(t.Context(), user("x"), nil))
	var te *agentloop.TurnError
	require.ErrorAs(t, err, &te)
	require.Len(t, items, 3)
	assert.Equal(t, agentloop.TurnStart{Turn: 1}, items[0])
	end, ok := items[2].(agentloop.TurnEnd)
	require.True(t, ok, "%T", items[2])
	assert.Same(t, te, end.Err.(*agentloop.TurnError))
	assert.Equal(t, agentloop.FinishError, end.FinishReason)
	assert.Equal(t, "Half", end.Message.Text(), "what the model said before failing")
	assert.Equal(t, end.Err, hookEnd.Err, "OnTurnEnd sees the failure too")
}

// design.md §3.4: TurnEnd carries the history up to the turn's assistant message, capped so
// that appending to it cannot change the run's history.
func TestTurnEnd_CarriesTheHistorySoFar(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Call("c1", "echo", `{"text":"a"}`)), turn(simtest.Text("done")))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}}
	var ends []agentloop.TurnEnd
	var final agentloop.Final
	for it, err := range a.Stream(t.Context(), user("x"), nil) {
		require.NoError(t, err)
		switch it := it.(type) {
		case agentloop.TurnEnd:
			_ = append(it.History, agentloop.UserMessage("scribble")) // must not reach the run
			ends = append(ends, it)
		case agentloop.Final:
			final = it
		}
	}
	require.Len(t, ends, 2)
	assert.Equal(t, []agentloop.Role{"user", "assistant"}, roles(ends[0].History), "no tool results yet")
	assert.Equal(t, []agentloop.Role{"user", "assistant", "tool", "assistant"}, roles(ends[1].History))
	assert.Equal(t, final.History, ends[1].History)
}

// design.md §7.1: hooks come in pairs, however a step ends: OnRunStart/OnRunEnd,
// BeforeModelCall/OnTurnEnd, BeforeToolCall/AfterToolCall.
func TestHooks_ComeInPairsHoweverAStepEnds(t *testing.T) {
	type counts struct{ runStart, runEnd, before, turnEnd, beforeTool, afterTool int }
	scenarios := map[string]struct {
		turns []simtest.Turn
		stop  func(it agentloop.Item) bool // break out of the range here
		tool  agentloop.ToolFunc
	}{
		"answer":      {turns: []simtest.Turn{turn(simtest.Call("c1", "t", nil)), turn(simtest.Text("ok"))}},
		"model fails": {turns: []simtest.Turn{turn(simtest.Call("c1", "t", nil)), turn(simtest.Fail("down"))}},
		"consumer breaks in tools": {turns: []simtest.Turn{turn(simtest.Call("c1", "t", nil), simtest.Call("c2", "t", nil)), turn(simtest.Text("ok"))},
			stop: func(it agentloop.Item) bool { _, ok := it.(agentloop.ToolResultReady); return ok }},
		"consumer breaks mid-stream": {turns: []simtest.Turn{turn(simtest.Text("a b c"), simtest.Hang())},
			stop: func(it agentloop.Item) bool { _, ok := it.(agentloop.TextDelta); return ok }},
		"tool cancels": {turns: []simtest.Turn{turn(simtest.Call("c1", "t", nil)), turn(simtest.Text("never"))},
			tool: func(ctx context.Context, _ json.RawMessage) (string, error) { return "", errors.New("x") }},
	}
	for name, sc := range scenarios {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var c counts
			inc := func(p *int) { mu.Lock(); *p++; mu.Unlock() }
			hooks := &agentloop.Hooks{
				OnRunStart: func(ctx context.Context, _ agentloop.RunStart) (context.Context, error) {
					inc(&c.runStart)
					return ctx, nil
				},
				OnRunEnd:        func(context.Context, agentloop.RunEnd) { inc(&c.runEnd) },
				BeforeModelCall: func(context.Context, *agentloop.Request) error { inc(&c.before); return nil },
				OnTurnEnd:       func(context.Context, agentloop.TurnEnd) error { inc(&c.turnEnd); return nil },
				BeforeToolCall: func(context.Context, *agentloop.ToolCall) (*agentloop.ToolResult, error) {
					inc(&c.beforeTool)
					return nil, nil
				},
				AfterToolCall: func(_ context.Context, _ agentloop.ToolCall, r *agentloop.ToolResult) error {
					inc(&c.afterTool)
					if name == "tool cancels" {
						return agentloop.Cancel("tool failed")
					}
					return nil
				},
			}
			tool := sc.tool
			if tool == nil {
				tool = func(ctx context.Context, _ json.RawMessage) (string, error) { return "ok", nil }
			}
			a := &agentloop.Agent{Model: simtest.NewModel(sc.turns...), Tools: []*agentloop.Tool{rawTool(t, "t", tool)}, Hooks: hooks}
			for it, err := range a.Stream(t.Context(), user("x"), nil) {
				if err == nil && sc.stop != nil && sc.stop(it) {
					break
				}
			}
			assert.Equal(t, 1, c.runStart)
			assert.Equal(t, c.runStart, c.runEnd, "OnRunEnd pairs OnRunStart")
			assert.Positive(t, c.before)
			assert.Equal(t, c.before, c.turnEnd, "OnTurnEnd pairs BeforeModelCall")
			assert.Equal(t, c.beforeTool, c.afterTool, "AfterToolCall pairs BeforeToolCall")
		})
	}
}

// design.md §7.1: OnRunStart's context is the run's: the model, the tools and the other
// hooks see what it added, and OnRunEnd learns how the run ended.
func TestHooks_OnRunStartContextReachesModelToolsAndHooks(t *testing.T) {
	type key struct{}
	var seen []string
	see := func(ctx context.Context, where string) {
		if v, _ := ctx.Value(key{}).(string); v == "span" {
			seen = append(seen, where)
		}
	}
	inner := simtest.NewModel(turn(simtest.Call("c1", "t", nil)), turn(simtest.Text("ok")))
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		see(ctx, "model")
		return inner.Stream(ctx, req)
	})
	tool := rawTool(t, "t", func(ctx context.Context, _ json.RawMessage) (string, error) { see(ctx, "tool"); return "ok", nil })
	var end agentloop.RunEnd
	var start agentloop.RunStart
	a := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}, Hooks: &agentloop.Hooks{
		OnRunStart: func(ctx context.Context, s agentloop.RunStart) (context.Context, error) {
			start = s
			return context.WithValue(ctx, key{}, "span"), nil
		},
		BeforeModelCall: func(ctx context.Context, _ *agentloop.Request) error { see(ctx, "hook"); return nil },
		OnRunEnd:        func(ctx context.Context, e agentloop.RunEnd) { see(ctx, "end"); end = e },
	}}
	items, err := collect(a.Stream(t.Context(), user("x"), &agentloop.RunOptions{ConversationID: "chat-7"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"hook", "model", "tool", "hook", "model", "end"}, seen)
	assert.Equal(t, "chat-7", start.ConversationID)
	assert.Same(t, a, start.Agent)
	assert.False(t, start.Resumed)
	assert.Equal(t, final(t, items), end.Last)
	assert.Equal(t, 2, end.Turns)
}

// design.md §3.3: a call the loop will not run or hand out (a tool the hook did not offer,
// the tool-less last turn, a client call with bad arguments) is marked on
// its ToolCallReady, so a front end never runs it.
func TestToolCallReady_MarksCallsTheLoopRejects(t *testing.T) {
	loc := clientTool(t, "getLocation")
	t.Run("not offered", func(t *testing.T) {
		m := simtest.NewModel(turn(simtest.Call("c1", "getLocation", `{"precision":"city"}`)), turn(simtest.Text("ok")))
		a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{loc}, Hooks: &agentloop.Hooks{
			BeforeModelCall: func(_ context.Context, req *agentloop.Request) error { req.Tools = nil; return nil }}}
		items, err := collect(a.Stream(t.Context(), user("x"), nil))
		require.NoError(t, err)
		assert.ErrorIs(t, ready(t, items, "c1").Err, agentloop.ErrUnknownTool)
	})
	t.Run("tool-less last turn", func(t *testing.T) {
		m := simtest.NewModel(turn(simtest.Call("c1", "echo", `{"text":"a"}`)), turn(simtest.Call("c2", "getLocation", `{"precision":"city"}`)))
		a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo"), loc}, MaxTurns: 1, AnswerAtTurnLimit: true}
		items, err := collect(a.Stream(t.Context(), user("x"), nil))
		require.ErrorIs(t, err, agentloop.ErrTurnLimit)
		assert.NoError(t, ready(t, items, "c1").Err)
		assert.ErrorIs(t, ready(t, items, "c2").Err, agentloop.ErrUnknownTool)
	})
	t.Run("client call with invalid arguments", func(t *testing.T) {
		m := simtest.NewModel(turn(simtest.Call("c1", "getLocation", `{"precision":3}`)), turn(simtest.Text("ok")))
		items, err := collect((&agentloop.Agent{Model: m, Tools: []*agentloop.Tool{loc}}).Stream(t.Context(), user("x"), nil))
		require.NoError(t, err)
		r := ready(t, items, "c1")
		assert.True(t, r.RunsOnClient)
		assert.ErrorIs(t, r.Err, agentloop.ErrInvalidArgs)
	})
}

func ready(t *testing.T, items []agentloop.Item, id string) agentloop.ToolCallReady {
	t.Helper()
	for _, it := range items {
		if r, ok := it.(agentloop.ToolCallReady); ok && r.Call.ID == id {
			return r
		}
	}
	t.Fatalf("no ToolCallReady for %q", id)
	return agentloop.ToolCallReady{}
}
