package agentloop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

type idx struct {
	I int `json:"i"`
}

// calls returns a turn that calls tool n times, with arguments {"i": k}.
func calls(tool string, n int) simtest.Turn {
	var steps []simtest.Step
	for k := range n {
		steps = append(steps, simtest.Call(fmt.Sprintf("c%d", k), tool, idx{I: k}))
	}
	return turn(steps...)
}

// design.md §5.3: with ToolConcurrency 1 the calls run one after another, in call
// order, each starting only once the one before has returned.
func TestTools_ConcurrencyOneRunsInCallOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 12
		var (
			mu      sync.Mutex
			order   []int
			running atomic.Int32
			overlap atomic.Bool
		)
		work, err := agentloop.NewTool("work", "Work.", func(ctx context.Context, a idx) (string, error) {
			if running.Add(1) > 1 {
				overlap.Store(true)
			}
			defer running.Add(-1)
			mu.Lock()
			order = append(order, a.I)
			mu.Unlock()
			// Fake time in the bubble: the clock moves only once every other
			// goroutine is blocked, so a wrongly started call would overlap.
			time.Sleep(time.Second)
			return "ok", nil
		})
		require.NoError(t, err)
		a := &agentloop.Agent{Model: simtest.NewModel(calls("work", n), turn(simtest.Text("done"))), Tools: []*agentloop.Tool{work}, ToolConcurrency: 1}
		_, err = collect(a.Stream(t.Context(), user("go"), nil))
		require.NoError(t, err)
		assert.False(t, overlap.Load(), "two calls ran at once")
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		assert.Equal(t, want, order, "calls start in call order")
	})
}

// design.md §5.3: a call that timed out keeps its slot until its func returns, so
// no more than ToolConcurrency funcs ever run at once; its error result
// comes at once.
func TestTools_TimedOutCallHoldsItsSlotUntilItsFuncReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		releaseA := make(chan struct{})
		var aReturned, bStartedEarly atomic.Bool
		stuck := rawTool(t, "stuck", func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-releaseA // ignores its context, as a badly written tool does
			aReturned.Store(true)
			return "late", nil
		})
		stuck.Timeout = time.Minute
		next := rawTool(t, "next", func(ctx context.Context, _ json.RawMessage) (string, error) {
			if !aReturned.Load() {
				bStartedEarly.Store(true)
			}
			return "ran", nil
		})
		m := simtest.NewModel(turn(simtest.Call("a", "stuck", nil), simtest.Call("b", "next", nil)), turn(simtest.Text("done")))
		var logs bytes.Buffer
		a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{stuck, next}, ToolConcurrency: 1,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		var got []agentloop.ToolResult
		for it, err := range a.Stream(t.Context(), user("go"), nil) {
			require.NoError(t, err)
			if r, ok := it.(agentloop.ToolResultReady); ok {
				got = append(got, r.Result)
				if r.Result.CallID == "a" {
					assert.False(t, aReturned.Load(), "the timeout result comes before the func returns")
					close(releaseA)
				}
			}
		}
		require.Len(t, got, 2)
		assert.ErrorIs(t, got[0].Err, agentloop.ErrToolTimeout)
		assert.ErrorIs(t, got[0].Err, context.DeadlineExceeded)
		assert.Contains(t, got[0].Content, "did not finish within 1m0s")
		assert.Equal(t, "ran", got[1].Content)
		assert.False(t, bStartedEarly.Load(), "b started while the timed-out a still ran: the bound was broken")
		assert.Contains(t, logs.String(), "result was dropped", "the late result is logged, not silently lost")
	})
}

// design.md §5.3: with ToolConcurrency N > 1, a freed slot goes to the earliest
// waiting call.
func TestTools_FreedSlotGoesToTheEarliestWaitingCall(t *testing.T) {
	const n = 5
	started := make(chan int, n)
	release := make([]chan struct{}, n)
	for i := range release {
		release[i] = make(chan struct{})
	}
	work, err := agentloop.NewTool("work", "Work.", func(ctx context.Context, a idx) (string, error) {
		started <- a.I
		select {
		case <-release[a.I]:
			return "ok", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	require.NoError(t, err)
	a := &agentloop.Agent{Model: simtest.NewModel(calls("work", n), turn(simtest.Text("done"))), Tools: []*agentloop.Tool{work}, ToolConcurrency: 2}
	var order []int
	go func() {
		first := []int{<-started, <-started}
		order = append(order, first...)
		// Free one slot at a time: the next call in call order must take it.
		for range n - 2 {
			close(release[order[len(order)-2]])
			order = append(order, <-started)
		}
		close(release[order[n-2]])
		close(release[order[n-1]])
	}()
	_, err = collect(a.Stream(t.Context(), user("go"), nil))
	require.NoError(t, err)
	assert.ElementsMatch(t, []int{0, 1}, order[:2])
	assert.Equal(t, []int{2, 3, 4}, order[2:], "freed slots go to calls in call order")
}

// design.md §7.3: a result that is ready wins over a cancel: a tool whose side effect is
// done is never recorded as "cancelled".
func TestCancel_ReadyResultWinsOverCancel(t *testing.T) {
	for range 20 { // the old code lost this race about half the time
		ctx, cancel := context.WithCancelCause(t.Context())
		send := rawTool(t, "send_email", func(context.Context, json.RawMessage) (string, error) {
			cancel(agentloop.Cancel("user pressed stop")) // the stop arrives as the e-mail goes out
			return "sent", nil
		})
		m := simtest.NewModel(turn(simtest.Call("c1", "send_email", nil)), turn(simtest.Text("never")))
		a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{send}}
		_, err := collect(a.Stream(ctx, user("mail it"), nil))
		var ce *agentloop.CancelledError
		require.ErrorAs(t, err, &ce)
		r := resultsIn(ce.History)["c1"]
		require.Equal(t, "sent", r.Content, "the history must say the e-mail was sent")
		assert.False(t, r.IsError)
		assert.Equal(t, 1, m.Calls(), "no model call after the cancel")
	}
}

// design.md §7.3: a tool that gives up because the run was cancelled gets the "cancelled"
// result, whose Err matches ErrCancelled.
func TestCancel_ToolThatStopsOnCancelGetsCancelledResult(t *testing.T) {
	ctx, cancel := context.WithCancelCause(t.Context())
	wait := rawTool(t, "wait", func(ctx context.Context, _ json.RawMessage) (string, error) {
		cancel(agentloop.Cancel("stop"))
		<-ctx.Done()
		return "", ctx.Err()
	})
	a := &agentloop.Agent{Model: simtest.NewModel(turn(simtest.Call("c1", "wait", nil))), Tools: []*agentloop.Tool{wait}}
	_, err := collect(a.Stream(ctx, user("go"), nil))
	h, ok := agentloop.HistoryOf(err)
	require.True(t, ok)
	r := resultsIn(h)["c1"]
	assert.Equal(t, "cancelled: stop", r.Content)
	assert.ErrorIs(t, r.Err, agentloop.ErrCancelled)
}

// design.md §5.5: a tool that calls runtime.Goexit (t.FailNow in a test tool) gets an error
// result; the run neither hangs nor crashes.
func TestErrorsAreResults_GoexitInToolIsAnErrorResult(t *testing.T) {
	exits := rawTool(t, "exits", func(context.Context, json.RawMessage) (string, error) {
		runtime.Goexit()
		return "", nil
	})
	m := simtest.NewModel(turn(simtest.Call("c1", "exits", nil)),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": "runtime.Goexit"}}, Reply: []simtest.Step{simtest.Text("ok")}})
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{exits}}
	items, err := collect(a.Stream(t.Context(), user("go"), nil))
	require.NoError(t, err)
	assert.True(t, results(items)[0].IsError)
}

// design.md §7.1: a panic in BeforeToolCall or AfterToolCall (which run on tool goroutines)
// ends the run as a cancel whose cause is a *HookPanicError, logged with its
// stack; it never crashes the process.
func TestHooks_PanicInToolHookCancelsTheRun(t *testing.T) {
	cases := map[string]agentloop.Hooks{
		"BeforeToolCall": {BeforeToolCall: func(context.Context, *agentloop.ToolCall) (*agentloop.ToolResult, error) { panic("before boom") }},
		"AfterToolCall":  {AfterToolCall: func(context.Context, agentloop.ToolCall, *agentloop.ToolResult) error { panic("after boom") }},
		"Goexit": {BeforeToolCall: func(context.Context, *agentloop.ToolCall) (*agentloop.ToolResult, error) {
			runtime.Goexit()
			return nil, nil
		}},
	}
	for name, hooks := range cases {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			m := simtest.NewModel(turn(simtest.Call("c1", "echo", `{"text":"a"}`)), turn(simtest.Text("never")))
			a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, Hooks: &hooks,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			_, err := collect(a.Stream(t.Context(), user("x"), nil))
			var hp *agentloop.HookPanicError
			require.ErrorAs(t, err, &hp)
			require.ErrorIs(t, err, agentloop.ErrCancelled)
			assert.NotEmpty(t, hp.Stack)
			h, _ := agentloop.HistoryOf(err)
			assert.Empty(t, h.Unanswered(), "the history stays consistent")
			assert.Equal(t, 1, m.Calls())
			assert.Contains(t, logs.String(), "panicked")
		})
	}
}

// design.md §4.2: a tool's Go error is kept in ToolResult.Err for hooks (errors.Is works),
// and a panic keeps its value and stack.
func TestHooks_AfterToolCallSeesTheToolsGoError(t *testing.T) {
	errDown := errors.New("database is down")
	failing := rawTool(t, "failing", func(context.Context, json.RawMessage) (string, error) {
		return "", fmt.Errorf("query: %w", errDown)
	})
	panicky := rawTool(t, "panicky", func(context.Context, json.RawMessage) (string, error) { panic("boom") })
	var mu sync.Mutex
	seen := map[string]error{}
	hooks := &agentloop.Hooks{AfterToolCall: func(_ context.Context, call agentloop.ToolCall, r *agentloop.ToolResult) error {
		mu.Lock()
		defer mu.Unlock()
		seen[call.ID] = r.Err
		return nil
	}}
	var logs bytes.Buffer
	m := simtest.NewModel(turn(simtest.Call("c1", "failing", nil), simtest.Call("c2", "panicky", nil),
		simtest.Call("c3", "nosuch", nil), simtest.Call("c4", "echo", `{"text": 1}`), simtest.Call("c5", "echo", `{"text":"ok"}`)),
		turn(simtest.Text("done")))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{failing, panicky, echoTool(t, "echo")}, Hooks: hooks,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	items, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	assert.ErrorIs(t, seen["c1"], errDown)
	var pe *agentloop.ToolPanicError
	require.ErrorAs(t, seen["c2"], &pe)
	assert.Equal(t, "boom", pe.Value)
	assert.Contains(t, string(pe.Stack), "execute_test.go", "the stack shows where the tool panicked")
	assert.ErrorIs(t, seen["c3"], agentloop.ErrUnknownTool)
	assert.ErrorIs(t, seen["c4"], agentloop.ErrInvalidArgs)
	assert.NoError(t, seen["c5"])
	assert.Equal(t, "the tool crashed (panic: boom)", results(items)[1].Content, "the model sees no stack")
	assert.Contains(t, logs.String(), "execute_test.go", "the stack goes to the log")
}

// design.md §5.4: a tool reports progress through its context; the loop yields it in order,
// before the call's result.
func TestToolProgress_YieldedInOrderBeforeTheResult(t *testing.T) {
	download := rawTool(t, "download", func(ctx context.Context, _ json.RawMessage) (string, error) {
		for _, p := range []string{"10%", "60%", "100%"} {
			if err := agentloop.ReportProgress(ctx, p); err != nil {
				return "", err
			}
		}
		return "downloaded", nil
	})
	m := simtest.NewModel(turn(simtest.Call("c1", "download", nil)), turn(simtest.Text("done")))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{download}}
	items, err := collect(a.Stream(t.Context(), user("go"), nil))
	require.NoError(t, err)
	var seq []string
	for _, it := range items {
		switch it := it.(type) {
		case agentloop.ToolProgress:
			assert.Equal(t, "c1", it.CallID)
			assert.Equal(t, "download", it.Name)
			seq = append(seq, it.Content)
		case agentloop.ToolResultReady:
			seq = append(seq, "result:"+it.Result.Content)
		case agentloop.TurnEnd:
			seq = append(seq, "turn end")
		}
	}
	assert.Equal(t, []string{"turn end", "10%", "60%", "100%", "result:downloaded", "turn end"}, seq)
}

// design.md §5.4: progress of a later call is yielded as it happens, before an earlier
// call's result; each call's progress still precedes its own result.
func TestToolProgress_OfConcurrentCallsInterleavesAsItHappens(t *testing.T) {
	laterDone := make(chan struct{})
	slow := rawTool(t, "slow", func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-laterDone // finishes only after the later call reported and returned
		return "slow done", nil
	})
	fast := rawTool(t, "fast", func(ctx context.Context, _ json.RawMessage) (string, error) {
		defer close(laterDone)
		return "fast done", agentloop.ReportProgress(ctx, "half way")
	})
	m := simtest.NewModel(turn(simtest.Call("c1", "slow", nil), simtest.Call("c2", "fast", nil)), turn(simtest.Text("done")))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{slow, fast}}
	items, err := collect(a.Stream(t.Context(), user("go"), nil))
	require.NoError(t, err)
	var seq []string
	for _, it := range items {
		switch it := it.(type) {
		case agentloop.ToolProgress:
			seq = append(seq, it.CallID+":"+it.Content)
		case agentloop.ToolResultReady:
			seq = append(seq, it.Result.CallID+":"+it.Result.Content)
		}
	}
	assert.Equal(t, []string{"c2:half way", "c1:slow done", "c2:fast done"}, seq)
}

// design.md §5.4: ReportProgress outside a tool run by the loop does nothing; after the
// call timed out it returns the context's error instead of blocking.
func TestReportProgress_OutsideTheLoopAndAfterTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		require.NoError(t, agentloop.ReportProgress(t.Context(), "nobody listens"))
		var afterTimeout error
		gotErr := make(chan struct{})
		slow := rawTool(t, "slow", func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-ctx.Done()
			afterTimeout = agentloop.ReportProgress(ctx, "too late")
			close(gotErr)
			return "", ctx.Err()
		})
		slow.Timeout = time.Minute
		a := &agentloop.Agent{Model: simtest.NewModel(turn(simtest.Call("c1", "slow", nil)), turn(simtest.Text("ok"))), Tools: []*agentloop.Tool{slow}}
		items, err := collect(a.Stream(t.Context(), user("go"), nil))
		require.NoError(t, err)
		<-gotErr
		assert.ErrorIs(t, afterTimeout, context.DeadlineExceeded)
		for _, it := range items {
			_, isProgress := it.(agentloop.ToolProgress)
			assert.False(t, isProgress, "no progress after the call timed out")
		}
	})
}

// design.md §8.3: a history whose tool call has arguments that are not JSON can be stored
// whatever way the run ends.
func TestErrorsAreResults_HistoryWithInvalidArgumentsSerializes(t *testing.T) {
	bad := `{"text": "unterminated`
	check := func(t *testing.T, h agentloop.History) {
		t.Helper()
		data, err := json.Marshal(h)
		require.NoError(t, err)
		var back agentloop.History
		require.NoError(t, json.Unmarshal(data, &back))
		found := false
		for _, m := range back {
			for _, c := range m.ToolCalls() {
				if c.ID == "c1" {
					found = true
					assert.Equal(t, bad, string(c.Args))
				}
			}
		}
		assert.True(t, found)
	}
	t.Run("final", func(t *testing.T) {
		m := simtest.NewModel(turn(simtest.Call("c1", "echo", bad)), turn(simtest.Text("sorry")))
		a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}}
		items, err := collect(a.Stream(t.Context(), user("x"), nil))
		require.NoError(t, err)
		check(t, final(t, items).History)
	})
	t.Run("pending", func(t *testing.T) {
		m := simtest.NewModel(turn(simtest.Call("c1", "echo", bad), simtest.Call("c2", "getLocation", `{"precision":"city"}`)))
		a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo"), clientTool(t, "getLocation")}}
		items, err := collect(a.Stream(t.Context(), user("x"), nil))
		require.NoError(t, err)
		check(t, pending(t, items).History)
	})
	t.Run("failed", func(t *testing.T) {
		m := simtest.NewModel(turn(simtest.Call("c1", "echo", bad), simtest.Fail("overloaded")))
		a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}}
		_, err := collect(a.Stream(t.Context(), user("x"), nil))
		h, ok := agentloop.HistoryOf(err)
		require.True(t, ok)
		check(t, h)
	})
	t.Run("cancelled", func(t *testing.T) {
		m := simtest.NewModel(turn(simtest.Call("c1", "echo", bad)))
		a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, Hooks: &agentloop.Hooks{
			OnTurnEnd: func(context.Context, agentloop.TurnEnd) error { return agentloop.Cancel("stop") }}}
		_, err := collect(a.Stream(t.Context(), user("x"), nil))
		h, ok := agentloop.HistoryOf(err)
		require.True(t, ok)
		check(t, h)
	})
}
