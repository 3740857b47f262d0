package temporalrun_test

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/enginetest"
	"github.com/agentloop/agentloop/durable/temporalrun"
)

// temporalRunner is a Runner with the client its Stream goes through;
// its run ids carry prefix (unique on a shared server), but for Start's,
// which a ChatServer names and reads back.
type temporalRunner struct {
	*temporalrun.Runner
	c      client.Client
	prefix string
}

func (r temporalRunner) Stream(ctx context.Context, runID, conversationID string, h agentloop.History) iter.Seq2[agentloop.Item, error] {
	return r.Runner.Stream(ctx, r.c, temporalrun.Run{ID: r.prefix + runID, ConversationID: conversationID, History: h})
}

// suiteHarness runs each run in Temporal's test suite through a
// suiteClient, which keeps the runs as a server does; a restart is a new
// runner on the same client.
type suiteHarness struct {
	tb testing.TB
	c  *suiteClient
}

func (h *suiteHarness) Open(agent *agentloop.Agent, onItem enginetest.OnItem) enginetest.Runner {
	r, err := temporalrun.New(agent, temporalrun.Options{TaskQueue: "agents", Client: h.c, OnItem: onItem})
	require.NoError(h.tb, err)
	h.c.mu.Lock()
	h.c.runner = r
	h.c.mu.Unlock()
	return temporalRunner{Runner: r, c: h.c}
}

func newSuiteHarness(tb testing.TB) enginetest.Harness {
	return &suiteHarness{tb: tb, c: &suiteClient{t: tb}}
}

// The durable engines' conformance suite in Temporal's test suite, which
// cannot replay a run (TestReplay_* replay recorded histories instead).
func TestConformance_TestSuite(t *testing.T) {
	enginetest.Run(t, newSuiteHarness, enginetest.Options{WholeParts: true})
}

// BenchmarkSteps_InProcess is the 200-step run of BenchmarkSteps_* without
// an engine.
func BenchmarkSteps_InProcess(b *testing.B) { enginetest.Benchmark(b, nil) }

// BenchmarkSteps_TestSuite is the cost per step of a 200-step run as a
// workflow in Temporal's in-process test suite: the workflow, the
// activities and the payload encoding, without a server's round trips
// (a real server adds tens of milliseconds per activity).
func BenchmarkSteps_TestSuite(b *testing.B) { enginetest.Benchmark(b, newSuiteHarness) }

// serverHarness runs on the real server, on a task queue of its own; a
// restart stops the workers started before and starts another.
type serverHarness struct {
	tb      testing.TB
	c       client.Client
	queue   string
	prefix  string
	workers []worker.Worker
}

func newServerHarness(tb testing.TB) enginetest.Harness {
	c, _ := realServer(tb)
	return &serverHarness{tb: tb, c: c, queue: unique(tb, "queue"), prefix: unique(tb, "run") + "/"}
}

func (h *serverHarness) Open(agent *agentloop.Agent, onItem enginetest.OnItem) enginetest.Runner {
	for _, w := range h.workers {
		w.Stop()
	}
	r, err := temporalrun.New(agent, temporalrun.Options{TaskQueue: h.queue, Client: h.c, OnItem: onItem})
	require.NoError(h.tb, err)
	h.workers = []worker.Worker{startWorker(h.tb, h.c, r)}
	return temporalRunner{Runner: r, c: h.c, prefix: h.prefix}
}

// serverReplay resets the ended run to a workflow task it completed, as
// Temporal's reset does: the new execution replays the history before
// that task from the record and runs the workflow on from there. With
// afterTool empty that is the run's last workflow task (every step
// replays); otherwise the first one after afterTool's last activity
// completed. The replayed run keeps the run's id.
func serverReplay(tb testing.TB, eh enginetest.Harness, runID, afterTool string) string {
	tb.Helper()
	h := eh.(*serverHarness)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := h.prefix + runID
	// The Stream ends at the run's last item, which may come before the
	// workflow task that completes the run is recorded.
	require.NoError(tb, h.c.GetWorkflow(ctx, id, "").Get(ctx, nil))
	var events []*historypb.HistoryEvent
	for it := h.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT); it.HasNext(); {
		ev, err := it.Next()
		require.NoError(tb, err)
		events = append(events, ev)
	}
	var after int64 // the event after which the reset task is the first completed one
	if afterTool != "" {
		tools := map[int64]bool{} // afterTool's scheduled activities
		for _, ev := range events {
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "agentloop.tool" {
				var in temporalrun.ToolInput
				require.NoError(tb, converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in))
				tools[ev.GetEventId()] = toolName(in) == afterTool
			}
			if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && tools[a.GetScheduledEventId()] {
				after = ev.GetEventId()
			}
		}
		require.Positive(tb, after, "no completed activity of tool %s", afterTool)
	}
	var reset int64
	for _, ev := range events {
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && ev.GetEventId() > after {
			reset = ev.GetEventId()
			if afterTool != "" {
				break
			}
		}
	}
	require.Positive(tb, reset, "no workflow task to reset to")
	_, err := h.c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{Namespace: "default",
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id}, Reason: "enginetest replay",
		WorkflowTaskFinishEventId: reset, RequestId: unique(tb, "reset")})
	require.NoError(tb, err)
	return runID
}

// toolName is the name of the call a tool activity's input is for.
func toolName(in temporalrun.ToolInput) string {
	for _, m := range in.History {
		for _, p := range m.Parts {
			if p.ToolCall != nil && p.ToolCall.ID == in.Step.CallID {
				return p.ToolCall.Name
			}
		}
	}
	return ""
}

// The durable engines' conformance suite on a real Temporal server: a
// restart hands the runs to another worker, a replay is a reset.
func TestRealServer_Conformance(t *testing.T) {
	realServer(t) // skips, or fails in CI, without a server
	enginetest.Run(t, newServerHarness, enginetest.Options{WholeParts: true, Replay: serverReplay})
}

// BenchmarkSteps_RealServer is the cost per step of a 200-step run on a
// real Temporal server (in-memory SQLite, on loopback) with one worker in
// this process.
func BenchmarkSteps_RealServer(b *testing.B) { enginetest.Benchmark(b, newServerHarness) }
