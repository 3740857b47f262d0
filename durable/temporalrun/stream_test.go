package temporalrun_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/outcome"
	"github.com/agentloop/agentloop/durable/temporalrun"
	"github.com/agentloop/agentloop/simtest"
)

// suiteClient is a client.Client whose ExecuteWorkflow runs the workflow
// in a test-suite environment where the runner is registered, as a worker
// of this process would, and keeps the run, as a server does: only
// ExecuteWorkflow and GetWorkflow are implemented.
type suiteClient struct {
	client.Client
	t      testing.TB
	starts atomic.Int32
	mu     sync.Mutex
	runner *temporalrun.Runner
	runs   map[string]*suiteRun // by workflow id: the runs it started or was given
}

func (c *suiteClient) GetWorkflow(_ context.Context, id, _ string) client.WorkflowRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[id]
}

func (c *suiteClient) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, name any, args ...any) (client.WorkflowRun, error) {
	c.starts.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs[opts.ID] != nil {
		return nil, serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "")
	}
	env := newEnv(c.t)
	env.SetStartWorkflowOptions(opts)
	c.runner.Register(env)
	run := &suiteRun{done: make(chan struct{})}
	if c.runs == nil {
		c.runs = map[string]*suiteRun{}
	}
	c.runs[opts.ID] = run
	go func() {
		defer close(run.done)
		env.ExecuteWorkflow(name, args...)
		if run.err = env.GetWorkflowError(); run.err == nil {
			run.err = env.GetWorkflowResult(&run.out)
		}
	}()
	return run, nil
}

type suiteRun struct {
	client.WorkflowRun
	done chan struct{}
	out  temporalrun.Outcome
	err  error
}

func (r *suiteRun) Get(ctx context.Context, ptr any) error {
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if r.err != nil {
		return r.err
	}
	*ptr.(*temporalrun.Outcome) = r.out
	return nil
}

func TestStream_YieldsTheItemsTheWorkflowMakesThenItsResult(t *testing.T) {
	var calls atomic.Int32
	rec := &recorder{}
	r, err := temporalrun.New(weatherAgent(&calls), temporalrun.Options{TaskQueue: "agents", OnItem: rec.onItem})
	require.NoError(t, err)
	c := &suiteClient{t: t, runner: r}
	var got []agentloop.Item
	for it, err := range r.Stream(context.Background(), c, temporalrun.Run{ID: "chat-1/1", ConversationID: "chat-1",
		History: agentloop.History{agentloop.UserMessage("weather?")}}) {
		require.NoError(t, err)
		got = append(got, it)
	}
	require.Empty(t, cmp.Diff(rec.items, got, cmpItems), "Stream yields what OnItem saw, in order")
	require.IsType(t, agentloop.Final{}, got[len(got)-1])
	require.Equal(t, int32(2), calls.Load())
}

func TestStream_OfARunThatEndedYieldsItsRecordedOutcomeWithoutRunningIt(t *testing.T) {
	var calls atomic.Int32
	r, err := temporalrun.New(weatherAgent(&calls), temporalrun.Options{TaskQueue: "agents"})
	require.NoError(t, err)
	done := &suiteRun{done: make(chan struct{}), out: temporalrun.Outcome{Outcome: outcome.Outcome{Kind: "final", Text: "earlier"}}}
	close(done.done)
	c := &suiteClient{t: t, runner: r, runs: map[string]*suiteRun{"chat-1/1": done}}
	var got []agentloop.Item
	for it, err := range r.Stream(context.Background(), c, temporalrun.Run{ID: "chat-1/1", ConversationID: "chat-1",
		History: agentloop.History{agentloop.UserMessage("weather?")}}) {
		require.NoError(t, err)
		got = append(got, it)
	}
	require.Len(t, got, 1)
	require.Equal(t, "earlier", got[0].(agentloop.Final).Text)
	require.Zero(t, calls.Load())
}

func TestStream_NeedsARunIDAndATaskQueue(t *testing.T) {
	var calls atomic.Int32
	r, err := temporalrun.New(weatherAgent(&calls), temporalrun.Options{})
	require.NoError(t, err)
	c := &suiteClient{t: t, runner: r}
	for _, err := range r.Stream(context.Background(), c, temporalrun.Run{ID: "x"}) {
		require.ErrorContains(t, err, "TaskQueue")
	}
	require.Zero(t, c.starts.Load(), "nothing starts")
}

func TestNew_NeedsAnAgentWithAModel(t *testing.T) {
	_, err := temporalrun.New(&agentloop.Agent{}, temporalrun.Options{})
	require.ErrorContains(t, err, "temporalrun: New needs an agent with a model")
}

// Each meet call waits until the other one started: the turn's activities
// must run at the same time, or the calls time out.
func TestWorkflow_ATurnsToolCallsRunConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(2)
	met := make(chan struct{})
	go func() { wg.Wait(); close(met) }()
	meet, err := agentloop.NewTool("meet", "Waits for the other.", func(ctx context.Context, _ struct{}) (string, error) {
		wg.Done()
		select {
		case <-met:
			return "met", nil
		case <-ctx.Done():
			return "", errors.New("alone")
		}
	})
	require.NoError(t, err)
	meet.Timeout = 10 * time.Second
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("", "meet", struct{}{}), simtest.Call("", "meet", struct{}{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
	)
	items, _, err := execute(t, &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{meet}}, temporalrun.Options{}, agentloop.History{agentloop.UserMessage("go")})
	require.NoError(t, err)
	res := toolResults(items)
	require.Len(t, res, 2)
	for _, r := range res {
		require.Equal(t, "met", r.Content)
	}
}

func TestWorker_NeedsAClientAndATaskQueue(t *testing.T) {
	var calls atomic.Int32
	r, err := temporalrun.New(weatherAgent(&calls), temporalrun.Options{})
	require.NoError(t, err)
	_, err = r.Worker(&suiteClient{t: t, runner: r}, worker.Options{})
	require.ErrorContains(t, err, "Options.TaskQueue")
	r, err = temporalrun.New(weatherAgent(&calls), temporalrun.Options{TaskQueue: "agents"})
	require.NoError(t, err)
	_, err = r.Worker(nil, worker.Options{})
	require.ErrorContains(t, err, "needs a client")
}

// blockingClient starts nothing until release is closed.
type blockingClient struct {
	client.Client
	started chan struct{}
	release chan struct{}
}

func (c *blockingClient) ExecuteWorkflow(ctx context.Context, _ client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	close(c.started)
	<-c.release
	return nil, errors.New("not started")
}

func TestStream_OneStreamPerRunInAProcess(t *testing.T) {
	var calls atomic.Int32
	r, err := temporalrun.New(weatherAgent(&calls), temporalrun.Options{TaskQueue: "agents"})
	require.NoError(t, err)
	c := &blockingClient{started: make(chan struct{}), release: make(chan struct{})}
	run := temporalrun.Run{ID: "chat-1/1"}
	first := make(chan error, 1)
	go func() {
		for _, err := range r.Stream(context.Background(), c, run) {
			first <- err
		}
	}()
	<-c.started // the first Stream is attached
	for _, err := range r.Stream(context.Background(), c, run) {
		require.ErrorContains(t, err, "already has a Stream attached")
	}
	close(c.release)
	require.ErrorContains(t, <-first, "not started")
}
