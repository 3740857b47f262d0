package agentloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// design.md §3.2: a turn builds its request from the system prompt, the history so
// far and the offered tools, fires the before-model-call hook, and only then
// yields TurnStart.
func TestTurnStart_RequestHasSystemHistoryAndToolsHookFiresBeforeItem(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("hi")))
	var hookSaw []agentloop.Item // the items yielded before the hook ran
	var yielded []agentloop.Item
	a := &agentloop.Agent{Model: m, System: "Be brief.", Tools: []*agentloop.Tool{echoTool(t, "echo"), clientTool(t, "getLocation")},
		Hooks: &agentloop.Hooks{BeforeModelCall: func(ctx context.Context, req *agentloop.Request) error {
			hookSaw = append([]agentloop.Item(nil), yielded...)
			return nil
		}}}
	h := agentloop.History{agentloop.UserMessage("earlier"), {Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("ok")}}, agentloop.UserMessage("now")}
	for it, err := range a.Stream(t.Context(), h, nil) {
		require.NoError(t, err)
		yielded = append(yielded, it)
	}
	assert.Empty(t, hookSaw, "the hook runs before TurnStart is yielded")
	assert.Equal(t, agentloop.TurnStart{Turn: 1}, yielded[0])
	reqs := m.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, 1, reqs[0].Turn)
	assert.Equal(t, "Be brief.", reqs[0].System)
	assert.Equal(t, h, reqs[0].Messages)
	var names []string
	for _, d := range reqs[0].Tools {
		names = append(names, d.Name)
		assert.JSONEq(t, string(a.Tools[len(names)-1].Schema), string(d.Schema))
	}
	assert.Equal(t, []string{"echo", "getLocation"}, names, "tools are offered in the agent's order")
}

// design.md §3.3: every reasoning, text and tool-call delta is yielded as it
// arrives, in order, followed by the complete call.
func TestStreamTheModel_YieldsEveryDeltaInOrder(t *testing.T) {
	m := simtest.NewModel(
		turn(simtest.Reasoning("think first"), simtest.Text("Hello there"), simtest.Call("c1", "echo", `{"text":"x"}`), simtest.Usage(3, 4)),
		turn(simtest.Text("done")),
	)
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}}
	items, err := collect(a.Stream(t.Context(), user("hi"), nil))
	require.NoError(t, err)
	want := []agentloop.Item{
		agentloop.TurnStart{Turn: 1},
		agentloop.ReasoningDelta{Text: "think "},
		agentloop.ReasoningDelta{Text: "first"},
		agentloop.ReasoningEnd{},
		agentloop.TextDelta{Text: "Hello "},
		agentloop.TextDelta{Text: "there"},
		agentloop.ToolCallDelta{ID: "c1", Name: "echo", Args: `{"te`},
		agentloop.ToolCallDelta{ID: "c1", Name: "echo", Args: `xt":`},
		agentloop.ToolCallDelta{ID: "c1", Name: "echo", Args: `"x"}`},
		agentloop.ToolCallReady{Call: agentloop.ToolCall{ID: "c1", Name: "echo", Args: json.RawMessage(`{"text":"x"}`)}},
	}
	require.Equal(t, want, items[:len(want)])
	end, ok := items[len(want)].(agentloop.TurnEnd)
	require.True(t, ok, "usage and finish come at the end: %T", items[len(want)])
	assert.Equal(t, agentloop.FinishToolCalls, end.FinishReason)
	assert.Equal(t, agentloop.Usage{Input: 3, Output: 4}, end.Usage)
	assert.Equal(t, "done", final(t, items).Text)
}

// design.md §3.3: a provider's empty text and reasoning pieces (keep-alives, role
// announcements) are not yielded, nor passed to the delta hooks.
func TestStreamTheModel_SkipsEmptyDeltas(t *testing.T) {
	m := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			for _, c := range []agentloop.Chunk{agentloop.ReasoningDelta{}, agentloop.ReasoningDelta{Text: "hm"},
				agentloop.TextDelta{}, agentloop.TextDelta{Text: "Hi"}, agentloop.TextDelta{}} {
				if !yield(c, nil) {
					return
				}
			}
		}
	})
	var hooked []string
	a := &agentloop.Agent{Model: m, Hooks: &agentloop.Hooks{
		OnTextDelta:      func(_ context.Context, s string) error { hooked = append(hooked, "text:"+s); return nil },
		OnReasoningDelta: func(_ context.Context, s string) error { hooked = append(hooked, "reasoning:"+s); return nil },
	}}
	items, err := collect(a.Stream(t.Context(), user("hi"), nil))
	require.NoError(t, err)
	var deltas []agentloop.Item
	for _, it := range items {
		switch it.(type) {
		case agentloop.TextDelta, agentloop.ReasoningDelta:
			deltas = append(deltas, it)
		}
	}
	assert.Equal(t, []agentloop.Item{agentloop.ReasoningDelta{Text: "hm"}, agentloop.TextDelta{Text: "Hi"}}, deltas)
	assert.Equal(t, []string{"reasoning:hm", "text:Hi"}, hooked)
	assert.Equal(t, "Hi", final(t, items).Text)
}

// design.md §3.4: the turn's assistant message keeps reasoning (with signature),
// text and calls in the order produced; nothing is dropped.
func TestTurnEnd_AssistantMessageKeepsEverythingInOrder(t *testing.T) {
	m := simtest.NewModel(
		turn(simtest.Reasoning("plan"), simtest.Signature("sig-1"), simtest.Text("Calling."),
			simtest.Call("c1", "echo", map[string]string{"text": "a"}), simtest.Text("And more."),
			simtest.Call("c2", "echo", map[string]string{"text": "b"}), simtest.Usage(10, 5)),
		turn(simtest.Text("Done."), simtest.Usage(20, 3)),
	)
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}}
	items, err := collect(a.Stream(t.Context(), user("go"), nil))
	require.NoError(t, err)
	f := final(t, items)
	got := f.History[1].Parts
	want := []agentloop.Part{
		{Type: agentloop.PartReasoning, Text: "plan", Signature: "sig-1"},
		agentloop.TextPart("Calling."),
		{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "echo", Args: json.RawMessage(`{"text":"a"}`)}},
		agentloop.TextPart("And more."),
		{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c2", Name: "echo", Args: json.RawMessage(`{"text":"b"}`)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("assistant parts (-want +got):\n%s", diff)
	}
	assert.Equal(t, agentloop.Usage{Input: 30, Output: 8}, f.Usage, "usage is summed over turns")
	var ends []agentloop.TurnEnd
	for _, it := range items {
		if e, ok := it.(agentloop.TurnEnd); ok {
			ends = append(ends, e)
		}
	}
	require.Len(t, ends, 2)
	assert.Equal(t, agentloop.FinishToolCalls, ends[0].FinishReason)
	assert.Equal(t, agentloop.Usage{Input: 10, Output: 5}, ends[0].Usage)
}

// design.md §3.5 (issue 2's scenario 1): orders. Three turns; the second call uses an id from the first result.
func TestScenario1_Orders(t *testing.T) {
	getOrders := rawTool(t, "get_orders", func(ctx context.Context, _ json.RawMessage) (string, error) {
		return `[{"id":"ord-42","item":"lamp"}]`, nil
	})
	type detailArgs struct {
		ID string `json:"id"`
	}
	getDetail, err := agentloop.NewTool("get_order_detail", "Order detail.", func(ctx context.Context, a detailArgs) (map[string]string, error) {
		if a.ID != "ord-42" {
			return nil, fmt.Errorf("no order %q", a.ID)
		}
		return map[string]string{"id": a.ID, "status": "shipped"}, nil
	})
	require.NoError(t, err)
	m := simtest.NewModel(
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"get_orders", "get_order_detail"}, User: "my order"},
			Reply: []simtest.Step{simtest.Call("c1", "get_orders", nil), simtest.Usage(10, 2)}},
		simtest.Turn{ReplyFunc: func(req *agentloop.Request) ([]simtest.Step, error) {
			// Take the id from the first result, as a model would.
			last := req.Messages[len(req.Messages)-1]
			var orders []struct{ ID string }
			if err := json.Unmarshal([]byte(last.Parts[0].ToolResult.Content), &orders); err != nil {
				return nil, err
			}
			return []simtest.Step{simtest.Call("c2", "get_order_detail", map[string]string{"id": orders[0].ID}), simtest.Usage(20, 3)}, nil
		}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c2": "shipped"}},
			Reply: []simtest.Step{simtest.Text("Your lamp has shipped."), simtest.Usage(30, 4)}},
	)
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{getOrders, getDetail}}
	items, err := collect(a.Stream(t.Context(), user("Where is my order?"), nil))
	require.NoError(t, err)
	f := final(t, items)
	assert.Equal(t, "Your lamp has shipped.", f.Text)
	assert.Equal(t, agentloop.Usage{Input: 60, Output: 9}, f.Usage)
	assert.Equal(t, 3, f.Turns)
	assert.Equal(t, []agentloop.Role{"user", "assistant", "tool", "assistant", "tool", "assistant"}, roles(f.History))
	assert.Equal(t, 0, m.Remaining())
}

// design.md §3.5 (issue 2's scenario 2): a run never ends right after a tool; the model
// always answers from the results.
func TestNextTurnOrFinish_ModelAnswersFromToolResults(t *testing.T) {
	m := simtest.NewModel(
		turn(simtest.Call("c1", "echo", map[string]string{"text": "ping"})),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": `"echo":"ping"`}},
			Reply: []simtest.Step{simtest.Text("It said ping.")}},
	)
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}}
	items, err := collect(a.Stream(t.Context(), user("echo ping"), nil))
	require.NoError(t, err)
	assert.Equal(t, "It said ping.", final(t, items).Text)
	assert.Equal(t, 2, m.Calls())
}

// design.md §5.3 (issue 2's scenario 6): tools of one turn run at the same time (proved with a
// barrier: each waits until all four have started) and their results come
// back in call order although they finish in reverse order.
func TestTools_RunConcurrentlyResultsInCallOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 4
		var arrived sync.WaitGroup
		arrived.Add(n)
		allArrived := make(chan struct{})
		go func() { arrived.Wait(); close(allArrived) }()
		finished := make([]chan struct{}, n+1)
		for i := range finished {
			finished[i] = make(chan struct{})
		}
		close(finished[n])
		type idx struct {
			I int `json:"i"`
		}
		work, err := agentloop.NewTool("work", "Work.", func(ctx context.Context, a idx) (string, error) {
			arrived.Done()
			select {
			case <-allArrived:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			<-finished[a.I+1] // finish after the next call: reverse order
			defer close(finished[a.I])
			return fmt.Sprintf("result %d", a.I), nil
		})
		require.NoError(t, err)
		var steps []simtest.Step
		for i := range n {
			steps = append(steps, simtest.Call(fmt.Sprintf("c%d", i), "work", idx{I: i}))
		}
		m := simtest.NewModel(turn(steps...), turn(simtest.Text("ok")))
		a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{work}}
		// In the bubble, tools run one by one would deadlock it: the test fails at once.
		items, err := collect(a.Stream(t.Context(), user("go"), nil))
		require.NoError(t, err)
		var got []string
		for _, r := range results(items) {
			got = append(got, r.CallID+"="+r.Content)
		}
		assert.Equal(t, []string{"c0=result 0", "c1=result 1", "c2=result 2", "c3=result 3"}, got)
		tm := final(t, items).History[2]
		require.Equal(t, agentloop.RoleTool, tm.Role)
		for i, p := range tm.Parts {
			assert.Equal(t, fmt.Sprintf("c%d", i), p.ToolResult.CallID, "history keeps call order")
		}
	})
}

// design.md §5.6: a turn cut off by length does not run its tool calls; the run
// ends with ErrTruncated and a consistent history.
func TestTools_TruncatedTurnDoesNotRunToolCalls(t *testing.T) {
	var ran atomic.Bool
	tool := rawTool(t, "write", func(ctx context.Context, _ json.RawMessage) (string, error) {
		ran.Store(true)
		return "ok", nil
	})
	m := simtest.NewModel(turn(simtest.Text("Writing"), simtest.Call("c1", "write", `{"path": "/tmp/a", "content": "hal`), simtest.Finish(agentloop.FinishLength)))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{tool}}
	_, err := collect(a.Stream(t.Context(), user("write"), nil))
	require.ErrorIs(t, err, agentloop.ErrTruncated)
	var te *agentloop.TurnError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.Turn)
	assert.False(t, ran.Load(), "a half-formed call must not run")
	assert.Empty(t, te.History.Unanswered(), "every call in the error's history has a result")
	assert.True(t, resultsIn(te.History)["c1"].IsError)
}

// design.md §5.5 (issue 2's scenario 7): every failure of a tool call becomes an error
// result the model sees, and the run goes on to a text answer.
func TestErrorsAreResults(t *testing.T) {
	type addArgs struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	add, err := agentloop.NewTool("add", "Add.", func(ctx context.Context, a addArgs) (float64, error) { return a.A + a.B, nil })
	require.NoError(t, err)
	failing := rawTool(t, "failing", func(ctx context.Context, _ json.RawMessage) (string, error) {
		return "", errors.New("database is down")
	})
	panicky := rawTool(t, "panicky", func(ctx context.Context, _ json.RawMessage) (string, error) { panic("boom") })
	slow := rawTool(t, "slow", func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	slow.Timeout = time.Minute // fake time: the subtests run in a synctest bubble
	cases := []struct {
		name string
		call simtest.Step
		want string
	}{
		{"unknown tool", simtest.Call("c1", "nosuch", nil), `unknown tool "nosuch"; the available tools are: add, failing, panicky, slow`},
		{"invalid JSON", simtest.Call("c1", "add", `{"a": 1,`), "not valid JSON"},
		{"schema failure", simtest.Call("c1", "add", map[string]any{"a": "one", "b": 2}), `/properties/a: type: one has type "string", want "number"`},
		{"tool error", simtest.Call("c1", "failing", nil), "error: database is down"},
		{"tool panic", simtest.Call("c1", "panicky", nil), "the tool crashed (panic: boom)"},
		{"tool timeout", simtest.Call("c1", "slow", nil), "did not finish within 1m0s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := simtest.NewModel(turn(tc.call),
					simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": tc.want}}, Reply: []simtest.Step{simtest.Text("Sorry about that.")}})
				a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{add, failing, panicky, slow}}
				items, err := collect(a.Stream(t.Context(), user("go"), nil))
				require.NoError(t, err)
				rs := results(items)
				require.Len(t, rs, 1)
				assert.True(t, rs[0].IsError)
				assert.Contains(t, rs[0].Content, tc.want)
				assert.Equal(t, "Sorry about that.", final(t, items).Text)
			})
		})
	}
}

// design.md §6.1 (issue 2's scenario 3): a client tool pauses the run after the turn's
// server tools ran; appending its result and calling Stream again continues,
// and the model's next request holds both results.
func TestClientTools_PauseAndResume(t *testing.T) {
	m := simtest.NewModel(
		turn(simtest.Text("Let me check."), simtest.Call("c-time", "echo", map[string]string{"text": "12:00"}),
			simtest.Call("c-loc", "getLocation", map[string]string{"precision": "city"})),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c-time": "12:00", "c-loc": "Berlin"}},
			Reply: []simtest.Step{simtest.Text("It is noon in Berlin.")}},
	)
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo"), clientTool(t, "getLocation")}}
	items, err := collect(a.Stream(t.Context(), user("Where and when?"), nil))
	require.NoError(t, err)
	p := pending(t, items)
	require.Len(t, p.ClientCalls, 1)
	assert.Equal(t, "c-loc", p.ClientCalls[0].ID)
	assert.Empty(t, p.Approvals)
	assert.Equal(t, []agentloop.Role{"user", "assistant", "tool"}, roles(p.History))
	assert.Contains(t, resultsIn(p.History), "c-time", "the server tool ran before the pause")
	var ready []agentloop.ToolCallReady
	for _, it := range items {
		if r, ok := it.(agentloop.ToolCallReady); ok {
			ready = append(ready, r)
		}
	}
	require.Len(t, ready, 2)
	assert.False(t, ready[0].RunsOnClient)
	assert.True(t, ready[1].RunsOnClient)
	assert.Equal(t, 1, m.Calls())

	resumed, err := p.History.AppendResults(agentloop.ToolResult{CallID: "c-loc", Content: `{"city":"Berlin"}`})
	require.NoError(t, err)
	items, err = collect(a.Stream(t.Context(), resumed, nil))
	require.NoError(t, err)
	f := final(t, items)
	assert.Equal(t, "It is noon in Berlin.", f.Text)
	assert.Equal(t, []agentloop.Role{"user", "assistant", "tool", "tool", "assistant"}, roles(f.History))
	assert.Equal(t, "getLocation", resultsIn(f.History)["c-loc"].Name, "AppendResults fills the tool name")
}

// design.md §6.3: resuming while client calls are still unanswered yields the
// pending item again without calling the model.
func TestClientTools_ResumeWithUnansweredCallsPendsWithoutModelCall(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Call("c1", "getLocation", map[string]string{"precision": "city"})))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{clientTool(t, "getLocation")}}
	items, err := collect(a.Stream(t.Context(), user("where?"), nil))
	require.NoError(t, err)
	p := pending(t, items)

	items, err = collect(a.Stream(t.Context(), p.History, nil))
	require.NoError(t, err)
	again := pending(t, items)
	assert.Equal(t, p.ClientCalls, again.ClientCalls)
	assert.Equal(t, 1, m.Calls(), "no model call while calls are unanswered")
	assert.Len(t, items, 1, "only the pending item")
}

// design.md §6.3: a result for a call id the history never made is an error that names the id.
func TestClientTools_ResultForUnknownCallIDIsAnError(t *testing.T) {
	h := agentloop.History{
		agentloop.UserMessage("hi"),
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "forged-1", Content: "x"}}}},
	}
	m := simtest.NewModel()
	_, err := collect((&agentloop.Agent{Model: m}).Stream(t.Context(), h, nil))
	require.ErrorIs(t, err, agentloop.ErrInvalidHistory)
	assert.Contains(t, err.Error(), `"forged-1"`)
	assert.Equal(t, 0, m.Calls())
}

// design.md §6.2 (issue 2's scenario 9): approved calls run on resume, before the next
// model call; denied calls give the model a result that says so and why.
func TestApproval_ApprovedRunsDeniedExplains(t *testing.T) {
	var deleted []string
	type delArgs struct {
		Path string `json:"path"`
	}
	del, err := agentloop.NewTool("delete_file", "Delete a file.", func(ctx context.Context, a delArgs) (string, error) {
		deleted = append(deleted, a.Path)
		return "deleted " + a.Path, nil
	})
	require.NoError(t, err)
	del.NeedsApproval = true
	m := simtest.NewModel(
		turn(simtest.Call("c1", "delete_file", map[string]string{"path": "a.txt"}), simtest.Call("c2", "delete_file", map[string]string{"path": "b.txt"})),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": "deleted a.txt", "c2": "denied this tool call. Reason: keep b"}},
			Reply: []simtest.Step{simtest.Text("Deleted a.txt; b.txt kept.")}},
	)
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{del}}
	items, err := collect(a.Stream(t.Context(), user("delete a and b"), nil))
	require.NoError(t, err)
	p := pending(t, items)
	require.Len(t, p.Approvals, 2)
	assert.Empty(t, deleted, "nothing runs before approval")
	var requests []agentloop.Approval
	for _, part := range p.History[1].Parts {
		if part.Type == agentloop.PartApprovalRequest {
			requests = append(requests, *part.Approval)
		}
	}
	assert.Equal(t, []agentloop.Approval{{CallID: "c1", ID: "approval_c1"}, {CallID: "c2", ID: "approval_c2"}}, requests)

	h, err := p.History.AppendApprovals(
		agentloop.Approval{CallID: "c1", Approved: true},
		agentloop.Approval{CallID: "c2", Approved: false, Reason: "keep b"},
	)
	require.NoError(t, err)
	items, err = collect(a.Stream(t.Context(), h, nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"a.txt"}, deleted)
	f := final(t, items)
	assert.Equal(t, "Deleted a.txt; b.txt kept.", f.Text)
	var denied []bool
	for _, it := range items {
		if r, ok := it.(agentloop.ToolResultReady); ok {
			denied = append(denied, r.Denied)
		}
	}
	assert.Equal(t, []bool{false, true}, denied)
	_, isTurn := items[0].(agentloop.ToolResultReady)
	assert.True(t, isTurn, "approved calls run before the next model call")
}

// design.md §3.6 (issue 2's scenario 5): at the turn limit the run fails with the history…
func TestTurnLimit_FailsWithHistory(t *testing.T) {
	loopForever := func(req *agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Call(fmt.Sprintf("c%d", req.Turn), "echo", map[string]string{"text": "again"})}, nil
	}
	m := simtest.NewModel(simtest.Turn{ReplyFunc: loopForever}, simtest.Turn{ReplyFunc: loopForever}, simtest.Turn{ReplyFunc: loopForever})
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, MaxTurns: 2}
	_, err := collect(a.Stream(t.Context(), user("loop"), nil))
	require.ErrorIs(t, err, agentloop.ErrTurnLimit)
	var tl *agentloop.TurnLimitError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, 2, tl.Limit)
	assert.Equal(t, 2, m.Calls())
	assert.Equal(t, []agentloop.Role{"user", "assistant", "tool", "assistant", "tool"}, roles(tl.History))
	h, ok := agentloop.HistoryOf(err)
	require.True(t, ok)
	assert.Equal(t, tl.History, h)
}

// design.md §3.6: …or, when configured, makes one last call with no tools so the model answers.
func TestTurnLimit_AnswersWithoutTools(t *testing.T) {
	m := simtest.NewModel(
		turn(simtest.Call("c1", "echo", map[string]string{"text": "x"})),
		turn(simtest.Call("c2", "echo", map[string]string{"text": "y"})),
		simtest.Turn{Expect: simtest.Expect{Tools: []string{}}, Reply: []simtest.Step{simtest.Text("Here is what I found.")}},
	)
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, MaxTurns: 2, AnswerAtTurnLimit: true}
	items, err := collect(a.Stream(t.Context(), user("go"), nil))
	require.NoError(t, err)
	f := final(t, items)
	assert.Equal(t, "Here is what I found.", f.Text)
	assert.Equal(t, 3, f.Turns)
}

// design.md §7.3 (issue 2's scenario 4): a hook cancels before a tool runs; the tool never
// runs, the error carries the reason, and the history has a "cancelled" result.
func TestCancel_HookCancelsBeforeToolCall(t *testing.T) {
	var ran atomic.Bool
	tool := rawTool(t, "show_form", func(ctx context.Context, _ json.RawMessage) (string, error) {
		ran.Store(true)
		return "ok", nil
	})
	m := simtest.NewModel(turn(simtest.Text("Opening the form."), simtest.Call("c1", "show_form", nil)))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{tool}, Hooks: &agentloop.Hooks{
		BeforeToolCall: func(ctx context.Context, call *agentloop.ToolCall) (*agentloop.ToolResult, error) {
			return nil, agentloop.Cancel("frontend_tool")
		},
	}}
	_, err := collect(a.Stream(t.Context(), user("form please"), nil))
	require.ErrorIs(t, err, agentloop.ErrCancelled)
	var ce *agentloop.CancelledError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "frontend_tool", ce.Reason)
	assert.Contains(t, err.Error(), "frontend_tool")
	assert.False(t, ran.Load())
	r := resultsIn(ce.History)["c1"]
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content, "cancelled")
	assert.Empty(t, ce.History.Unanswered())
	assert.Equal(t, 1, m.Calls(), "no model call after the cancel")
}

// design.md §7.3: the caller cancels from another goroutine (a stop button) while
// the model streams; the stream sees its context cancelled and the error
// carries the reason and the partial answer.
func TestCancel_FromAnotherGoroutineStopsModelStream(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("Partial answer"), simtest.Hang()))
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	a := &agentloop.Agent{Model: m}
	var err error
	var seen string
	for it, e := range a.Stream(ctx, user("long answer"), nil) {
		if d, ok := it.(agentloop.TextDelta); ok {
			// Once the whole text was shown, the stop comes from elsewhere
			// while the model still streams.
			if seen += d.Text; seen == "Partial answer" {
				go cancel(agentloop.Cancel("user pressed stop"))
			}
		}
		err = e
	}
	var ce *agentloop.CancelledError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "user pressed stop", ce.Reason)
	assert.Equal(t, "Partial answer", ce.History.LastAssistantText(), "what the model said is kept")
	assert.Equal(t, 0, m.Open())
}

// design.md §7.3: a cancel from the consumer's own loop body, in the middle
// of a text block, is seen before the next delta: no delta follows it.
func TestCancel_FromTheLoopBodyStopsBeforeTheNextDelta(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("one two three four")))
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	a := &agentloop.Agent{Model: m}
	var seen string
	var err error
	for it, e := range a.Stream(ctx, user("x"), nil) {
		if d, ok := it.(agentloop.TextDelta); ok {
			if seen += d.Text; seen == "one two " {
				cancel(agentloop.Cancel("enough"))
			}
		}
		err = e
	}
	var ce *agentloop.CancelledError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "enough", ce.Reason)
	assert.Equal(t, "one two ", seen, "no delta after the cancel")
	assert.Equal(t, "one two ", ce.History.LastAssistantText(), "what was shown is kept")
	assert.Equal(t, 0, m.Open())
}

// design.md §7.3: the first reason given wins.
func TestCancel_FirstReasonWins(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("hi"), simtest.Hang()))
	ctx, cancel := context.WithCancelCause(t.Context())
	a := &agentloop.Agent{Model: m, Hooks: &agentloop.Hooks{OnTextDelta: func(ctx context.Context, _ string) error {
		cancel(agentloop.Cancel("first"))
		return agentloop.Cancel("second")
	}}}
	_, err := collect(a.Stream(ctx, user("x"), nil))
	var ce *agentloop.CancelledError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "first", ce.Reason)
}

// design.md §7.3: context deadlines behave like a cancel, and in-flight tools get
// "cancelled" results so the history stays resumable.
func TestCancel_ContextCancelDuringToolsGivesCancelledResults(t *testing.T) {
	started := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	blocker := rawTool(t, "block", func(tctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-tctx.Done()
		return "", tctx.Err()
	})
	go func() { <-started; cancel() }()
	m := simtest.NewModel(turn(simtest.Call("c1", "block", nil)), turn(simtest.Text("never")))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{blocker}}
	_, err := collect(a.Stream(ctx, user("x"), nil))
	require.ErrorIs(t, err, agentloop.ErrCancelled)
	require.ErrorIs(t, err, context.Canceled)
	h, ok := agentloop.HistoryOf(err)
	require.True(t, ok)
	assert.Contains(t, resultsIn(h)["c1"].Content, "cancelled: context canceled")
	assert.Equal(t, 1, m.Calls())
}

func TestCancel_ContextDeadlineIsACancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := simtest.NewModel(turn(simtest.Hang()))
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		_, err := collect((&agentloop.Agent{Model: m}).Stream(ctx, user("x"), nil))
		require.ErrorIs(t, err, agentloop.ErrCancelled)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Minute, time.Since(start), "the run ends at the deadline, not before")
	})
}

// design.md §3.7 (issue 2's scenario 8): breaking out of the range stops the model stream
// and leaks no goroutine (goleak checks every test of this package).
func TestEarlyExit_BreakClosesModelStreamAndLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := simtest.NewModel(turn(simtest.Text("one two three four"), simtest.Hang()))
	a := &agentloop.Agent{Model: m}
	n := 0
	for it, err := range a.Stream(t.Context(), user("x"), nil) {
		require.NoError(t, err)
		if _, ok := it.(agentloop.TextDelta); ok {
			if n++; n == 2 { // in the middle of the text block
				break
			}
		}
	}
	assert.Equal(t, 2, n)
	assert.Equal(t, 0, m.Open(), "the model stream was closed")
}

// design.md §3.7: breaking while tools run cancels them, and Stream returns only
// once they have returned.
func TestEarlyExit_BreakDuringToolsCancelsAndWaitsForThem(t *testing.T) {
	var returned atomic.Bool
	started := make(chan struct{})
	blocker := rawTool(t, "block", func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-ctx.Done()
		returned.Store(true)
		return "", ctx.Err()
	})
	quick := rawTool(t, "quick", func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-started // the blocker is running when this result is yielded
		return "fast", nil
	})
	m := simtest.NewModel(turn(simtest.Call("c1", "quick", nil), simtest.Call("c2", "block", nil)))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{quick, blocker}}
	for it := range a.Stream(t.Context(), user("x"), nil) {
		if _, ok := it.(agentloop.ToolResultReady); ok {
			break
		}
	}
	assert.True(t, returned.Load(), "the blocked tool saw its context cancelled and returned before Stream did")
}

// design.md §3.8: the same script and tools yield the same items, and ids the loop
// invents are deterministic.
func TestDeterminism_SameScriptSameItemsAndIDs(t *testing.T) {
	script := func() *simtest.Model {
		return simtest.NewModel(
			turn(simtest.Call("", "echo", map[string]string{"text": "a"}), simtest.Call("", "echo", map[string]string{"text": "b"}), simtest.Call("", "work", nil)),
			turn(simtest.Text("done")),
		)
	}
	work := rawTool(t, "work", func(ctx context.Context, _ json.RawMessage) (string, error) { return "w", nil })
	run := func() []agentloop.Item {
		a := &agentloop.Agent{Model: script(), Tools: []*agentloop.Tool{echoTool(t, "echo"), work}}
		items, err := collect(a.Stream(t.Context(), user("x"), nil))
		require.NoError(t, err)
		return items
	}
	first := run()
	for range 5 {
		require.Equal(t, first, run())
	}
	var ids []string
	for _, it := range first {
		if r, ok := it.(agentloop.ToolCallReady); ok {
			ids = append(ids, r.Call.ID)
		}
	}
	assert.Equal(t, []string{"call_0_0", "call_0_1", "call_0_2"}, ids)
}

// design.md §9.1: invented ids stay unique across the turns and runs of a conversation.
func TestStream_InventedIDsAreUniqueAcrossTurns(t *testing.T) {
	m := simtest.NewModel(
		turn(simtest.Call("", "echo", map[string]string{"text": "a"})),
		turn(simtest.Call("", "echo", map[string]string{"text": "b"})),
		turn(simtest.Text("done")),
	)
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}}
	items, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	h := final(t, items).History
	require.NoError(t, h.Validate())
	assert.Len(t, resultsIn(h), 2)
}

// design.md §4.2: errors of the model are wrapped with the turn they happened in.
func TestStream_ModelErrorIsWrappedWithTurn(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Call("c1", "echo", map[string]string{"text": "a"})), turn(simtest.Text("Half"), simtest.Fail("connection reset")))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}}
	_, err := collect(a.Stream(t.Context(), user("x"), nil))
	var te *agentloop.TurnError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 2, te.Turn)
	var se *simtest.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "agentloop: turn 2: simtest: turn 2: scripted error: connection reset", err.Error())
	assert.Equal(t, "Half", te.History.LastAssistantText())
}

// design.md §6.3: a user who sends a new message instead of answering a client tool: the
// dangling call gets a result so the model sees a consistent history.
func TestStream_DanglingClientCallIsAnsweredWhenUserMovesOn(t *testing.T) {
	h := agentloop.History{
		agentloop.UserMessage("where am I?"),
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "getLocation", Args: json.RawMessage(`{}`)}}}},
		agentloop.UserMessage("never mind, tell a joke"),
	}
	m := simtest.NewModel(simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": "no result"}}, Reply: []simtest.Step{simtest.Text("A joke.")}})
	items, err := collect((&agentloop.Agent{Model: m, Tools: []*agentloop.Tool{clientTool(t, "getLocation")}}).Stream(t.Context(), h, nil))
	require.NoError(t, err)
	assert.Equal(t, []agentloop.Role{"user", "assistant", "tool", "user", "assistant"}, roles(final(t, items).History))
}

// design.md §3: Stream never modifies the history it is given.
func TestStream_HistoryIsNotModified(t *testing.T) {
	h := user("hi")
	h = append(h[:1:1], agentloop.Message{})[:1]
	before := h.Clone()
	m := simtest.NewModel(turn(simtest.Text("hello")))
	_, err := collect((&agentloop.Agent{Model: m}).Stream(t.Context(), h, nil))
	require.NoError(t, err)
	assert.Equal(t, before, h)
	assert.Equal(t, agentloop.Message{}, h[:2][1], "the spare capacity of the caller's slice is untouched")
}

// design.md §3: a nil Model, two tools with one name or a schema that is not
// an object schema is one error, before the run starts.
func TestStream_ConfigurationErrors(t *testing.T) {
	_, err := collect((&agentloop.Agent{}).Stream(t.Context(), user("x"), nil))
	require.ErrorContains(t, err, "Agent.Model is nil")

	m := simtest.NewModel()
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo"), echoTool(t, "echo")}}
	_, err = collect(a.Stream(t.Context(), user("x"), nil))
	require.ErrorContains(t, err, `two tools are named "echo"`)

	bad := &agentloop.Tool{Name: "bad", Schema: json.RawMessage(`{"type":"string"}`), Func: func(context.Context, json.RawMessage) (string, error) { return "", nil }}
	_, err = collect((&agentloop.Agent{Model: m, Tools: []*agentloop.Tool{bad}}).Stream(t.Context(), user("x"), nil))
	require.ErrorContains(t, err, `tool "bad": schema type is string`)
}

// design.md §3.1: per-run options: extra tools replace same-named agent tools, and the
// system prompt can be replaced.
func TestStream_RunOptionsAddToolsAndReplaceSystem(t *testing.T) {
	m := simtest.NewModel(simtest.Turn{Expect: simtest.Expect{Tools: []string{"echo", "getLocation"}}, Reply: []simtest.Step{simtest.Text("ok")}})
	a := &agentloop.Agent{Model: m, System: "agent prompt", Tools: []*agentloop.Tool{echoTool(t, "echo")}}
	_, err := collect(a.Stream(t.Context(), user("x"), &agentloop.RunOptions{Tools: []*agentloop.Tool{clientTool(t, "getLocation"), echoTool(t, "echo")}, System: "run prompt"}))
	require.NoError(t, err)
	req := m.Requests()[0]
	assert.Equal(t, "run prompt", req.System)
	assert.Equal(t, 1, req.Turn)
}

func TestText_ReturnsFinalTextOrErrPending(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("forty-two")))
	text, err := agentloop.Text((&agentloop.Agent{Model: m}).Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	assert.Equal(t, "forty-two", text)

	m = simtest.NewModel(turn(simtest.Call("c1", "getLocation", map[string]string{"precision": "city"})))
	_, err = agentloop.Text((&agentloop.Agent{Model: m, Tools: []*agentloop.Tool{clientTool(t, "getLocation")}}).Stream(t.Context(), user("x"), nil))
	require.ErrorIs(t, err, agentloop.ErrPending)
}

// design.md §5.2: a client call whose arguments fail the tool's schema gets an error
// result instead of pausing the run.
func TestStream_ClientToolWithInvalidArgsGetsErrorResultNotPending(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Call("c1", "getLocation", map[string]int{"precision": 3})),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": `/properties/precision: type: 3 has type "integer", want "string"`}}, Reply: []simtest.Step{simtest.Text("retrying")}})
	items, err := collect((&agentloop.Agent{Model: m, Tools: []*agentloop.Tool{clientTool(t, "getLocation")}}).Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	assert.Equal(t, "retrying", final(t, items).Text)
	assert.True(t, strings.Contains(results(items)[0].Content, "precision") || strings.Contains(results(items)[0].Content, "string"))
}

func TestDeniedContent_NamesTheReasonWhenGiven(t *testing.T) {
	assert.Equal(t, "The user denied this tool call.", agentloop.DeniedContent(""))
	assert.Equal(t, "The user denied this tool call. Reason: keep b", agentloop.DeniedContent("keep b"))
}

// design.md §4.1: a TextDelta the model has boxed already is yielded as the
// same value: the loop adds no allocation per delta (only its text buffer
// grows, a few times per turn).
func TestStream_PassesBoxedTextDeltasOnWithoutAnAllocationPerDelta(t *testing.T) {
	delta := agentloop.Chunk(agentloop.TextDelta{Text: "ab "})
	model := func(n int) agentloop.Model {
		return agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				for range n {
					if !yield(delta, nil) {
						return
					}
				}
			}
		})
	}
	allocs := func(n int) float64 {
		a := &agentloop.Agent{Model: model(n)}
		history := user("x")
		return testing.AllocsPerRun(20, func() {
			for range a.Stream(context.Background(), history, nil) {
			}
		})
	}
	few, many := allocs(1000), allocs(9000)
	assert.LessOrEqual(t, many-few, 8.0, "8,000 more deltas: %v allocations, then %v", few, many)
}
