package agentloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// design.md §7.1: the before-model-call hook can narrow the offered tools; the model may
// then only run those.
func TestHooks_BeforeModelCallNarrowsToolsForThatCall(t *testing.T) {
	m := simtest.NewModel(
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"safe"}}, Reply: []simtest.Step{simtest.Call("c1", "danger", map[string]string{"text": "x"})}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": `unknown tool "danger"`}}, Reply: []simtest.Step{simtest.Text("ok")}},
	)
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "safe"), echoTool(t, "danger")}, Hooks: &agentloop.Hooks{
		BeforeModelCall: func(ctx context.Context, req *agentloop.Request) error {
			req.Tools = req.Tools[:1]
			return nil
		},
	}}
	_, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
}

// design.md §7.1: BeforeToolCall skips a tool with a substitute result, or rewrites its
// arguments.
func TestHooks_BeforeToolCallSubstitutesOrRewrites(t *testing.T) {
	m := simtest.NewModel(
		turn(simtest.Call("c1", "echo", map[string]string{"text": "cached?"}), simtest.Call("c2", "echo", map[string]string{"text": "secret"})),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": "from cache", "c2": `"echo":"[redacted]"`}}, Reply: []simtest.Step{simtest.Text("ok")}},
	)
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, Hooks: &agentloop.Hooks{
		BeforeToolCall: func(ctx context.Context, call *agentloop.ToolCall) (*agentloop.ToolResult, error) {
			if call.ID == "c1" {
				return &agentloop.ToolResult{Content: "from cache"}, nil
			}
			call.Args = json.RawMessage(`{"text":"[redacted]"}`)
			return nil, nil
		},
	}}
	items, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	rs := results(items)
	assert.Equal(t, agentloop.ToolResult{CallID: "c1", Name: "echo", Content: "from cache"}, rs[0], "the substitute gets the call's id and name")
}

// design.md §7.1: the hooks see every step of a run, in order.
func TestHooks_SeeEveryStepInOrder(t *testing.T) {
	var mu sync.Mutex
	var events []string
	add := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, s)
	}
	h := &agentloop.Hooks{
		BeforeModelCall:  func(ctx context.Context, req *agentloop.Request) error { add("model"); return nil },
		OnTextDelta:      func(ctx context.Context, text string) error { add("text:" + text); return nil },
		OnReasoningDelta: func(ctx context.Context, text string) error { add("reasoning:" + text); return nil },
		OnToolCallDelta:  func(ctx context.Context, d agentloop.ToolCallDelta) error { add("delta:" + d.ID); return nil },
		BeforeToolCall: func(ctx context.Context, call *agentloop.ToolCall) (*agentloop.ToolResult, error) {
			add("before:" + call.ID)
			return nil, nil
		},
		AfterToolCall: func(ctx context.Context, call agentloop.ToolCall, r *agentloop.ToolResult) error {
			add("after:" + r.CallID)
			return nil
		},
		OnTurnEnd: func(ctx context.Context, end agentloop.TurnEnd) error {
			add("end:" + string(end.FinishReason))
			return nil
		},
	}
	m := simtest.NewModel(turn(simtest.Reasoning("hm"), simtest.Call("c1", "echo", `{"text":"a"}`)), turn(simtest.Text("do"), simtest.Text("ne")))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, Hooks: h}
	_, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"model", "reasoning:hm", "delta:c1", "delta:c1", "delta:c1", "end:tool_calls",
		"before:c1", "after:c1",
		"model", "text:do", "text:ne", "end:stop", // every delta of a text block
	}, events)
}

// design.md §7.2: composed hooks run in order, and the first error stops the chain.
func TestComposeHooks_RunsInOrderAndStopsAtFirstError(t *testing.T) {
	var order []string
	first := &agentloop.Hooks{OnTurnEnd: func(context.Context, agentloop.TurnEnd) error { order = append(order, "first"); return nil }}
	failing := &agentloop.Hooks{OnTurnEnd: func(context.Context, agentloop.TurnEnd) error {
		order = append(order, "failing")
		return errors.New("quota exceeded")
	}}
	never := &agentloop.Hooks{OnTurnEnd: func(context.Context, agentloop.TurnEnd) error { order = append(order, "never"); return nil }}
	m := simtest.NewModel(turn(simtest.Text("hi")))
	a := &agentloop.Agent{Model: m, Hooks: agentloop.ComposeHooks(first, nil, failing)}
	_, err := collect(a.Stream(t.Context(), user("x"), &agentloop.RunOptions{Hooks: never}))
	var ce *agentloop.CancelledError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "quota exceeded", ce.Reason)
	assert.Equal(t, []string{"first", "failing"}, order)
	assert.Nil(t, agentloop.ComposeHooks(nil, nil))
}

// design.md §7.1: AfterToolCall may change the result before it is recorded.
func TestHooks_AfterToolCallCanRewriteTheResult(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Call("c1", "echo", `{"text":"long output"}`)),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": "truncated"}}, Reply: []simtest.Step{simtest.Text("ok")}})
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, Hooks: &agentloop.Hooks{
		AfterToolCall: func(ctx context.Context, call agentloop.ToolCall, r *agentloop.ToolResult) error {
			r.Content = "truncated"
			return nil
		},
	}}
	_, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
}

// design.md §6.2: denied calls never ran, so they tell nothing about the tool: AfterToolCall
// does not see them (toolstate relies on this).
func TestHooks_AfterToolCallSkipsDeniedCalls(t *testing.T) {
	del := echoTool(t, "delete")
	del.NeedsApproval = true
	var seen []string
	hooks := &agentloop.Hooks{AfterToolCall: func(ctx context.Context, call agentloop.ToolCall, r *agentloop.ToolResult) error {
		seen = append(seen, call.ID)
		return nil
	}}
	m := simtest.NewModel(turn(simtest.Call("c1", "delete", `{"text":"a"}`), simtest.Call("c2", "delete", `{"text":"b"}`)), turn(simtest.Text("ok")))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{del}, Hooks: hooks}
	last, err := agentloop.Drain(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	h, err := last.(agentloop.Pending).History.AppendApprovals(
		agentloop.Approval{CallID: "c1", Approved: true}, agentloop.Approval{CallID: "c2", Approved: false})
	require.NoError(t, err)
	items, err := collect(a.Stream(t.Context(), h, nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"c1"}, seen)
	assert.True(t, results(items)[1].IsError, "a denied call's result is an error result")
}

// design.md §7.1: a tool the hook did not offer this turn is neither marked client nor run.
func TestHooks_NarrowedClientToolIsNotPending(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Call("c1", "getLocation", `{"precision":"city"}`)),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": "no tools are available now"}}, Reply: []simtest.Step{simtest.Text("ok")}})
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{clientTool(t, "getLocation")}, Hooks: &agentloop.Hooks{
		BeforeModelCall: func(ctx context.Context, req *agentloop.Request) error { req.Tools = nil; return nil },
	}}
	items, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	for _, it := range items {
		if r, ok := it.(agentloop.ToolCallReady); ok {
			assert.False(t, r.RunsOnClient)
		}
	}
	assert.Equal(t, "ok", final(t, items).Text)
}

// design.md §7.1: a hook that edits req.Messages in place changes that call only.
func TestHooks_EditingRequestMessagesDoesNotChangeHistory(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("ok")))
	a := &agentloop.Agent{Model: m, Hooks: &agentloop.Hooks{BeforeModelCall: func(ctx context.Context, req *agentloop.Request) error {
		req.Messages[0].Parts[0].Text = "[redacted]"
		return nil
	}}}
	items, err := collect(a.Stream(t.Context(), user("my password is hunter2"), nil))
	require.NoError(t, err)
	assert.Equal(t, "[redacted]", m.Requests()[0].Messages[0].Text())
	assert.Equal(t, "my password is hunter2", final(t, items).History[0].Text())
}

// design.md §7.3: OnTextDelta cancels in the middle of a text block: the
// delta it refused is not yielded, nor anything after it.
func TestHooks_OnTextDeltaCancelsInTheMiddleOfABlock(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("one two three")))
	a := &agentloop.Agent{Model: m, Hooks: &agentloop.Hooks{OnTextDelta: func(_ context.Context, text string) error {
		if text == "two " {
			return agentloop.Cancel("stop here")
		}
		return nil
	}}}
	items, err := collect(a.Stream(t.Context(), user("x"), nil))
	var ce *agentloop.CancelledError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "stop here", ce.Reason)
	var shown []string
	for _, it := range items {
		if d, ok := it.(agentloop.TextDelta); ok {
			shown = append(shown, d.Text)
		}
	}
	assert.Equal(t, []string{"one "}, shown)
	assert.Equal(t, 0, m.Open())
}

// design.md §7.3: every hook point can cancel the run with a reason: the run stops before
// its next side effect, and the error's history has a result for every call.
func TestHooks_EveryPointCanCancelWithAReason(t *testing.T) {
	stop := agentloop.Cancel("stop here")
	cases := []struct {
		name       string
		hooks      agentloop.Hooks
		modelCalls int  // model calls made before the run stopped
		toolRan    bool // the echo tool ran
		answered   bool // the history holds the turn's call (with a result)
	}{
		{"BeforeModelCall", agentloop.Hooks{BeforeModelCall: func(context.Context, *agentloop.Request) error { return stop }}, 0, false, false},
		{"OnReasoningDelta", agentloop.Hooks{OnReasoningDelta: func(context.Context, string) error { return stop }}, 1, false, false},
		{"OnTextDelta", agentloop.Hooks{OnTextDelta: func(context.Context, string) error { return stop }}, 1, false, false},
		{"OnToolCallDelta", agentloop.Hooks{OnToolCallDelta: func(context.Context, agentloop.ToolCallDelta) error { return stop }}, 1, false, false},
		{"OnTurnEnd", agentloop.Hooks{OnTurnEnd: func(context.Context, agentloop.TurnEnd) error { return stop }}, 1, false, true},
		{"BeforeToolCall", agentloop.Hooks{BeforeToolCall: func(context.Context, *agentloop.ToolCall) (*agentloop.ToolResult, error) { return nil, stop }}, 1, false, true},
		{"AfterToolCall", agentloop.Hooks{AfterToolCall: func(context.Context, agentloop.ToolCall, *agentloop.ToolResult) error { return stop }}, 1, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ran bool
			tool := rawTool(t, "echo", func(context.Context, json.RawMessage) (string, error) { ran = true; return "echoed", nil })
			m := simtest.NewModel(
				turn(simtest.Reasoning("hm"), simtest.Text("Calling."), simtest.Call("c1", "echo", `{"text":"a"}`)),
				turn(simtest.Text("never")),
			)
			a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{tool}, Hooks: &tc.hooks}
			_, err := collect(a.Stream(t.Context(), user("x"), nil))
			var ce *agentloop.CancelledError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "stop here", ce.Reason)
			assert.ErrorIs(t, err, stop, "the hook's error is the cause")
			assert.Equal(t, tc.modelCalls, m.Calls())
			assert.Equal(t, tc.toolRan, ran)
			require.NoError(t, ce.History.Validate())
			assert.Empty(t, ce.History.Unanswered(), "every call in the history has a result")
			r, ok := resultsIn(ce.History)["c1"]
			assert.Equal(t, tc.answered, ok)
			if tc.answered && !tc.toolRan {
				assert.Equal(t, "cancelled: stop here", r.Content)
			}
		})
	}
}

// design.md §7.2: composed BeforeToolCall hooks run in order: a later hook sees the
// arguments an earlier one rewrote, and the first substitute result ends
// the chain.
func TestComposeHooks_BeforeToolCallSeesEarlierRewritesFirstSubstituteWins(t *testing.T) {
	var order []string
	rewrite := &agentloop.Hooks{BeforeToolCall: func(_ context.Context, call *agentloop.ToolCall) (*agentloop.ToolResult, error) {
		order = append(order, "rewrite")
		call.Args = json.RawMessage(`{"text":"rewritten"}`)
		return nil, nil
	}}
	substitute := &agentloop.Hooks{BeforeToolCall: func(_ context.Context, call *agentloop.ToolCall) (*agentloop.ToolResult, error) {
		order = append(order, "substitute saw "+string(call.Args))
		return &agentloop.ToolResult{Content: "substituted"}, nil
	}}
	never := &agentloop.Hooks{BeforeToolCall: func(context.Context, *agentloop.ToolCall) (*agentloop.ToolResult, error) {
		order = append(order, "never")
		return nil, nil
	}}
	m := simtest.NewModel(turn(simtest.Call("c1", "echo", `{"text":"a"}`)),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": "substituted"}}, Reply: []simtest.Step{simtest.Text("ok")}})
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, Hooks: agentloop.ComposeHooks(rewrite, substitute, never)}
	_, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"rewrite", `substitute saw {"text":"rewritten"}`}, order)
}

// design.md §7.1: a BeforeModelCall hook gets a deep copy: redacting a tool result or
// renaming a call in req changes what the model is sent, never the run's
// or the caller's history.
func TestHooks_BeforeModelCallEditsNeverReachTheHistory(t *testing.T) {
	history := func() agentloop.History {
		return agentloop.History{
			agentloop.UserMessage("look me up"),
			{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "lookup", Args: json.RawMessage(`{"q":"me"}`)}}}},
			{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Name: "lookup", Content: "SSN 123"}}}},
		}
	}
	h, before := history(), history()
	m := simtest.NewModel(turn(simtest.Text("done")))
	a := &agentloop.Agent{Model: m, Hooks: &agentloop.Hooks{BeforeModelCall: func(_ context.Context, req *agentloop.Request) error {
		req.Messages[2].Parts[0].ToolResult.Content = "[redacted]"
		req.Messages[1].Parts[0].ToolCall.Name = "renamed"
		req.Messages[1].Parts[0].ToolCall.Args[2] = 'Q'
		return nil
	}}}
	items, err := collect(a.Stream(t.Context(), h, nil))
	require.NoError(t, err)
	sent := m.Requests()[0].Messages
	assert.Equal(t, "[redacted]", sent[2].Parts[0].ToolResult.Content)
	assert.Equal(t, "renamed", sent[1].Parts[0].ToolCall.Name)
	assert.Equal(t, before, h, "the caller's history")
	assert.Equal(t, before, final(t, items).History[:3], "the run's history")
}

// design.md §7.1: without a BeforeModelCall hook the request shares the run's messages: a
// run copies nothing per turn.
func TestHooks_WithoutBeforeModelCallNothingIsCopied(t *testing.T) {
	h := user("hi")
	inner := simtest.NewModel(turn(simtest.Text("hello")))
	var sent agentloop.History
	m := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		sent = req.Messages
		return inner.Stream(ctx, req)
	})
	_, err := collect((&agentloop.Agent{Model: m}).Stream(t.Context(), h, nil))
	require.NoError(t, err)
	assert.Same(t, &h[0].Parts[0], &sent[0].Parts[0])
}

// design.md §19.6: each BeforeModelCall gets the history as it is, whatever the hook did to
// the copy it got on an earlier turn (the loop reuses unchanged copies).
func TestHooks_BeforeModelCallEditsLastOneCallEvenWhenCopiesAreReused(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Call("c1", "echo", `{"text":"a"}`)), turn(simtest.Call("c2", "echo", `{"text":"b"}`)), turn(simtest.Text("done")))
	var seen []string
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, Hooks: &agentloop.Hooks{
		BeforeModelCall: func(_ context.Context, req *agentloop.Request) error {
			seen = append(seen, req.Messages[0].Parts[0].Text)
			req.Messages[0].Parts[0].Text = "[redacted]"
			if len(req.Messages) > 2 {
				seen = append(seen, req.Messages[2].Parts[0].ToolResult.Content)
				req.Messages[2].Parts[0].ToolResult.Content = "[gone]"
				req.Messages[1].Parts = nil
			}
			return nil
		},
	}}
	items, err := collect(a.Stream(t.Context(), user("secret"), nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"secret", "secret", `{"echo":"a"}`, "secret", `{"echo":"a"}`}, seen)
	h := final(t, items).History
	assert.Equal(t, "secret", h[0].Text())
	assert.Len(t, h[1].Parts, 1)
	for _, r := range m.Requests() {
		assert.Equal(t, "[redacted]", r.Messages[0].Text(), "the model got the edit")
	}
}

// design.md §7.1: ToolContext gives each call's func a context of its own, also when calls
// of one tool run at the same time; a panic in it cancels the run.
func TestHooks_ToolContextReachesTheToolsFunc(t *testing.T) {
	type key struct{}
	var mu sync.Mutex
	got := map[string]string{}
	tool := rawTool(t, "t", func(ctx context.Context, _ json.RawMessage) (string, error) {
		v, _ := ctx.Value(key{}).(string)
		mu.Lock()
		got[v] = "ran"
		mu.Unlock()
		return "ok", nil
	})
	m := simtest.NewModel(turn(simtest.Call("c1", "t", nil), simtest.Call("c2", "t", nil)), turn(simtest.Text("done")))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{tool}, Hooks: agentloop.ComposeHooks(
		&agentloop.Hooks{ToolContext: func(ctx context.Context, call agentloop.ToolCall) context.Context {
			return context.WithValue(ctx, key{}, "span of "+call.ID)
		}},
		&agentloop.Hooks{ToolContext: func(ctx context.Context, call agentloop.ToolCall) context.Context {
			return nil // keeps what the hook before returned
		}},
	)}
	_, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"span of c1": "ran", "span of c2": "ran"}, got)

	a.Model = simtest.NewModel(turn(simtest.Call("c1", "t", nil)), turn(simtest.Text("never")))
	a.Hooks = &agentloop.Hooks{ToolContext: func(context.Context, agentloop.ToolCall) context.Context { panic("boom") }}
	_, err = collect(a.Stream(t.Context(), user("x"), nil))
	var hp *agentloop.HookPanicError
	require.ErrorAs(t, err, &hp)
	assert.Equal(t, "ToolContext", hp.Hook)
}
