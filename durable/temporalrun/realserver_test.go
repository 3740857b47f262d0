package temporalrun_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/enginetest"
	"github.com/agentloop/agentloop/durable/temporalrun"
)

// The tests in this file run against a real Temporal server, named by
// AGENTLOOP_TEST_TEMPORAL (host:port of its frontend). .ci/run builds one
// (.ci/temporal.sh) and starts it; by hand:
//
//	dir=$(bash .ci/temporal.sh) && cp -R "$dir/config" /tmp/t && cd /tmp/t &&
//	  "$dir/temporal-server" --root . --env development-sqlite --allow-no-auth start
//	AGENTLOOP_TEST_TEMPORAL=127.0.0.1:7233 go test ./durable/temporalrun
const serverEnv = "AGENTLOOP_TEST_TEMPORAL"

// The child process of testLostWorker: its worker runs the run until
// tool b starts, says so on stdout and blocks there until the test kills
// it (SIGKILL) or stops it (SIGTERM).
func TestMain(m *testing.M) {
	if hostPort := os.Getenv("TEMPORALRUN_CHILD_SERVER"); hostPort != "" {
		os.Exit(child(hostPort, os.Getenv("TEMPORALRUN_CHILD_QUEUE"), os.Getenv("TEMPORALRUN_CHILD_RUN"), os.Getenv("TEMPORALRUN_CHILD_MARKS")))
	}
	os.Exit(m.Run())
}

func child(hostPort, queue, runID, marks string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	c, err := dial(hostPort)
	if err != nil {
		return fail(err)
	}
	blocked := make(chan struct{})
	r, err := temporalrun.New(enginetest.MarkingAgent(marks, blocked), temporalrun.Options{TaskQueue: queue, Heartbeat: crashHeartbeat})
	if err != nil {
		return fail(err)
	}
	w, err := r.Worker(c, worker.Options{})
	if err == nil {
		err = w.Start()
	}
	if err != nil {
		return fail(err)
	}
	// A deploy stops the process with SIGTERM: the worker stops (its
	// calls in flight are cancelled) and the process exits.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		w.Stop()
		os.Exit(0)
	}()
	go func() {
		<-blocked
		fmt.Println("b started")
	}()
	for _, err := range r.Stream(context.Background(), c, crashRun(runID)) {
		if err != nil {
			return fail(err)
		}
	}
	return 0
}

// crashHeartbeat is the heartbeat timeout of the crash test's calls: how
// long the server waits before it gives a killed worker's call to another.
// The SDK sends heartbeats every 0.8 of it, so it leaves a loaded
// machine's worker a second of slack.
const crashHeartbeat = 5 * time.Second

func crashRun(id string) temporalrun.Run {
	return temporalrun.Run{ID: id, ConversationID: "chat-1", History: agentloop.History{agentloop.UserMessage("go")}}
}

func quietLogger() log.Logger { return log.NewStructuredLogger(slog.New(slog.DiscardHandler)) }

func dial(hostPort string) (client.Client, error) {
	return client.Dial(client.Options{HostPort: hostPort, Namespace: "default", Logger: quietLogger()})
}

// serverReady registers the "default" namespace on the server when it is
// missing and waits until the server serves it (the frontend's namespace
// cache catches up within seconds); once per test binary.
var serverReady = sync.OnceValue(func() error {
	hostPort := os.Getenv(serverEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var err error
	for {
		if err = tryReady(ctx, hostPort); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Temporal server at %s is not ready: %w", hostPort, err)
		case <-tick.C: // the server is starting, or its namespace cache is behind
		}
	}
})

func tryReady(ctx context.Context, hostPort string) error {
	nc, err := client.NewNamespaceClient(client.Options{HostPort: hostPort, Logger: quietLogger()})
	if err != nil {
		return err
	}
	defer nc.Close()
	err = nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: "default",
		WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return err
	}
	c, err := dial(hostPort)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.DescribeTaskQueue(ctx, "ready", enumspb.TASK_QUEUE_TYPE_WORKFLOW) // needs the namespace served
	return err
}

// realServer returns a client of the real Temporal server, with the
// "default" namespace, or skips the test (fails it in CI) without one.
func realServer(t testing.TB) (client.Client, string) {
	t.Helper()
	hostPort := os.Getenv(serverEnv)
	if hostPort == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set; CI runs temporalrun against a real Temporal server (.ci/temporal.sh)", serverEnv)
		}
		t.Skipf("no real Temporal server: set %s=127.0.0.1:7233 with a server running (see realserver_test.go, .ci/temporal.sh)", serverEnv)
	}
	require.NoError(t, serverReady())
	c, err := dial(hostPort)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c, hostPort
}

// unique returns a name no earlier test run on the same server used.
func unique(t testing.TB, what string) string {
	return fmt.Sprintf("%s/%s/%d", strings.ReplaceAll(t.Name(), "/", "_"), what, time.Now().UnixNano())
}

// startWorker starts a worker of r in this process until the test ends.
func startWorker(t testing.TB, c client.Client, r *temporalrun.Runner) worker.Worker {
	t.Helper()
	w, err := r.Worker(c, worker.Options{})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return w
}

// design.md §3.10 on a real server: a sub-agent's items, made in the tool
// activity, reach the Stream as they happen, where they do in process.
func TestRealServer_ASubAgentsItemsStreamLiveFromTheToolActivity(t *testing.T) {
	c, _ := realServer(t)
	h := agentloop.History{agentloop.UserMessage("help")}
	want := inProcess(t, leadWithLookingHelper(t), h)

	r, err := temporalrun.New(leadWithLookingHelper(t), temporalrun.Options{TaskQueue: unique(t, "queue")})
	require.NoError(t, err)
	startWorker(t, c, r)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var got []agentloop.Item
	for it, err := range r.Stream(ctx, c, temporalrun.Run{ID: unique(t, "run"), ConversationID: "chat-1", History: h}) {
		require.NoError(t, err)
		got = append(got, it)
	}
	require.Empty(t, cmp.Diff(enginetest.WholeParts(want), got, cmpItems))
}

// With two workers (two processes' runners) on one task queue, a run's
// agent-tool call runs where its workflow runs: the server hands the
// activity that a workflow task schedules back to that worker (eager
// activity execution, on by default in the SDK and the server), so the
// runner that delivers the run's items delivers its sub-run's items too.
func TestRealServer_ASubAgentsCallRunsOnTheWorkerOfItsRunWhoseItemsShowThere(t *testing.T) {
	_, hostPort := realServer(t)
	queue := unique(t, "queue")
	type counts struct{ ends, nested int }
	var mu sync.Mutex
	seen := []map[string]*counts{{}, {}} // by runner, by run id
	var runners []*temporalrun.Runner
	for i := range 2 {
		c, err := dial(hostPort) // a client, and worker, of its own: another process
		require.NoError(t, err)
		t.Cleanup(c.Close)
		r, err := temporalrun.New(leadWithLookingHelper(t), temporalrun.Options{TaskQueue: queue, Client: c,
			OnItem: func(id string, it agentloop.Item, _ error) {
				mu.Lock()
				defer mu.Unlock()
				n := seen[i][id]
				if n == nil {
					n = &counts{}
					seen[i][id] = n
				}
				switch it.(type) {
				case agentloop.TurnEnd:
					n.ends++
				case *agentloop.Nested:
					n.nested++
				}
			}})
		require.NoError(t, err)
		startWorker(t, c, r)
		runners = append(runners, r)
	}
	c, _ := realServer(t)
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("%s-%d", unique(t, "run"), i)
		ids = append(ids, id)
		require.NoError(t, runners[i%2].Start(context.Background(), id, "chat-1", agentloop.History{agentloop.UserMessage("help")}, nil))
	}
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var out temporalrun.Outcome
		require.NoError(t, c.GetWorkflow(ctx, id, "").Get(ctx, &out))
		cancel()
		mu.Lock()
		a, b := seen[0][id], seen[1][id]
		mu.Unlock()
		if a == nil {
			a, b = b, a
		}
		require.NotNil(t, a, "run %s: no runner delivered it", id)
		assert.Equal(t, counts{ends: 2, nested: 11}, *a, "run %s: the runner that delivers it", id)
		assert.Nil(t, b, "run %s: the other runner delivers nothing of it", id)
	}
}

// A run that continues as new on the server stays one run for Stream:
// it follows the executions to the end and yields every item once.
func TestRealServer_ARunContinuedAsNewStreamsToItsEnd(t *testing.T) {
	c, _ := realServer(t)
	var localModel, localTools, model, tools atomic.Int32
	h := agentloop.History{agentloop.UserMessage("go")}
	want := inProcess(t, countingAgent(t, 5, &localModel, &localTools), h)

	r, err := temporalrun.New(countingAgent(t, 5, &model, &tools), temporalrun.Options{TaskQueue: unique(t, "queue"), ContinueAfter: 2})
	require.NoError(t, err)
	startWorker(t, c, r)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runID := unique(t, "run")
	var got []agentloop.Item
	for it, err := range r.Stream(ctx, c, temporalrun.Run{ID: runID, ConversationID: "chat-1", History: h}) {
		require.NoError(t, err)
		got = append(got, it)
	}
	require.Equal(t, []int32{6, 5}, []int32{model.Load(), tools.Load()}, "each model and tool call once")
	require.Empty(t, cmp.Diff(enginetest.WholeParts(want), got, cmpItems))
	d, err := c.DescribeWorkflowExecution(ctx, runID, "")
	require.NoError(t, err)
	first := d.GetWorkflowExecutionInfo().GetFirstRunId()
	require.NotEqual(t, first, d.GetWorkflowExecutionInfo().GetExecution().GetRunId(), "the run continued as new")
	if *update { // the first execution's history, for TestReplay_AContinuedRun*
		h := &historypb.History{}
		for it := c.GetWorkflowHistory(ctx, runID, first, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT); it.HasNext(); {
			ev, err := it.Next()
			require.NoError(t, err)
			h.Events = append(h.Events, ev)
		}
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(continuedHistoryFile, append(b, '\n'), 0o644))
	}
}

// A worker process killed (SIGKILL) while a slow tool runs: the server
// gives the call to another worker once the killed one's heartbeats stop,
// and that worker finishes the run without making the completed calls
// again.
func TestRealServer_AKilledWorkersRunIsFinishedByAnotherWithoutRepeatingCompletedSteps(t *testing.T) {
	testLostWorker(t, syscall.SIGKILL)
}

// A deploy: the worker process gets SIGTERM while a slow tool runs, stops
// its worker (cancelling the call) and exits; another worker finishes the
// run as after a kill.
func TestRealServer_AWorkerStoppedBySIGTERMHandsItsRunToAnother(t *testing.T) {
	testLostWorker(t, syscall.SIGTERM)
}

func testLostWorker(t *testing.T, sig syscall.Signal) {
	c, hostPort := realServer(t)
	queue, runID := unique(t, "queue"), unique(t, "run")
	marksPath := filepath.Join(t.TempDir(), "marks")

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TEMPORALRUN_CHILD_SERVER="+hostPort, "TEMPORALRUN_CHILD_QUEUE="+queue,
		"TEMPORALRUN_CHILD_RUN="+runID, "TEMPORALRUN_CHILD_MARKS="+marksPath)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
	}
	require.NoError(t, err, "the child ended before tool b started")
	require.Equal(t, "b started\n", line)
	require.NoError(t, cmd.Process.Signal(sig))
	_, _ = io.Copy(io.Discard, out)
	err = cmd.Wait()
	if sig == syscall.SIGTERM {
		require.NoError(t, err, "the worker process stops cleanly on SIGTERM")
	}

	// Another worker on the task queue; the test attaches to the run.
	var mu sync.Mutex
	var turns []int // the TurnStarts OnItem saw
	onItem := func(_ string, it agentloop.Item, _ error) {
		if ts, ok := it.(agentloop.TurnStart); ok {
			mu.Lock()
			turns = append(turns, ts.Turn)
			mu.Unlock()
		}
	}
	r, err := temporalrun.New(enginetest.MarkingAgent(marksPath, nil), temporalrun.Options{TaskQueue: queue, Heartbeat: crashHeartbeat, OnItem: onItem})
	require.NoError(t, err)
	startWorker(t, c, r)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	last, err := agentloop.Drain(r.Stream(ctx, c, crashRun(runID)))
	require.NoError(t, err)
	f, ok := last.(agentloop.Final)
	require.Truef(t, ok, "last item %T", last)
	assert.Equal(t, "done", f.Text)
	require.Len(t, f.History, 6, "user, call a, result, call b, result, answer")
	assert.Equal(t, "b done", f.History[4].Parts[0].ToolResult.Content)
	mu.Lock()
	assert.Equal(t, []int{1, 2, 3}, turns, "the worker that took the run over hands the replayed items to OnItem too, each once, in order")
	mu.Unlock()

	keyA := agentloop.Step{ConversationID: "chat-1", Turn: 1, CallID: "call_0_0"}.IdempotencyKey()[:8]
	keyB := agentloop.Step{ConversationID: "chat-1", Turn: 2, CallID: "call_1_0"}.IdempotencyKey()[:8]
	assert.Equal(t, map[string]int{
		"model 0": 1, "tool a " + keyA: 1, "model 1": 1, // completed before the signal: once
		"tool b " + keyB: 2, // in flight at the signal: again, with the same key
		"model 2":        1,
	}, enginetest.Marks(t, marksPath))
}

// A call that runs longer than the heartbeat timeout stays with its
// worker: the activity heartbeats while the tool runs, so the call is not
// timed out and retried.
func TestRealServer_ACallLongerThanTheHeartbeatTimeoutRunsOnce(t *testing.T) {
	c, _ := realServer(t)
	const heartbeat = crashHeartbeat
	var calls atomic.Int32
	slow, err := agentloop.NewRawTool("slow", "Takes a while.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		calls.Add(1)
		select { // a slow call: two heartbeat timeouts of wall time
		case <-time.After(2 * heartbeat):
			return "slow done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	require.NoError(t, err)
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if enginetest.Replies(req) == 0 {
				yield(agentloop.ToolCall{Name: "slow", Args: json.RawMessage(`{}`)}, nil)
				return
			}
			yield(agentloop.TextDelta{Text: "done"}, nil)
		}
	})
	r, err := temporalrun.New(&agentloop.Agent{Model: model, Tools: []*agentloop.Tool{slow}}, temporalrun.Options{
		TaskQueue: unique(t, "queue"), Heartbeat: heartbeat,
		ToolRetry: map[string]*temporal.RetryPolicy{"slow": {MaximumAttempts: 1}}, // a timeout would be final
	})
	require.NoError(t, err)
	startWorker(t, c, r)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	last, err := agentloop.Drain(r.Stream(ctx, c, temporalrun.Run{ID: unique(t, "run"), History: agentloop.History{agentloop.UserMessage("go")}}))
	require.NoError(t, err)
	f, ok := last.(agentloop.Final)
	require.Truef(t, ok, "last item %T", last)
	require.Equal(t, "slow done", f.History[2].Parts[0].ToolResult.Content)
	require.Equal(t, int32(1), calls.Load())
}
