// Package enginetest is the conformance suite of the durable engines
// (durable/dbosrun, durable/temporalrun), which each engine runs from its
// tests, as file systems run [testing/fstest] and stores run storetest:
//
//	func TestConformance(t *testing.T) {
//		enginetest.Run(t, func(tb testing.TB) enginetest.Harness {
//			return newMyHarness(tb) // a record of its own: a database, a task queue
//		}, enginetest.Options{Replay: myReplay})
//	}
//
// [Run] checks the promises of the durable-runs seam (design.md §3.9,
// §3.10 "Under an engine", §12.9) that every engine makes: a run's items
// are those of the run in process, every tool call is made once, also
// across a replay; a run paused on an approval goes on in a new run after
// a restart; a sub-agent's pause (an approval, a client call) resumes the
// sub-run without making its completed calls again; a sub-run's usage adds
// up to the run's Usage and AgentUsage, also across a replay; a ChatServer
// with the engine as its aisdk.Runner answers a chat. [Benchmark] measures
// the cost per step of a 200-step run. What only one engine does (a killed
// process's recovery, heartbeats, continue-as-new) stays in its own tests.
package enginetest

import (
	"context"
	"iter"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
)

// OnItem is a runner's item callback, as the engines' Options.OnItem: it
// gets every item a run makes in this process, and the run's error.
type OnItem func(runID string, it agentloop.Item, err error)

// Harness is one test's view of an engine: a record of its own (a
// database, a server's task queue, a test suite's runs), on which it opens
// runners. A harness is used by one test at a time.
type Harness interface {
	// Open returns a runner of agent on the harness's record, ready to run
	// (launched, its worker polling) until the test ends; onItem, when not
	// nil, is its OnItem. A later Open stands for another process on the
	// same record after this one went away: the runners opened before
	// are stopped (shut down, their workers stopped) first, and the new
	// runner sees their runs' records.
	Open(agent *agentloop.Agent, onItem OnItem) Runner
}

// Runner is a runner of one agent on an engine, as a test sees it.
type Runner interface {
	// Start and Stop are the runner's, as a ChatServer uses them.
	aisdk.Runner
	// Stream starts the run runID of conversation conversationID from
	// history h, or attaches to it if it is running, and yields its items
	// as agentloop.Agent.Stream does; for a run that ended it yields only
	// the recorded last item or error. An empty h attaches to a run that
	// exists.
	Stream(ctx context.Context, runID, conversationID string, h agentloop.History) iter.Seq2[agentloop.Item, error]
}

// NewHarness makes a harness with a record of its own for one test or
// benchmark, and releases it when tb ends (tb.Cleanup). It may skip tb
// (or fail it in CI) when the engine's server is not there.
type NewHarness func(tb testing.TB) Harness

// Options tell [Run] what an engine does beyond [Harness]. The zero value
// is an engine that yields a run's items as they are in process and cannot
// replay a run: the cases that need a replay are skipped with a message.
type Options struct {
	// WholeParts says the engine yields each model call's items in whole
	// parts (design.md §3.9): a run of text deltas joined into one, and
	// no tool-call deltas. The suite then compares a run's items with the
	// in-process run's items joined so ([WholeParts]).
	WholeParts bool

	// Replay replays the run runID of h, which ended, as the engine's
	// recovery would from its record, and returns the id of the replayed
	// run, which [Runner.Stream] with an empty history attaches to. With
	// afterTool empty every recorded step replays from the record;
	// otherwise the steps up to the last call of the tool named afterTool
	// do and the later ones run again. Nil skips the replay cases.
	Replay func(tb testing.TB, h Harness, runID, afterTool string) (replayID string)
}

type test struct {
	name string
	run  func(t *testing.T, s *suite)
}

// tests are the suite's cases, named after the behaviour they check.
var tests = []test{
	{"ARunGivesTheItemsOfTheRunInProcessAndMakesEachCallOnce", testItems},
	{"AReplayedRunMakesNoCallAgainAndEndsAsTheRunDid", testReplay},
	{"AnApprovalAfterARestartGoesOnInANewRunFromTheApprovedCall", testApproval},
	{"ASubAgentsApprovalPausesTheRunAndResumesTheSubRunWithoutRepeatingItsCalls", testNestedApproval},
	{"ASubAgentsClientCallResumesTheSubRunWithItsResult", testNestedClientCall},
	{"ASubRunsUsageAddsUpToTheRunsTotalsAlsoAcrossAReplay", testSubRunUsage},
	{"AChatServerOnTheEngineAnswersAChatAndMakesEachCallOnce", testChatServer},
}

// Run runs the conformance suite against the harnesses newHarness makes,
// one per subtest; the subtests run one after the other.
func Run(t *testing.T, newHarness NewHarness, opts Options) {
	s := &suite{newHarness: newHarness, opts: opts}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, s) })
	}
}

type suite struct {
	newHarness NewHarness
	opts       Options
}

// replay replays runID on h, or skips t when the engine cannot.
func (s *suite) replay(t *testing.T, h Harness, runID, afterTool string) string {
	t.Helper()
	if s.opts.Replay == nil {
		t.Skip("the engine cannot replay a run here (Options.Replay is nil)")
	}
	return s.opts.Replay(t, h, runID, afterTool)
}

// items are the items the suite expects of an engine for the in-process
// run's items.
func (s *suite) items(in []agentloop.Item) []agentloop.Item {
	if s.opts.WholeParts {
		return WholeParts(in)
	}
	return in
}

// WholeParts joins runs of text deltas and drops tool-call deltas: the
// items of model calls replayed in whole parts, as an engine with
// [Options.WholeParts] yields them.
func WholeParts(items []agentloop.Item) []agentloop.Item {
	var out []agentloop.Item
	for _, it := range items {
		switch v := it.(type) {
		case agentloop.ToolCallDelta:
			continue
		case agentloop.TextDelta:
			if n := len(out); n > 0 {
				if prev, ok := out[n-1].(agentloop.TextDelta); ok {
					out[n-1] = agentloop.TextDelta{Text: prev.Text + v.Text}
					continue
				}
			}
		}
		out = append(out, it)
	}
	return out
}
