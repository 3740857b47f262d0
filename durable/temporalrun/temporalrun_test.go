package temporalrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/temporalrun"
	"github.com/agentloop/agentloop/simtest"
)

// recorder keeps the items OnItem sees.
type recorder struct {
	mu    sync.Mutex
	items []agentloop.Item
}

func (r *recorder) onItem(_ string, it agentloop.Item, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.items = append(r.items, it)
	}
}

func newEnv(t testing.TB) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	return s.NewTestWorkflowEnvironment()
}

// execute runs one run in a fresh test environment and returns its items
// (as OnItem saw them, the last one from the workflow's result).
func execute(t testing.TB, agent *agentloop.Agent, opts temporalrun.Options, h agentloop.History) ([]agentloop.Item, agentloop.Item, error) {
	t.Helper()
	rec := &recorder{}
	opts.OnItem = rec.onItem
	r, err := temporalrun.New(agent, opts)
	require.NoError(t, err)
	env := newEnv(t)
	r.Register(env)
	env.ExecuteWorkflow(r.WorkflowName(), temporalrun.Input{ConversationID: "chat-1", History: h})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out temporalrun.Outcome
	require.NoError(t, env.GetWorkflowResult(&out))
	last, err := out.Item()
	return rec.items, last, err
}

func inProcess(t testing.TB, agent *agentloop.Agent, h agentloop.History) []agentloop.Item {
	t.Helper()
	var items []agentloop.Item
	for it, err := range agent.Stream(context.Background(), h, &agentloop.RunOptions{ConversationID: "chat-1"}) {
		require.NoError(t, err)
		items = append(items, it)
	}
	return items
}

type weatherArgs struct {
	City string `json:"city"`
}

// weatherAgent calls its weather tool twice in one turn, then answers.
func weatherAgent(calls *atomic.Int32) *agentloop.Agent {
	tool, err := agentloop.NewTool("weather", "The weather in a city.", func(ctx context.Context, a weatherArgs) (string, error) {
		calls.Add(1)
		return "sunny in " + a.City + " key=" + agentloop.IdempotencyKey(ctx)[:8], nil
	})
	if err != nil {
		panic(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Looking."), simtest.Call("", "weather", weatherArgs{"Paris"}),
			simtest.Call("", "weather", weatherArgs{"Oslo"}), simtest.Usage(10, 5)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Sunny in both."), simtest.Usage(20, 4)}},
	)
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}}
}

// cmpItems compares items by their JSON-visible content (Go errors behind
// results are not recorded).
var cmpItems = cmp.Transformer("json", func(it agentloop.Item) string {
	b, err := json.Marshal(it)
	if err != nil {
		panic(err)
	}
	return string(b)
})

// flakyAgent calls its flaky tool once; the tool fails transiently (with
// ErrRetry) on its first failures attempts.
func flakyAgent(failures int32, attempts *atomic.Int32) *agentloop.Agent {
	tool, err := agentloop.NewTool("flaky", "Fails at first.", func(ctx context.Context, _ struct{}) (string, error) {
		if attempts.Add(1) <= failures {
			return "", fmt.Errorf("upstream busy: %w", temporalrun.ErrRetry)
		}
		return "done", nil
	})
	if err != nil {
		panic(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("", "flaky", struct{}{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
	)
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}}
}

func toolResults(items []agentloop.Item) []agentloop.ToolResult {
	var out []agentloop.ToolResult
	for _, it := range items {
		if r, ok := it.(agentloop.ToolResultReady); ok {
			out = append(out, r.Result)
		}
	}
	return out
}

func TestWorkflow_FailedToolActivityIsRetriedPerItsPolicy(t *testing.T) {
	opts := temporalrun.Options{ToolRetry: map[string]*temporal.RetryPolicy{
		"flaky": {InitialInterval: time.Minute, MaximumAttempts: 3},
	}}

	t.Run("succeeds on the third attempt", func(t *testing.T) {
		var attempts atomic.Int32
		items, last, err := execute(t, flakyAgent(2, &attempts), opts, agentloop.History{agentloop.UserMessage("go")})
		require.NoError(t, err)
		require.Equal(t, int32(3), attempts.Load())
		res := toolResults(items)
		require.Len(t, res, 1)
		require.False(t, res[0].IsError)
		require.Equal(t, "done", res[0].Content)
		require.Equal(t, "ok", last.(agentloop.Final).Text)
	})
	t.Run("gives an error result after the last attempt", func(t *testing.T) {
		var attempts atomic.Int32
		items, _, err := execute(t, flakyAgent(10, &attempts), opts, agentloop.History{agentloop.UserMessage("go")})
		require.NoError(t, err)
		require.Equal(t, int32(3), attempts.Load(), "MaximumAttempts")
		res := toolResults(items)
		require.Len(t, res, 1)
		require.True(t, res[0].IsError)
		require.Contains(t, res[0].Content, "upstream busy")
	})
}

// approvalAgent's transfer tool needs approval; its model asks for one
// transfer, then answers.
func approvalAgent(transfers, modelCalls *atomic.Int32) *agentloop.Agent {
	tool, err := agentloop.NewTool("transfer", "Moves money.", func(ctx context.Context, _ struct{}) (string, error) {
		transfers.Add(1)
		return "moved", nil
	})
	if err != nil {
		panic(err)
	}
	tool.NeedsApproval = true
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		modelCalls.Add(1)
		for _, m := range req.Messages {
			if m.Role == agentloop.RoleTool {
				return []simtest.Step{simtest.Text("Transferred.")}, nil
			}
		}
		return []simtest.Step{simtest.Call("", "transfer", struct{}{})}, nil
	})
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}}
}

// Waits follow the seam's rule: the run ends with Pending and no workflow
// stays open; two days later (test-suite time) a new run, whose history
// carries the approval, goes on from the approved call.
func TestWorkflow_ApprovalTwoDaysLaterGoesOnFromTheApprovedCall(t *testing.T) {
	var transfers, modelCalls atomic.Int32
	agent := approvalAgent(&transfers, &modelCalls)
	_, last, err := execute(t, agent, temporalrun.Options{}, agentloop.History{agentloop.UserMessage("pay")})
	require.NoError(t, err)
	p, ok := last.(agentloop.Pending)
	require.True(t, ok, "got %T", last)
	require.Len(t, p.Approvals, 1)
	require.Zero(t, transfers.Load(), "nothing runs before the approval")

	// The second run starts two days of workflow time after the first, in
	// a workflow that sleeps before it: time skipping makes that instant.
	h, err := p.History.AppendApprovals(agentloop.Approval{CallID: p.Approvals[0].ID, Approved: true})
	require.NoError(t, err)
	r, err := temporalrun.New(agent, temporalrun.Options{})
	require.NoError(t, err)
	env := newEnv(t)
	r.Register(env)
	start := env.Now()
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) (temporalrun.Outcome, error) {
		if err := workflow.Sleep(ctx, 48*time.Hour); err != nil {
			return temporalrun.Outcome{}, err
		}
		var out temporalrun.Outcome
		err := workflow.ExecuteChildWorkflow(ctx, r.WorkflowName(), temporalrun.Input{ConversationID: "chat-1", History: h}).Get(ctx, &out)
		return out, err
	}, workflow.RegisterOptions{Name: "twoDaysLater"})
	env.ExecuteWorkflow("twoDaysLater")
	require.NoError(t, env.GetWorkflowError())
	require.GreaterOrEqual(t, env.Now().Sub(start), 48*time.Hour)
	var out temporalrun.Outcome
	require.NoError(t, env.GetWorkflowResult(&out))
	final, err := out.Item()
	require.NoError(t, err)
	require.Equal(t, "Transferred.", final.(agentloop.Final).Text)
	require.Equal(t, int32(1), transfers.Load(), "the approved call runs once")
	require.Equal(t, int32(2), modelCalls.Load(), "the first turn's model call is not made again")
}

func TestWorkflow_ToolActivityTimeoutIsTheToolsTimeout(t *testing.T) {
	var attempts atomic.Int32
	for _, c := range []struct {
		name        string
		tool, agent time.Duration
		opts        time.Duration
		want        time.Duration
	}{
		{"the tool's", 90 * time.Second, 30 * time.Second, time.Minute, 90 * time.Second},
		{"the agent's", 0, 30 * time.Second, time.Minute, 30 * time.Second},
		{"the option's", 0, 0, time.Minute, time.Minute},
		{"the default", 0, 0, 0, temporalrun.DefaultToolTimeout},
	} {
		t.Run(c.name, func(t *testing.T) {
			agent := flakyAgent(0, &attempts)
			agent.Tools[0].Timeout = c.tool
			agent.ToolTimeout = c.agent
			r, err := temporalrun.New(agent, temporalrun.Options{ToolTimeout: c.opts})
			require.NoError(t, err)
			env := newEnv(t)
			r.Register(env)
			var got []time.Duration
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				if info.ActivityType.Name == "agentloop.tool" {
					got = append(got, info.StartToCloseTimeout)
				}
			})
			env.ExecuteWorkflow(r.WorkflowName(), temporalrun.Input{History: agentloop.History{agentloop.UserMessage("go")}})
			require.NoError(t, env.GetWorkflowError())
			require.Equal(t, []time.Duration{c.want}, got)
		})
	}
}

func TestWorkflow_PlainToolErrorIsAResultNotARetry(t *testing.T) {
	var attempts atomic.Int32
	tool, err := agentloop.NewTool("broken", "Fails.", func(ctx context.Context, _ struct{}) (string, error) {
		attempts.Add(1)
		return "", errors.New("no such city")
	})
	require.NoError(t, err)
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("", "broken", struct{}{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("sorry")}},
	)
	items, _, err := execute(t, &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}}, temporalrun.Options{}, agentloop.History{agentloop.UserMessage("go")})
	require.NoError(t, err)
	require.Equal(t, int32(1), attempts.Load())
	res := toolResults(items)
	require.Len(t, res, 1)
	require.True(t, res[0].IsError)
	require.Contains(t, res[0].Content, "no such city")
}

// The package doc's account of where hooks run: the run's in the
// workflow, a tool call's in its activity, which resumes a run cut to the
// call (so OnRunStart and OnRunEnd run there too).
func TestWorkflow_ToolHooksRunInTheToolActivity(t *testing.T) {
	var calls, runStarts, runEnds, beforeTool atomic.Int32
	agent := weatherAgent(&calls)
	agent.Hooks = &agentloop.Hooks{
		OnRunStart: func(ctx context.Context, _ agentloop.RunStart) (context.Context, error) {
			runStarts.Add(1)
			return ctx, nil
		},
		OnRunEnd: func(context.Context, agentloop.RunEnd) { runEnds.Add(1) },
		BeforeToolCall: func(context.Context, *agentloop.ToolCall) (*agentloop.ToolResult, error) {
			beforeTool.Add(1)
			return nil, nil
		},
	}
	_, _, err := execute(t, agent, temporalrun.Options{}, agentloop.History{agentloop.UserMessage("weather?")})
	require.NoError(t, err)
	require.Equal(t, int32(2), beforeTool.Load(), "once per tool call")
	require.Equal(t, int32(3), runStarts.Load(), "the workflow's run and each tool activity's")
	require.Equal(t, int32(3), runEnds.Load())
}

func TestWorkflow_OnModelChunkSeesTheLiveChunksOfEachAttempt(t *testing.T) {
	var calls atomic.Int32
	var mu sync.Mutex
	var text []string
	var attempts []int32
	var turns []int
	opts := temporalrun.Options{OnModelChunk: func(_ string, step agentloop.Step, attempt int32, c agentloop.Chunk) {
		mu.Lock()
		defer mu.Unlock()
		if d, ok := c.(agentloop.TextDelta); ok && step.Turn == 2 {
			text = append(text, d.Text)
		}
		attempts = append(attempts, attempt)
		turns = append(turns, step.Turn)
	}}
	_, last, err := execute(t, weatherAgent(&calls), opts, agentloop.History{agentloop.UserMessage("weather?")})
	require.NoError(t, err)
	require.Equal(t, []string{"Sunny ", "in ", "both."}, text, "the model's own deltas, not whole parts")
	require.Equal(t, "Sunny in both.", last.(agentloop.Final).Text)
	for i := range attempts {
		require.Equal(t, int32(1), attempts[i])
	}
	require.Equal(t, 1, turns[0])
	require.Equal(t, 2, turns[len(turns)-1])
}

func TestWorkflow_RetriedModelCallStreamsAgainUnderTheNextAttempt(t *testing.T) {
	var n atomic.Int32
	model := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		if n.Add(1) == 1 {
			return []simtest.Step{simtest.Text("Hel"), simtest.Fail("connection reset")}, nil
		}
		return []simtest.Step{simtest.Text("Hello")}, nil
	})
	var mu sync.Mutex
	seen := map[int32]string{}
	opts := temporalrun.Options{
		ModelRetry: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 2},
		OnModelChunk: func(_ string, _ agentloop.Step, attempt int32, c agentloop.Chunk) {
			mu.Lock()
			defer mu.Unlock()
			if d, ok := c.(agentloop.TextDelta); ok {
				seen[attempt] += d.Text
			}
		},
	}
	items, last, err := execute(t, &agentloop.Agent{Model: model}, opts, agentloop.History{agentloop.UserMessage("hi")})
	require.NoError(t, err)
	require.Equal(t, map[int32]string{1: "Hel", 2: "Hello"}, seen)
	require.Equal(t, "Hello", last.(agentloop.Final).Text)
	require.Contains(t, items, agentloop.Item(agentloop.TextDelta{Text: "Hello"}), "the record holds the completed attempt only")
	require.NotContains(t, items, agentloop.Item(agentloop.TextDelta{Text: "Hel"}))
}

func TestWorkflow_ModelAndToolActivitiesHaveTheHeartbeatTimeoutOfTheOptions(t *testing.T) {
	var attempts atomic.Int32
	for _, c := range []struct {
		name string
		opt  time.Duration
		want time.Duration
	}{
		{"the default", 0, temporalrun.DefaultHeartbeat},
		{"the option's", 5 * time.Second, 5 * time.Second},
		{"none when negative", -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := temporalrun.New(flakyAgent(0, &attempts), temporalrun.Options{Heartbeat: c.opt})
			require.NoError(t, err)
			env := newEnv(t)
			r.Register(env)
			got := map[string]time.Duration{}
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				got[info.ActivityType.Name] = info.HeartbeatTimeout
			})
			env.ExecuteWorkflow(r.WorkflowName(), temporalrun.Input{History: agentloop.History{agentloop.UserMessage("go")}})
			require.NoError(t, env.GetWorkflowError())
			require.Equal(t, map[string]time.Duration{"agentloop.model": c.want, "agentloop.tool": c.want}, got)
		})
	}
}
