package agentloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

// journal is a toy durable engine: it records each step's result by its
// idempotency key (through JSON, as a database would) and replays it.
type journal struct {
	mu      sync.Mutex
	results map[string][]byte
	order   []agentloop.Step // steps in the order Model and Tool were called
	limit   int              // record at most this many steps; 0: all
}

func (j *journal) lookup(s agentloop.Step, out any) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.order = append(j.order, s)
	b, ok := j.results[s.IdempotencyKey()]
	if ok {
		if err := json.Unmarshal(b, out); err != nil {
			panic(err)
		}
	}
	return ok
}

func (j *journal) record(s agentloop.Step, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.results == nil {
		j.results = make(map[string][]byte)
	}
	if j.limit == 0 || len(j.results) < j.limit {
		j.results[s.IdempotencyKey()] = b
	}
}

func (j *journal) Model(ctx context.Context, s agentloop.Step, call func() (agentloop.ModelReply, error)) (agentloop.ModelReply, error) {
	var rep agentloop.ModelReply
	if j.lookup(s, &rep) {
		return rep, nil
	}
	rep, err := call()
	if err == nil {
		j.record(s, rep)
	}
	return rep, err
}

// journalTool is a tool step's record: the result, and the pause of an
// agent tool's sub-run, which the result's JSON does not carry.
type journalTool struct {
	Result agentloop.ToolResult   `json:"result"`
	Paused *agentloop.SubRunPause `json:"paused,omitempty"`
}

func (j *journal) Tool(ctx context.Context, s agentloop.Step, call func() agentloop.ToolResult, done func(agentloop.ToolResult)) {
	var rec journalTool
	if j.lookup(s, &rec) {
		if rec.Paused != nil {
			rec.Result = rec.Paused.Result(rec.Result)
		}
		done(rec.Result)
		return
	}
	go func() {
		res := call()
		j.record(s, journalTool{Result: res, Paused: agentloop.PausedSubRun(res)})
		done(res)
	}()
}

// durableAgent returns an agent whose model calls two tools on its first
// turn, one on its second, then answers; it counts model and tool calls.
func durableAgent(t *testing.T, modelCalls, toolCalls *atomic.Int32, keys *sync.Map) *agentloop.Agent {
	t.Helper()
	tool, err := agentloop.NewRawTool("mark", "Marks.", nil, func(ctx context.Context, args json.RawMessage) (string, error) {
		toolCalls.Add(1)
		keys.Store(agentloop.IdempotencyKey(ctx), true)
		return "marked " + string(args), nil
	})
	require.NoError(t, err)
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			modelCalls.Add(1)
			replies := 0
			for _, m := range req.Messages {
				if m.Role == agentloop.RoleAssistant {
					replies++
				}
			}
			var chunks []agentloop.Chunk
			switch replies {
			case 0:
				chunks = []agentloop.Chunk{agentloop.ReasoningDelta{Text: "think"}, agentloop.ReasoningEnd{Signature: "sig"},
					agentloop.TextDelta{Text: "let me "}, agentloop.TextDelta{Text: "see"},
					agentloop.ToolCall{Name: "mark", Args: json.RawMessage(`{"n":1}`)},
					agentloop.ToolCall{Name: "mark", Args: json.RawMessage(`{"n":2}`)},
					agentloop.Usage{Input: 3, Output: 4}}
			case 1:
				chunks = []agentloop.Chunk{agentloop.ToolCall{ID: "srv", Name: "mark", Args: json.RawMessage(`{"n":3}`)}}
			default:
				chunks = []agentloop.Chunk{agentloop.TextDelta{Text: "done"}, agentloop.Finish{Reason: agentloop.FinishStop}}
			}
			for _, c := range chunks {
				if !yield(c, nil) {
					return
				}
			}
		}
	})
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}}
}

func TestEffects_ReplayRunsNoRecordedStepAgainAndEndsTheSame(t *testing.T) {
	var modelCalls, toolCalls atomic.Int32
	var keys sync.Map
	a := durableAgent(t, &modelCalls, &toolCalls, &keys)
	j := &journal{}
	run := func() []agentloop.Item {
		items, err := collect(a.Stream(context.Background(), user("go"), &agentloop.RunOptions{ConversationID: "chat-1", Effects: j}))
		require.NoError(t, err)
		return items
	}
	first := run()
	require.Equal(t, int32(3), modelCalls.Load())
	require.Equal(t, int32(3), toolCalls.Load())
	j.order = nil

	second := run()
	assert.Equal(t, int32(3), modelCalls.Load(), "a recorded model call ran again")
	assert.Equal(t, int32(3), toolCalls.Load(), "a recorded tool call ran again")
	f1, f2 := final(t, first), final(t, second)
	if d := cmp.Diff(f1.History, f2.History); d != "" {
		t.Errorf("replayed history differs (-live +replayed):\n%s", d)
	}
	assert.Equal(t, f1.Usage, f2.Usage)
	assert.Equal(t, results(first), results(second))
	// The steps, in order: model, two tools, model, tool, model.
	want := []agentloop.Step{
		{ConversationID: "chat-1", Turn: 1},
		{ConversationID: "chat-1", Turn: 1, CallID: "call_0_0", Name: "mark"},
		{ConversationID: "chat-1", Turn: 1, CallID: "call_0_1", Name: "mark"},
		{ConversationID: "chat-1", Turn: 2},
		{ConversationID: "chat-1", Turn: 2, CallID: "srv", Name: "mark"},
		{ConversationID: "chat-1", Turn: 3},
	}
	if d := cmp.Diff(want, j.order); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	// The replay yields the turn's items in whole parts.
	var texts []string
	for _, it := range second {
		if d, ok := it.(agentloop.TextDelta); ok {
			texts = append(texts, d.Text)
		}
	}
	assert.Equal(t, []string{"let me see", "done"}, texts)
}

func TestEffects_RecoveryRunsOnlyTheStepsWithoutAResult(t *testing.T) {
	var modelCalls, toolCalls atomic.Int32
	var keys sync.Map
	a := durableAgent(t, &modelCalls, &toolCalls, &keys)
	j := &journal{limit: 2} // the "process" died after the first model call and one tool call
	_, err := collect(a.Stream(context.Background(), user("go"), &agentloop.RunOptions{Effects: j}))
	require.NoError(t, err)
	j.limit = 0
	modelCalls.Store(0)
	toolCalls.Store(0)

	items, err := collect(a.Stream(context.Background(), user("go"), &agentloop.RunOptions{Effects: j}))
	require.NoError(t, err)
	assert.Equal(t, "done", final(t, items).Text)
	assert.Equal(t, int32(2), modelCalls.Load(), "model calls after the first recorded one")
	assert.Equal(t, int32(2), toolCalls.Load(), "the unrecorded tool calls of turn 1 and 2")
}

func TestIdempotencyKey_IsTheStepsKeyAndStableAcrossRuns(t *testing.T) {
	var modelCalls, toolCalls atomic.Int32
	var inProcess, durable sync.Map
	a := durableAgent(t, &modelCalls, &toolCalls, &inProcess)
	_, err := collect(a.Stream(context.Background(), user("go"), &agentloop.RunOptions{ConversationID: "c"}))
	require.NoError(t, err)
	a = durableAgent(t, &modelCalls, &toolCalls, &durable)
	_, err = collect(a.Stream(context.Background(), user("go"), &agentloop.RunOptions{ConversationID: "c", Effects: &journal{}}))
	require.NoError(t, err)

	want := map[any]any{}
	for _, id := range []string{"call_0_0", "call_0_1"} {
		want[agentloop.Step{ConversationID: "c", Turn: 1, CallID: id}.IdempotencyKey()] = true
	}
	want[agentloop.Step{ConversationID: "c", Turn: 2, CallID: "srv"}.IdempotencyKey()] = true
	for name, m := range map[string]*sync.Map{"in process": &inProcess, "with effects": &durable} {
		got := map[any]any{}
		m.Range(func(k, v any) bool { got[k] = v; return true })
		assert.Equal(t, want, got, name)
	}
	assert.Empty(t, agentloop.IdempotencyKey(context.Background()), "outside a tool call")
	assert.NotEqual(t, agentloop.Step{ConversationID: "a", Turn: 12}.IdempotencyKey(),
		agentloop.Step{ConversationID: "a1", Turn: 2}.IdempotencyKey(), "fields are delimited")
}

// callsTools returns a model that calls the tool n times on its first
// turn, then answers "ok".
func callsTools(name string, n int) agentloop.Model {
	return agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if req.Turn > 1 {
				yield(agentloop.TextDelta{Text: "ok"}, nil)
				return
			}
			for range n {
				if !yield(agentloop.ToolCall{Name: name, Args: json.RawMessage(`{}`)}, nil) {
					return
				}
			}
		}
	})
}

func TestEffects_ToolsKeepTheirConcurrencyBoundProgressAndGoexitRule(t *testing.T) {
	var running, most atomic.Int32
	tool, err := agentloop.NewRawTool("t", "T.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if err := agentloop.ReportProgress(ctx, "half"); err != nil {
			return "", err
		}
		if agentloop.IdempotencyKey(ctx) == (agentloop.Step{Turn: 1, CallID: "call_0_2"}).IdempotencyKey() {
			runtime.Goexit()
		}
		return "done", nil
	})
	require.NoError(t, err)
	a := &agentloop.Agent{Model: callsTools("t", 4), Tools: []*agentloop.Tool{tool}, ToolConcurrency: 2}
	items, err := collect(a.Stream(context.Background(), user("go"), &agentloop.RunOptions{Effects: &journal{}}))
	require.NoError(t, err)
	assert.LessOrEqual(t, most.Load(), int32(2), "ToolConcurrency")
	progress := 0
	for _, it := range items {
		if _, ok := it.(agentloop.ToolProgress); ok {
			progress++
		}
	}
	assert.Equal(t, 4, progress)
	res := results(items)
	require.Len(t, res, 4)
	assert.True(t, res[2].IsError, "the call that called runtime.Goexit gets an error result")
	assert.Contains(t, res[2].Content, "runtime.Goexit")
	assert.Equal(t, "ok", final(t, items).Text)
}

func TestEffects_ACancelAndAStopEndTheRunOnceEveryStepEnded(t *testing.T) {
	started := make(chan struct{}, 2)
	block, err := agentloop.NewRawTool("block", "Blocks.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	})
	require.NoError(t, err)
	a := &agentloop.Agent{Model: callsTools("block", 2), Tools: []*agentloop.Tool{block}}

	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		<-started
		<-started
		cancel(agentloop.Cancel("stop button"))
	}()
	_, err = collect(a.Stream(ctx, user("go"), &agentloop.RunOptions{Effects: &journal{}}))
	var ce *agentloop.CancelledError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "stop button", ce.Reason)
	assert.Empty(t, ce.History.Unanswered())

	// The consumer stops ranging at the first result: the run returns
	// once both steps ended (goleak checks no goroutine is left).
	fast, err := agentloop.NewRawTool("block", "Answers at once, then blocks.", nil, func(ctx context.Context, args json.RawMessage) (string, error) {
		if agentloop.IdempotencyKey(ctx) == (agentloop.Step{Turn: 1, CallID: "call_0_0"}).IdempotencyKey() {
			return "first", nil
		}
		<-ctx.Done()
		return "", ctx.Err()
	})
	require.NoError(t, err)
	a.Tools = []*agentloop.Tool{fast}
	for it := range a.Stream(context.Background(), user("go"), &agentloop.RunOptions{Effects: &journal{}}) {
		if _, ok := it.(agentloop.ToolResultReady); ok {
			break
		}
	}
}

func TestEffects_AFailedModelCallKeepsItsErrorAndPartialReply(t *testing.T) {
	boom := errors.New("boom")
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if yield(agentloop.TextDelta{Text: "partial"}, nil) {
				yield(nil, boom)
			}
		}
	})
	j := &journal{}
	_, err := collect((&agentloop.Agent{Model: model}).Stream(context.Background(), user("go"), &agentloop.RunOptions{Effects: j}))
	var te *agentloop.TurnError
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, "partial", te.History.LastAssistantText())
	assert.Empty(t, j.results, "the toy engine records no failed step")
}

// design.md §6.4 under an engine: a recorded step of an agent tool whose
// sub-run paused replays as that pause (SubRunPause), so a recovered run
// pauses again with the sub-run's state and makes no call again.
func TestEffects_AReplayedPausedSubRunPausesTheRunAgain(t *testing.T) {
	var calls atomic.Int32
	pay, err := agentloop.NewRawTool("pay", "Pays.", nil, func(context.Context, json.RawMessage) (string, error) {
		calls.Add(1)
		return "paid", nil
	})
	require.NoError(t, err)
	pay.NeedsApproval = true
	script := func(first agentloop.Chunk, last string) agentloop.Model {
		return agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				calls.Add(1)
				if len(req.Messages) == 1 {
					yield(first, nil)
					return
				}
				yield(agentloop.TextDelta{Text: last}, nil)
			}
		})
	}
	sub := &agentloop.Agent{Name: "payer", Tools: []*agentloop.Tool{pay},
		Model: script(agentloop.ToolCall{Name: "pay", Args: json.RawMessage(`{}`)}, "paid it")}
	payer, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	lead := &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{payer},
		Model: script(agentloop.ToolCall{Name: "payer", Args: json.RawMessage(`{"task":"pay"}`)}, "done")}
	h := agentloop.History{agentloop.UserMessage("pay")}
	var j journal

	live, err := agentloop.Drain(lead.Stream(context.Background(), h, &agentloop.RunOptions{Effects: &j}))
	require.NoError(t, err)
	require.IsType(t, agentloop.Pending{}, live)
	require.Equal(t, int32(2), calls.Load(), "the lead's model call and the sub-agent's")

	replayed, err := agentloop.Drain(lead.Stream(context.Background(), h, &agentloop.RunOptions{Effects: &j}))
	require.NoError(t, err)
	assert.Equal(t, int32(2), calls.Load(), "a replay makes no call")
	p, ok := replayed.(agentloop.Pending)
	require.Truef(t, ok, "the replayed run ends with %T", replayed)
	assert.Empty(t, cmp.Diff(live.(agentloop.Pending).Approvals, p.Approvals))
	assert.Empty(t, cmp.Diff(live.(agentloop.Pending).History, p.History,
		cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })))
	assert.Nil(t, agentloop.PausedSubRun(agentloop.ToolResult{Content: "paid"}), "a result that is no pause")
}

// design.md §3.9: a sub-run's tool calls have keys of their own. The same
// sub-agent called twice in one turn makes the same call ids in its two
// sub-runs; without the parent call in the key, a payment API would take
// the second payment for a repeat of the first.
func TestIdempotencyKey_SubRunsOfTwoCallsHaveDistinctKeysStableAcrossRuns(t *testing.T) {
	run := func() []string {
		var mu sync.Mutex
		var keys []string
		pay, err := agentloop.NewRawTool("pay", "Pays.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			keys = append(keys, agentloop.IdempotencyKey(ctx))
			return "paid", nil
		})
		require.NoError(t, err)
		sub := &agentloop.Agent{Name: "payer", Model: callsTools("pay", 1), Tools: []*agentloop.Tool{pay}}
		twice := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				if req.Turn > 1 {
					yield(agentloop.TextDelta{Text: "ok"}, nil)
					return
				}
				for range 2 {
					if !yield(agentloop.ToolCall{Name: "payer", Args: json.RawMessage(`{"task":"pay"}`)}, nil) {
						return
					}
				}
			}
		})
		lead := &agentloop.Agent{Model: twice, Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{})}, ToolConcurrency: 1}
		_, err = collect(lead.Stream(context.Background(), user("go"), &agentloop.RunOptions{ConversationID: "c"}))
		require.NoError(t, err)
		slices.Sort(keys)
		return keys
	}
	first := run()
	require.Len(t, first, 2)
	assert.NotEqual(t, first[0], first[1], "the two sub-runs' pay calls share a key")
	assert.NotEmpty(t, first[0])
	assert.Equal(t, first, run(), "the keys change from one run of the conversation to the next")
}

// returningEngine runs every call live, each tool call on a goroutine of
// its own, and closes returned once a tool call's call func returned.
type returningEngine struct{ returned chan struct{} }

func (e *returningEngine) Model(_ context.Context, _ agentloop.Step, call func() (agentloop.ModelReply, error)) (agentloop.ModelReply, error) {
	return call()
}

func (e *returningEngine) Tool(_ context.Context, _ agentloop.Step, call func() agentloop.ToolResult, done func(agentloop.ToolResult)) {
	go func() {
		res := call()
		close(e.returned)
		done(res)
	}()
}

// helpedLead calls its helper sub-agent (an AgentTool), which answers
// "helped", then answers "done".
func helpedLead(t *testing.T) *agentloop.Agent {
	t.Helper()
	sub := &agentloop.Agent{Name: "helper", Model: agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) { yield(agentloop.TextDelta{Text: "helped"}, nil) }
	})}
	helper, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{helper},
		Model: agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				if len(req.Messages) == 1 {
					yield(agentloop.ToolCall{Name: "helper", Args: json.RawMessage(`{"task":"help"}`)}, nil)
					return
				}
				yield(agentloop.TextDelta{Text: "done"}, nil)
			}
		})}
}

// design.md §3.9: under an engine, an agent tool's call func returns only
// once the run has yielded the Nested items the call handed over, so that
// a step that records what the sub-run did (its usage, dbosrun) records
// all of it. The consumer holds the sub-run's last item until the call
// returned or every goroutine is blocked (synctest's clock): the call must
// not return first.
func TestEffects_AnAgentToolsCallReturnsOnceTheRunYieldedItsNestedItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lead := helpedLead(t)
		e := &returningEngine{returned: make(chan struct{})}
		early, nested := false, 0
		for it, err := range lead.Stream(context.Background(), agentloop.History{agentloop.UserMessage("help")}, &agentloop.RunOptions{Effects: e}) {
			require.NoError(t, err)
			n, ok := it.(*agentloop.Nested)
			if !ok {
				continue
			}
			nested++
			if _, ok := n.Item.(agentloop.Final); ok {
				select {
				case <-e.returned:
					early = true
				case <-time.After(time.Hour): // every goroutine is blocked
				}
			}
		}
		assert.Equal(t, 4, nested, "the sub-run's TurnStart, delta, TurnEnd, Final")
		assert.False(t, early, "the call returned before the run yielded its sub-run's last item")
	})
}

// A consumer that panics on a sub-run's item, under an engine, leaves no
// step waiting for the run to take the call's items: the panic goes on up
// once the step ended (synctest would report the deadlock).
func TestEffects_AConsumerPanickingOnASubRunsItemLeavesNoStepWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &returningEngine{returned: make(chan struct{})}
		assert.PanicsWithValue(t, "consumer", func() {
			for it := range helpedLead(t).Stream(context.Background(), agentloop.History{agentloop.UserMessage("help")}, &agentloop.RunOptions{Effects: e}) {
				if _, ok := it.(*agentloop.Nested); ok {
					panic("consumer")
				}
			}
		})
		<-e.returned
	})
}
