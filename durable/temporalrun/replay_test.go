package temporalrun_test

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/temporalrun"
)

var update = flag.Bool("update", false, "rewrite testdata/weather_history.json from the current workflow")

const historyFile = "testdata/weather_history.json"

// replayer adapts a worker.WorkflowReplayer to temporalrun.Registry: a
// replay runs no activity, so none is registered.
type replayer struct{ worker.WorkflowReplayer }

func (replayer) RegisterActivityWithOptions(any, activity.RegisterOptions) {}

// A replay of the recorded run feeds the recorded activity results to the
// workflow and fails when the workflow's commands differ from the recorded
// events (a change that breaks determinism: other activities, another
// order). It runs no model call or tool call again and delivers no item.
func TestReplay_RecordedHistoryReplaysWithoutRunningAnyCall(t *testing.T) {
	if *update {
		recordHistory(t)
	}
	var calls atomic.Int32
	delivered := 0
	r, err := temporalrun.New(weatherAgent(&calls), temporalrun.Options{
		OnItem: func(string, agentloop.Item, error) { delivered++ },
	})
	require.NoError(t, err)
	rp := worker.NewWorkflowReplayer()
	r.Register(replayer{rp})
	err = rp.ReplayWorkflowHistoryFromJSONFile(log.NewStructuredLogger(slog.New(slog.DiscardHandler)), historyFile)
	require.NoError(t, err, "the workflow no longer replays its recorded history: a change broke determinism (if it is meant, version it with workflow.GetVersion; -update records a new history)")
	require.Zero(t, calls.Load(), "replay runs no tool")
	require.Zero(t, delivered, "replay delivers no item")
}

// A workflow that schedules another activity than the recorded one fails
// to replay with a nondeterminism error.
func TestReplay_ChangedWorkflowFailsToReplay(t *testing.T) {
	var calls atomic.Int32
	// A runner with other activity names schedules other activities.
	r, err := temporalrun.New(weatherAgent(&calls), temporalrun.Options{})
	require.NoError(t, err)
	rp := worker.NewWorkflowReplayer()
	rp.RegisterWorkflowWithOptions(func(ctx workflow.Context, in temporalrun.Input) (temporalrun.Outcome, error) {
		// the run's model call under another name, then nothing
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 1e9})
		var rep agentloop.ModelReply
		err := workflow.ExecuteActivity(ctx, "other.model", temporalrun.ModelInput{}).Get(ctx, &rep)
		return temporalrun.Outcome{}, err
	}, workflow.RegisterOptions{Name: r.WorkflowName()})
	err = rp.ReplayWorkflowHistoryFromJSONFile(log.NewStructuredLogger(slog.New(slog.DiscardHandler)), historyFile)
	require.ErrorContains(t, err, "TMPRL1100", "a nondeterminism error")
}

// recordHistory runs the weather run in the test suite and writes the
// history a Temporal server records for it: the workflow task that starts
// the run schedules the first model call, the next schedules both tool
// calls (they run concurrently), the next the second model call, the last
// completes the workflow. The recorded inputs and results are the
// activities' own.
func recordHistory(t *testing.T) {
	t.Helper()
	var calls atomic.Int32
	r, err := temporalrun.New(weatherAgent(&calls), temporalrun.Options{})
	require.NoError(t, err)
	env := newEnv(t)
	r.Register(env)

	type record struct {
		typ           string
		turn          int
		input, result *commonpb.Payloads
	}
	dc := converter.GetDefaultDataConverter()
	var mu sync.Mutex
	var order []string
	recs := map[string]*record{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		rec := &record{typ: info.ActivityType.Name}
		var p *commonpb.Payloads
		var err error
		if rec.typ == "agentloop.model" {
			var in temporalrun.ModelInput
			require.NoError(t, args.Get(&in))
			rec.turn = in.Step.Turn
			p, err = dc.ToPayloads(in)
		} else {
			var in temporalrun.ToolInput
			require.NoError(t, args.Get(&in))
			rec.turn = in.Step.Turn
			p, err = dc.ToPayloads(in)
		}
		require.NoError(t, err)
		rec.input = p
		recs[info.ActivityID] = rec
		order = append(order, info.ActivityID)
	})
	env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
		mu.Lock()
		defer mu.Unlock()
		require.NoError(t, err)
		rec := recs[info.ActivityID]
		var p *commonpb.Payloads
		if rec.typ == "agentloop.model" {
			var rep agentloop.ModelReply
			require.NoError(t, result.Get(&rep))
			p, err = dc.ToPayloads(rep)
		} else {
			var res agentloop.ToolResult
			require.NoError(t, result.Get(&res))
			p, err = dc.ToPayloads(res)
		}
		require.NoError(t, err)
		rec.result = p
	})
	in := temporalrun.Input{ConversationID: "chat-1", History: agentloop.History{agentloop.UserMessage("weather?")}}
	env.ExecuteWorkflow(r.WorkflowName(), in)
	require.NoError(t, env.GetWorkflowError())
	var out temporalrun.Outcome
	require.NoError(t, env.GetWorkflowResult(&out))

	// Batches: each model call alone, a turn's tool calls together.
	var batches [][]*record
	for i, id := range order {
		rec := recs[id]
		if i > 0 && rec.typ == "agentloop.tool" {
			prev := batches[len(batches)-1]
			if p := prev[len(prev)-1]; p.typ == rec.typ && p.turn == rec.turn {
				batches[len(batches)-1] = append(prev, rec)
				continue
			}
		}
		batches = append(batches, []*record{rec})
	}

	h := &historypb.History{}
	add := func(typ enumspb.EventType, set func(e *historypb.HistoryEvent)) int64 {
		e := &historypb.HistoryEvent{EventId: int64(len(h.Events) + 1), EventType: typ}
		if set != nil {
			set(e)
		}
		h.Events = append(h.Events, e)
		return e.EventId
	}
	tq := &taskqueuepb.TaskQueue{Name: "agentloop-test", Kind: enumspb.TASK_QUEUE_KIND_NORMAL}
	input, err := dc.ToPayloads(in)
	require.NoError(t, err)
	add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, func(e *historypb.HistoryEvent) {
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
			WorkflowType: &commonpb.WorkflowType{Name: r.WorkflowName()}, TaskQueue: tq, Input: input, Attempt: 1,
			OriginalExecutionRunId: "7b0f5a4e-0000-4000-8000-000000000001", FirstExecutionRunId: "7b0f5a4e-0000-4000-8000-000000000001",
		}}
	})
	task := func() int64 {
		s := add(enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowTaskScheduledEventAttributes{WorkflowTaskScheduledEventAttributes: &historypb.WorkflowTaskScheduledEventAttributes{TaskQueue: tq, Attempt: 1}}
		})
		st := add(enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowTaskStartedEventAttributes{WorkflowTaskStartedEventAttributes: &historypb.WorkflowTaskStartedEventAttributes{ScheduledEventId: s}}
		})
		return add(enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowTaskCompletedEventAttributes{WorkflowTaskCompletedEventAttributes: &historypb.WorkflowTaskCompletedEventAttributes{ScheduledEventId: s, StartedEventId: st}}
		})
	}
	for _, b := range batches {
		done := task()
		scheduled := make([]int64, len(b))
		for i, rec := range b {
			scheduled[i] = add(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(e *historypb.HistoryEvent) {
				e.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
					ActivityId: strconv.FormatInt(e.EventId, 10), ActivityType: &commonpb.ActivityType{Name: rec.typ}, TaskQueue: tq,
					Input: rec.input, WorkflowTaskCompletedEventId: done,
				}}
			})
		}
		for i, rec := range b {
			st := add(enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED, func(e *historypb.HistoryEvent) {
				e.Attributes = &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{ScheduledEventId: scheduled[i], Attempt: 1}}
			})
			add(enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, func(e *historypb.HistoryEvent) {
				e.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{ScheduledEventId: scheduled[i], StartedEventId: st, Result: rec.result}}
			})
		}
	}
	done := task()
	result, err := dc.ToPayloads(out)
	require.NoError(t, err)
	add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, func(e *historypb.HistoryEvent) {
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionCompletedEventAttributes{WorkflowExecutionCompletedEventAttributes: &historypb.WorkflowExecutionCompletedEventAttributes{Result: result, WorkflowTaskCompletedEventId: done}}
	})
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(historyFile), 0o755))
	require.NoError(t, os.WriteFile(historyFile, append(b, '\n'), 0o644))
}

// continuedHistoryFile is the first execution of a run that continued as
// new on a real Temporal server (TestRealServer_ARunContinuedAsNew*
// rewrites it with -update and a server).
const continuedHistoryFile = "testdata/continued_history.json"

// Continuing as new is part of the workflow's determinism: the recorded
// execution replays with the options it ran with (two model calls, then a
// continuation, no call made again, no item delivered), and fails to
// replay when the run would not have continued.
func TestReplay_AContinuedRunsRecordedHistoryReplaysOnlyWithTheSameContinuation(t *testing.T) {
	replay := func(opts temporalrun.Options) (error, int32, int) {
		var model, tools atomic.Int32
		delivered := 0
		opts.OnItem = func(string, agentloop.Item, error) { delivered++ }
		r, err := temporalrun.New(countingAgent(t, 5, &model, &tools), opts)
		require.NoError(t, err)
		rp := worker.NewWorkflowReplayer()
		r.Register(replayer{rp})
		err = rp.ReplayWorkflowHistoryFromJSONFile(log.NewStructuredLogger(slog.New(slog.DiscardHandler)), continuedHistoryFile)
		return err, model.Load() + tools.Load(), delivered
	}
	err, calls, delivered := replay(temporalrun.Options{ContinueAfter: 2})
	require.NoError(t, err)
	require.Zero(t, calls, "replay makes no call")
	require.Zero(t, delivered, "replay delivers no item")

	err, _, _ = replay(temporalrun.Options{})
	require.ErrorContains(t, err, "TMPRL1100", "without the continuation: a nondeterminism error")
}
