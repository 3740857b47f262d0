package enginetest_test

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/enginetest"
)

// memHarness is an engine that runs in process and records how each run
// ended, in memory: enough of one to pass the suite without replays.
type memHarness struct {
	mu    sync.Mutex
	ended map[string]ending // by run id: the record
}

type ending struct {
	it  agentloop.Item
	err error
}

func (h *memHarness) Open(agent *agentloop.Agent, onItem enginetest.OnItem) enginetest.Runner {
	return &memRunner{h: h, agent: agent, onItem: onItem, stops: map[string]context.CancelCauseFunc{}}
}

type memRunner struct {
	h      *memHarness
	agent  *agentloop.Agent
	onItem enginetest.OnItem
	mu     sync.Mutex
	stops  map[string]context.CancelCauseFunc
}

func (r *memRunner) Stream(ctx context.Context, runID, conversationID string, h agentloop.History) iter.Seq2[agentloop.Item, error] {
	return r.run(ctx, runID, &agentloop.RunOptions{ConversationID: conversationID}, h)
}

func (r *memRunner) run(ctx context.Context, runID string, opts *agentloop.RunOptions, h agentloop.History) iter.Seq2[agentloop.Item, error] {
	return func(yield func(agentloop.Item, error) bool) {
		r.h.mu.Lock()
		e, ok := r.h.ended[runID]
		r.h.mu.Unlock()
		if ok {
			yield(e.it, e.err)
			return
		}
		for it, err := range r.agent.Stream(ctx, h, opts) {
			if r.onItem != nil {
				r.onItem(runID, it, err)
			}
			e = ending{it, err}
			if !yield(it, err) {
				return
			}
		}
		r.h.mu.Lock()
		r.h.ended[runID] = e
		r.h.mu.Unlock()
	}
}

func (r *memRunner) Start(_ context.Context, runID, conversationID string, h agentloop.History, opts *agentloop.RunOptions) error {
	o := agentloop.RunOptions{}
	if opts != nil {
		o = *opts
	}
	o.ConversationID = conversationID
	ctx, stop := context.WithCancelCause(context.Background())
	r.mu.Lock()
	r.stops[runID] = stop
	r.mu.Unlock()
	go func() {
		defer stop(nil)
		for range r.run(ctx, runID, &o, h) {
		}
	}()
	return nil
}

func (r *memRunner) Stop(runID string, cause error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if stop := r.stops[runID]; stop != nil {
		stop(cause)
		return true
	}
	return false
}

// The suite passes for an engine that keeps its promises; without
// Options.Replay it skips the replay cases.
func TestRun_PassesForAnEngineThatRunsInProcess(t *testing.T) {
	enginetest.Run(t, func(testing.TB) enginetest.Harness {
		return &memHarness{ended: map[string]ending{}}
	}, enginetest.Options{})
}

// BenchmarkSteps_InProcess is the suite's 200-step run without an engine:
// the baseline of each engine's BenchmarkSteps_*.
func BenchmarkSteps_InProcess(b *testing.B) { enginetest.Benchmark(b, nil) }

// An engine that replays model calls in whole parts yields one text delta
// per run of deltas and no tool-call deltas; the suite compares its items
// with the in-process run's joined so.
func ExampleWholeParts() {
	for _, it := range enginetest.WholeParts([]agentloop.Item{
		agentloop.TurnStart{Turn: 1},
		agentloop.TextDelta{Text: "Sunny "}, agentloop.TextDelta{Text: "in "}, agentloop.TextDelta{Text: "both."},
		agentloop.ToolCallDelta{Args: `{"ci`},
		agentloop.TurnEnd{Turn: 1},
	}) {
		if d, ok := it.(agentloop.TextDelta); ok {
			fmt.Printf("%T %q\n", d, d.Text)
			continue
		}
		fmt.Printf("%T\n", it)
	}
	// Output:
	// agentloop.TurnStart
	// agentloop.TextDelta "Sunny in both."
	// agentloop.TurnEnd
}
