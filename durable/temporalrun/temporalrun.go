// Package temporalrun runs agentloop runs durably on Temporal
// (go.temporal.io/sdk): a run is a Temporal workflow, each model call and
// each tool call of the run is an activity, so a run outlives the worker
// that started it and a call that completed is not made again.
//
// The same [agentloop.Agent] runs in process ([agentloop.Agent.Stream]),
// on DBOS (durable/dbosrun) or on Temporal ([Runner.Stream]): only the
// runner differs. The workflow ranges over the agent's run with the
// [agentloop.Effects] seam plugged in:
//
//   - A model call is an activity ("<Name>.model") that sends the request
//     the run built (after its BeforeModelCall hooks) to the worker's
//     model and returns the whole reply (Options.OnModelChunk sees the
//     live chunks meanwhile); the workflow replays the reply
//     through the loop, which yields its items (whole parts) and assigns
//     the call ids, so ids derive from the history, never from a clock or
//     a random source. Options.ModelRetry is its retry policy.
//   - A tool call is an activity ("<Name>.tool") whose StartToClose
//     timeout is the tool's timeout ([agentloop.Tool.Timeout], else
//     [agentloop.Agent.ToolTimeout], else Options.ToolTimeout) and whose
//     retry policy is Options.ToolRetry[tool name]. The worker runs the
//     call through the loop itself, so the tool hooks, the tool's timeout
//     and [agentloop.IdempotencyKey] behave as in process. Tool errors are
//     results, never retried; an activity that fails (a timeout, a lost
//     worker, or a tool error wrapping [ErrRetry]) is retried per policy,
//     and after the last attempt becomes an error result. A call that
//     runs for its whole timeout thus may be retried, where in process it
//     would get a timeout result at once. The calls of
//     one model turn start together, in call order, and run concurrently
//     on the workers; calls resumed from a history (approved ones) run one
//     after another.
//   - A worker that is lost while a call runs (killed, cut off) stops
//     heartbeating: after Options.Heartbeat the server gives the call to
//     another worker, which goes on from the recorded history; calls that
//     completed are not made again. Calls are at least once: the lost
//     worker's call runs again, with the same [agentloop.IdempotencyKey].
//
// A long run continues as new (a fresh workflow execution of the same
// workflow id, with the history so far as its input) after
// Options.ContinueAfter model calls, or when Temporal suggests it, so its
// event history stays small; its turn numbers, usage and turn limit count
// every execution, and [Runner.Stream] follows it to its end.
//
// Waits follow the seam's rule (design §3.9): a run that needs a client
// result or an approval ends with an [agentloop.Pending], recorded as the
// workflow's result, and the caller resumes it with a new [Run] whose
// history carries the answer, days later if need be. No workflow stays
// open meanwhile, so no signal or durable timer is needed.
//
// Items reach callers out of band, so the workflow stays deterministic:
// Options.OnItem and the [Runner.Stream] attached in the worker's process
// see each item once per process, in order. A worker that takes a run over
// from another process replays its history first: the items of the
// replayed part reach OnItem too (whole parts), just before the first item
// the worker makes itself, as a recovered DBOS run's do; a replay that
// never goes on (a replayer's) delivers nothing, and a replay of a run
// this process delivered already (after the worker's cache dropped it)
// does not deliver those items again.
//
// An agent tool's call ([agentloop.AgentTool]) runs its sub-run in the tool
// activity: the sub-run's items ([agentloop.Nested]) reach OnItem and the
// attached Stream from there, as they happen, between the call's TurnEnd
// and its ToolResultReady, as in process, when a worker of this process
// executes the run. The server hands a call's first attempt to the worker
// that scheduled it (eager activity execution, on by default; leave
// worker.Options.DisableEagerActivities false), which runs the workflow;
// a retry may run on any worker of the task queue, and an attempt that
// runs in another process hands its items to nobody there (that process
// does not deliver the run). A retried activity runs its sub-run again, and its items come
// again from the sub-run's first TurnStart (Turn 1); an earlier attempt
// still running delivers nothing more once a later one delivered.
//
// A Runner is also an aisdk.Runner ([Runner.Start], [Runner.Stop]): with
// Options.Client set and Options.OnItem set to the ChatServer's RunItem,
// aisdk's stored mode runs every run as a workflow, and the worker that
// executes it saves the chat and writes its stream log. Start starts the
// run eagerly on this process's worker when it can; [Runner.Stop] cancels
// the workflow (a recorded event), and the run ends as a cancelled run.
//
// Hooks run where the loop runs them. The run's hooks run in the workflow,
// and again each time Temporal replays the workflow on a worker that did
// not keep it cached (as the seam's replays do: the delta hooks see whole
// parts); a tool call's hooks (BeforeToolCall, ToolContext, AfterToolCall)
// run in its activity, once per attempt, and since the activity resumes a
// run cut to the call, OnRunStart and OnRunEnd run there too. Hooks that
// record (telemetry) should therefore tolerate repeats.
//
// Its tests run the workflow in Temporal's in-process test suite, replay
// recorded histories, and run against a real Temporal server when
// AGENTLOOP_TEST_TEMPORAL names one (as CI does; see .ci/temporal.sh): a
// run end to end, a worker killed with SIGKILL or stopped with SIGTERM
// mid-call, an approval across workers, and the cost per step.
//
// This package is a Go module of its own: go.temporal.io/sdk brings gRPC,
// which the rest of agentloop does not. It uses go.temporal.io/sdk v1.48,
// the newest release that supports Go 1.25.
package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentloop/agentloop"
)

// ErrRetry marks a tool error as transient: a tool whose func returns an
// error wrapping ErrRetry fails its activity, which Temporal retries per
// the tool's retry policy, instead of handing the error to the model.
var ErrRetry = errors.New("temporalrun: retry the tool call")

// Default timeouts of the activities.
const (
	DefaultModelTimeout = 10 * time.Minute
	DefaultToolTimeout  = time.Hour
	// DefaultHeartbeat is the heartbeat timeout of model and tool calls.
	DefaultHeartbeat = 30 * time.Second
)

// Options configure a [Runner]. The zero value is ready to use but for
// TaskQueue, which [Runner.Worker] and [Runner.Stream] need.
type Options struct {
	// Name prefixes the workflow's and activities' type names
	// ("<Name>.run", "<Name>.model", "<Name>.tool"). Histories record
	// them: keep it the same across deploys. "" means "agentloop".
	Name string
	// TaskQueue is the task queue of the runner's workflows and workers.
	TaskQueue string
	// ModelTimeout is the StartToClose timeout of a model call; 0 means
	// DefaultModelTimeout.
	ModelTimeout time.Duration
	// ModelRetry is the retry policy of model calls; nil means at most 3
	// attempts with Temporal's default backoff.
	ModelRetry *temporal.RetryPolicy
	// ToolTimeout is the StartToClose timeout of a tool call whose tool
	// and agent set none; 0 means DefaultToolTimeout.
	ToolTimeout time.Duration
	// ToolRetry holds the retry policies of tool calls by tool name; a
	// tool that has none gets at most 3 attempts.
	ToolRetry map[string]*temporal.RetryPolicy
	// Heartbeat is the heartbeat timeout of model and tool calls: while a
	// call runs, its activity heartbeats at a third of it, so the call of
	// a worker that was lost (killed, cut off) is retried on another one
	// after Heartbeat, not after the call's whole timeout. 0 means
	// DefaultHeartbeat; a negative value sends no heartbeats (a lost
	// worker's call then waits for its timeout). Temporal's SDK sends a
	// heartbeat at most every 0.8 × Heartbeat, so a value of a few seconds
	// or less risks timing out the calls of a busy worker.
	Heartbeat time.Duration
	// ContinueAfter bounds the model calls one workflow execution makes:
	// after that many, the run continues as new, with the history so far
	// as its input, before its next model call, so that a long run's event
	// history stays small (every activity's input holds the history). 0
	// means no bound; a run also continues as new when Temporal suggests
	// it (a history of thousands of events or megabytes). The run stays
	// one run: the same workflow id, turn numbers, usage and turn limit
	// counting every execution. A run with an [agentloop.Budget] does not
	// continue as new (its budget would count one execution).
	ContinueAfter int
	// OnItem, if set, is called with every item (and the final error) of
	// every run this process's workers make, from the workflow's
	// goroutine, once per process (see the package doc for replays), and
	// with a sub-agent's items ([agentloop.Nested]) from the tool
	// activity that runs its sub-run, when it runs in this process; never
	// twice at a time for one run. It must not block for long (Temporal
	// fails a workflow task that holds its goroutine for over a second).
	OnItem func(runID string, item agentloop.Item, err error)
	// OnModelChunk, if set, is called in the model activity with each
	// chunk the model streams, as it comes: the live tokens, before the
	// workflow has the reply. attempt counts the activity's attempts from
	// 1; a retried call streams again, so a consumer that shows the chunks
	// drops those of an earlier attempt of the same step. The record is
	// OnItem's: the workflow yields the reply's items in whole parts once
	// the call completes.
	OnModelChunk func(runID string, step agentloop.Step, attempt int32, chunk agentloop.Chunk)
	// Client is the Temporal client that [Runner.Start] and [Runner.Stop]
	// use (aisdk's Runner seam); nil makes them fail. [Runner.Stream] and
	// [Runner.Worker] take theirs as an argument.
	Client client.Client
}

// Runner runs an agent's runs as Temporal workflows. It is safe for
// concurrent use; the agent must not be modified once given to [New].
type Runner struct {
	agent *agentloop.Agent
	opts  Options

	mu      sync.Mutex
	subs    map[string]*subscriber // by run id
	running map[string]int         // the runs this process's workers execute: workflow calls by run id
	held    map[string]*delivery   // by "<run id>/<execution id>"
}

// New returns the runner of agent's runs.
func New(agent *agentloop.Agent, opts Options) (*Runner, error) {
	if agent == nil || agent.Model == nil {
		return nil, errors.New("temporalrun: New needs an agent with a model")
	}
	if opts.Name == "" {
		opts.Name = "agentloop"
	}
	return &Runner{agent: agent, opts: opts, subs: make(map[string]*subscriber), running: make(map[string]int), held: make(map[string]*delivery)}, nil
}

// WorkflowName returns the workflow type name of the runner's runs.
func (r *Runner) WorkflowName() string { return r.opts.Name + ".run" }

// Registry is where the runner registers its workflow and activities: a
// [worker.Worker], or a testsuite.TestWorkflowEnvironment.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Register registers the runner's workflow and activities with reg.
func (r *Runner) Register(reg Registry) {
	reg.RegisterWorkflowWithOptions(r.workflow, workflow.RegisterOptions{Name: r.WorkflowName()})
	reg.RegisterActivityWithOptions(r.modelActivity, activity.RegisterOptions{Name: r.opts.Name + ".model"})
	reg.RegisterActivityWithOptions(r.toolActivity, activity.RegisterOptions{Name: r.opts.Name + ".tool"})
}

// Worker returns a worker of the runner's task queue with the runner
// registered. An app starts it beside its HTTP server (Start, and Stop on
// shutdown); every replica runs one, and any of them may run any run.
func (r *Runner) Worker(c client.Client, opts worker.Options) (worker.Worker, error) {
	if c == nil || r.opts.TaskQueue == "" {
		return nil, errors.New("temporalrun: Worker needs a client and Options.TaskQueue")
	}
	w := worker.New(c, r.opts.TaskQueue, opts)
	r.Register(w)
	return w, nil
}

// Run is one durable run.
type Run struct {
	// ID is the run's workflow id: the same id is the same run (starting
	// it again attaches to it, or returns its recorded outcome; an id is
	// never run twice). Required.
	ID string
	// ConversationID names the conversation ([agentloop.RunOptions.ConversationID]);
	// it goes into the tools' idempotency keys.
	ConversationID string
	// History is the history the run starts from.
	History agentloop.History
	// ClientTools are the run's client tools ([agentloop.RunOptions.Tools]
	// that run on the client), recorded with the run.
	ClientTools []agentloop.ToolDef
	// System is the run's system prompt override ([agentloop.RunOptions.System]).
	System string
}

func (run Run) input() Input {
	return Input{ConversationID: run.ConversationID, History: run.History, ClientTools: run.ClientTools, System: run.System}
}

// Input is the workflow's input, as Temporal records it.
type Input struct {
	ConversationID string            `json:"conversationId,omitempty"`
	History        agentloop.History `json:"history"`
	// ClientTools and System are the run's RunOptions that it records.
	ClientTools []agentloop.ToolDef `json:"clientTools,omitempty"`
	System      string              `json:"system,omitempty"`
	// Turns and Usage are the model calls the run's earlier executions
	// made and their usage, when it continued as new; zero for a new run.
	Turns int             `json:"turns,omitempty"`
	Usage agentloop.Usage `json:"usage,omitzero"`
}

// Stream starts run on Temporal through c, or attaches to it if it is
// running, and returns its items as [agentloop.Agent.Stream] does. Items
// before the last come only when a worker of this process runs the
// workflow; the last item or error always comes, from the workflow's
// result ([agentloop.Final], [agentloop.Pending], or an error rebuilt from
// its record whose cause is a plain error). The run belongs to Temporal:
// when the consumer stops ranging, or ctx is done, it goes on. Only one
// Stream per run may be attached in a process at a time.
func (r *Runner) Stream(ctx context.Context, c client.Client, run Run) iter.Seq2[agentloop.Item, error] {
	return func(yield func(agentloop.Item, error) bool) {
		if run.ID == "" || c == nil || r.opts.TaskQueue == "" {
			yield(nil, errors.New("temporalrun: Stream needs a client, Options.TaskQueue and Run.ID"))
			return
		}
		s := r.attach(run.ID)
		if s == nil {
			yield(nil, fmt.Errorf("temporalrun: run %q already has a Stream attached in this process", run.ID))
			return
		}
		defer r.detach(run.ID)
		wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: run.ID, TaskQueue: r.opts.TaskQueue,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE},
			r.WorkflowName(), run.input())
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) { // the run ended already: its recorded outcome
			wr, err = c.GetWorkflow(ctx, run.ID, ""), nil
		}
		if err != nil {
			yield(nil, fmt.Errorf("temporalrun: starting run %q: %w", run.ID, err))
			return
		}
		ended := make(chan pair, 1)
		go func() {
			var out Outcome
			if err := wr.Get(ctx, &out); err != nil {
				ended <- pair{err: fmt.Errorf("temporalrun: run %q: %w", run.ID, err)}
				return
			}
			it, err := out.Item()
			ended <- pair{it, err}
		}()
		for {
			select {
			case <-s.ready:
				for _, p := range s.take() {
					if !yield(p.item, p.err) || p.err != nil || last(p.item) {
						return
					}
				}
			case p := <-ended:
				for _, q := range s.take() { // items the workflow made before it ended
					if !yield(q.item, q.err) || q.err != nil || last(q.item) {
						return
					}
				}
				yield(p.item, p.err)
				return
			}
		}
	}
}

type pair struct {
	item agentloop.Item
	err  error
}

// subscriber is a Stream attached to a run in this process. The workflow
// never blocks on it: items queue until the Stream takes them.
type subscriber struct {
	mu    sync.Mutex
	queue []pair
	ready chan struct{} // has a token when queue may be non-empty
}

func (s *subscriber) put(p pair) {
	s.mu.Lock()
	s.queue = append(s.queue, p)
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

func (s *subscriber) take() []pair {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

func (r *Runner) attach(id string) *subscriber {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subs[id] != nil {
		return nil
	}
	s := &subscriber{ready: make(chan struct{}, 1)}
	r.subs[id] = s
	return s
}

func (r *Runner) detach(id string) {
	r.mu.Lock()
	delete(r.subs, id)
	r.mu.Unlock()
}

func last(it agentloop.Item) bool {
	switch it.(type) {
	case agentloop.Final, agentloop.Pending:
		return true
	}
	return false
}

// deliver hands an item to OnItem and to the Stream attached to the run.
func (r *Runner) deliver(id string, it agentloop.Item, err error) {
	if r.opts.OnItem != nil {
		r.opts.OnItem(id, it, err)
	}
	r.mu.Lock()
	s := r.subs[id]
	r.mu.Unlock()
	if s != nil {
		s.put(pair{it, err})
	}
}

// Start starts the run runID from history h on Temporal through
// Options.Client, and returns once the server recorded it, without
// waiting for its items: they reach [Options.OnItem] in whichever process's
// worker executes the run. opts may carry what the run records
// (ConversationID is conversationID; client tools, System); other options
// (server tools, Hooks, Settings, Budget, Effects) cannot be recorded with
// the run, and are refused with an error. Starting a run id that exists
// does not start it again. The start is eager when this process runs a
// worker of the task queue with the same client (the server hands the
// run's first workflow task to it), so a run usually executes where it
// was started, until that process goes away. Start and [Runner.Stop] make
// a Runner an aisdk.Runner.
func (r *Runner) Start(ctx context.Context, runID, conversationID string, h agentloop.History, opts *agentloop.RunOptions) error {
	run := Run{ID: runID, ConversationID: conversationID, History: h}
	if opts != nil {
		if opts.Hooks != nil || opts.Settings != nil || opts.Budget != nil || opts.Effects != nil {
			return fmt.Errorf("temporalrun: run %q: Hooks, Settings, Budget and Effects of RunOptions cannot be recorded with a durable run; set them on the Agent", runID)
		}
		for _, t := range opts.Tools {
			if t == nil || !t.RunsOnClient() {
				return fmt.Errorf("temporalrun: run %q: only client tools can be recorded with a durable run; put server tools on the Agent", runID)
			}
			run.ClientTools = append(run.ClientTools, t.Def())
		}
		run.System = opts.System
	}
	if runID == "" || r.opts.Client == nil || r.opts.TaskQueue == "" {
		return errors.New("temporalrun: Start needs Options.Client, Options.TaskQueue and a run id")
	}
	_, err := r.opts.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runID, TaskQueue: r.opts.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, EnableEagerStart: true},
		r.WorkflowName(), run.input())
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("temporalrun: starting run %q: %w", runID, err)
	}
	return nil
}

// Stop cancels the run runID if a worker of this process executes it, and
// reports whether it asked Temporal to: the cancellation is an event of
// the run's history, and the run ends as a run whose context is cancelled
// does, at its next model or tool call's end (an [agentloop.CancelledError]
// whose cause is [ErrStopped], through OnItem and the attached Stream),
// which is the workflow's recorded outcome. cause is not recorded
// (Temporal's cancellation carries none). A run that executes elsewhere,
// or ended, is not touched.
func (r *Runner) Stop(runID string, cause error) bool {
	r.mu.Lock()
	here := r.running[runID] > 0
	r.mu.Unlock()
	if !here || r.opts.Client == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.opts.Client.CancelWorkflow(ctx, runID, "") == nil
}

// executing records that a worker of this process executes the run id
// until the returned func is called.
func (r *Runner) executing(id string) func() {
	r.mu.Lock()
	r.running[id]++
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		if r.running[id]--; r.running[id] <= 0 {
			delete(r.running, id)
		}
		r.mu.Unlock()
	}
}

// delivery is what this process delivered of one workflow execution: the
// items before next went to OnItem; held are the items from next on that a
// replay made, delivered before the first item made live.
type delivery struct {
	next int
	held []pair

	// mu orders the execution's live items with the sub-runs' items that
	// its tool activities in this process hand over (design.md §3.10):
	// open holds the calls whose activities the live execution awaits,
	// with the attempt whose items go out (0 until one hands an item
	// over). A call's items go out only while it is open, so none comes
	// after its ToolResultReady, and only its latest attempt's.
	mu   sync.Mutex
	open map[string]int32
}

// openCall marks a call whose activity the live execution awaits.
func (d *delivery) openCall(callID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.open == nil {
		d.open = make(map[string]int32)
	}
	d.open[callID] = 0
}

// closeCall ends the delivery of a call's sub-run items, before the loop
// gets its result.
func (d *delivery) closeCall(callID string) {
	d.mu.Lock()
	delete(d.open, callID)
	d.mu.Unlock()
}

// nested delivers an item of the sub-run of the call callID that attempt
// of its activity made, if the call is open and no later attempt handed
// items over; a later attempt's first item starts its sub-run over.
func (d *delivery) nested(r *Runner, id, callID string, attempt int32, n *agentloop.Nested) {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.open[callID]
	if !ok || attempt < at {
		return
	}
	d.open[callID] = attempt
	r.deliver(id, n, nil)
}

// executionDelivery returns the delivery record of the execution key if
// a worker of this process executes it, or nil.
func (r *Runner) executionDelivery(key string) *delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held[key]
}

// delivery returns the delivery record of the execution key. Only the
// execution's workflow goroutine uses it.
func (r *Runner) delivery(key string) *delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.held[key]
	if d == nil {
		d = &delivery{}
		r.held[key] = d
	}
	return d
}

// delivered forgets the record of an execution that ended.
func (r *Runner) delivered(key string) {
	r.mu.Lock()
	delete(r.held, key)
	r.mu.Unlock()
}

// offer delivers the execution's item n once in this process: an item a
// replay makes is held until the execution makes one live (a replay that
// never goes live, such as a replayer's, delivers nothing; one that goes
// on from another process's history delivers the run from its start, as a
// recovered run does), and an item delivered already (a replay after the
// worker's cache dropped the execution) is not delivered again.
func (d *delivery) offer(r *Runner, id string, n int, replaying bool, p pair) {
	if n < d.next+len(d.held) {
		return
	}
	if replaying {
		d.held = append(d.held, p)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, q := range d.held {
		r.deliver(id, q.item, q.err)
	}
	d.next += len(d.held) + 1
	d.held = nil
	r.deliver(id, p.item, p.err)
}
