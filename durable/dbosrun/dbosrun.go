// Package dbosrun runs agentloop runs durably on DBOS Transact
// (github.com/dbos-inc/dbos-transact-golang), which keeps its state in
// PostgreSQL or SQLite: a run outlives the process that started it.
//
// A run is a DBOS workflow whose id the caller gives ([Run.ID]: derive it
// from the conversation and its stream). Each model call and each tool call
// of the run is a DBOS step whose result DBOS records (through the
// [agentloop.Effects] seam). When a process dies mid-run, DBOS recovers the
// workflow (on Launch, in a process with the same executor id): the
// recorded results are replayed, so a model call or a tool call that
// completed does not run again, and the run goes on from the first step
// without a result. A step that was in flight when the process died runs
// again: steps are at least once, so tools should use
// [agentloop.IdempotencyKey].
//
// A run that waits for a client result or an approval ends with an
// [agentloop.Pending], recorded as the workflow's result; resume it with a
// new [Run] (a new id) whose history carries the answer, in any process and
// at any time later.
//
// Items reach the iterator of [Runner.Stream] as the run makes them. A
// Stream of a run that another process started, or that this process
// recovers, yields the items made from the moment it attaches, then the
// run's last item or error; [Options.OnItem] sees every item of every run
// this process executes.
//
// A Runner is also an aisdk.Runner ([Runner.Start], [Runner.Stop]): with
// Options.OnItem set to the ChatServer's RunItem, aisdk's stored mode runs
// every run as a workflow, and the run, wherever DBOS executes it, saves
// the chat and writes its stream log (aisdk's package documentation says
// how a recovered run takes its stream over).
//
// This package is a Go module of its own, so that DBOS and its database
// drivers reach only the programs that import it.
package dbosrun

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/outcome"
)

// Options configure a [Runner]. The zero value is ready to use.
type Options struct {
	// Name names the runner's workflows in DBOS; it must be unique among a
	// DBOS context's runners and stay the same across deploys, or recovery
	// cannot find the runner. "" means "default".
	Name string
	// OnItem, if set, is called with every item (and the final error) of
	// every run this process executes, live or recovered, from the
	// goroutine that runs the run, before the item reaches an attached
	// Stream. A recovered run replays its completed model calls, so
	// OnItem sees their items again (whole parts, not the original deltas).
	// Once DBOS interrupts a run (its shutdown, or dbos.CancelWorkflow),
	// OnItem gets the run's end only: the items made after that (the
	// failed result of a tool call cut off, which DBOS does not record and
	// runs again when it resumes the run) are not the run's.
	OnItem func(runID string, item agentloop.Item, err error)
}

// Runner runs an agent's runs as DBOS workflows. Create it with [New]
// before dbos.Launch. It is safe for concurrent use.
type Runner struct {
	dbos  dbos.Context
	agent *agentloop.Agent
	opts  Options

	mu      sync.Mutex
	subs    map[string]*subscriber             // by run id: the Stream attached in this process
	cancels map[string]context.CancelCauseFunc // by run id: the runs executing in this process
}

// New registers agent's runs as a workflow of ctx and returns their runner.
// Call it before dbos.Launch, on every process start, with the same
// Options.Name, so that Launch can recover the runs a dead process left.
// The agent must not be modified afterwards.
func New(ctx dbos.Context, agent *agentloop.Agent, opts Options) (*Runner, error) {
	if ctx == nil || agent == nil || agent.Model == nil {
		return nil, errors.New("dbosrun: New needs a DBOS context and an agent with a model")
	}
	if opts.Name == "" {
		opts.Name = "default"
	}
	r := &Runner{dbos: ctx, agent: agent, opts: opts, subs: make(map[string]*subscriber), cancels: make(map[string]context.CancelCauseFunc)}
	if err := register(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// register registers r's workflow, turning DBOS's panic on a conflicting
// or late registration into an error.
func register(ctx dbos.Context, r *Runner) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("dbosrun: registering runner %q: %v", r.opts.Name, p)
		}
	}()
	dbos.RegisterWorkflow(ctx, r.workflow, dbos.WithWorkflowName("agentloop.run"), dbos.WithInstance(r))
	return nil
}

// ConfigName returns the runner's name; DBOS records it with each run so
// that recovery finds the runner.
func (r *Runner) ConfigName() string { return r.opts.Name }

// Run is one durable run.
type Run struct {
	// ID is the run's workflow id: the same id is the same run (starting it
	// again attaches to it, or returns its recorded outcome). Required.
	ID string
	// ConversationID names the conversation ([agentloop.RunOptions.ConversationID]);
	// it goes into the tools' idempotency keys.
	ConversationID string
	// History is the history the run starts from.
	History agentloop.History
	// ClientTools are the run's client tools ([agentloop.RunOptions.Tools]
	// that run on the client: definitions without a func), recorded with
	// the run so that a recovered run offers them too.
	ClientTools []agentloop.ToolDef
	// System, if not "", replaces the agent's system prompt for the run
	// ([agentloop.RunOptions.System]).
	System string
}

// input is what DBOS records as the workflow's input.
type input struct {
	ConversationID string              `json:"conversationId,omitempty"`
	History        agentloop.History   `json:"history"`
	ClientTools    []agentloop.ToolDef `json:"clientTools,omitempty"`
	System         string              `json:"system,omitempty"`
}

func (run Run) input() input {
	return input{ConversationID: run.ConversationID, History: run.History, ClientTools: run.ClientTools, System: run.System}
}

// Start starts the run runID from history h as [Runner.Stream] does, and
// returns once DBOS recorded it, without waiting for its items: they reach
// [Options.OnItem], in whichever process executes the run. opts may carry
// what the run records (ConversationID is conversationID; client tools,
// System); other options (server tools, Hooks, Settings, Budget,
// Effects) cannot be recorded with the run, and are refused with an
// error. Starting a run id that exists does not start it again. Start
// and [Runner.Stop] make a Runner an aisdk.Runner.
func (r *Runner) Start(ctx context.Context, runID, conversationID string, h agentloop.History, opts *agentloop.RunOptions) error {
	run := Run{ID: runID, ConversationID: conversationID, History: h}
	if runID == "" {
		return errors.New("dbosrun: Start: the run id is empty")
	}
	if opts != nil {
		if opts.Hooks != nil || opts.Settings != nil || opts.Budget != nil || opts.Effects != nil {
			return fmt.Errorf("dbosrun: run %q: Hooks, Settings, Budget and Effects of RunOptions cannot be recorded with a durable run; set them on the Agent", runID)
		}
		for _, t := range opts.Tools {
			if t == nil || !t.RunsOnClient() {
				return fmt.Errorf("dbosrun: run %q: only client tools can be recorded with a durable run; put server tools on the Agent", runID)
			}
			run.ClientTools = append(run.ClientTools, t.Def())
		}
		run.System = opts.System
	}
	if _, err := dbos.RunWorkflow(r.dbos, r.workflow, run.input(), dbos.WithWorkflowID(runID), dbos.WithRunInstance(r)); err != nil {
		return fmt.Errorf("dbosrun: starting run %q: %w", runID, err)
	}
	return nil
}

// Stop cancels the run runID with cause if it executes in this process,
// and reports whether it did: the run ends as a run whose context is
// cancelled does (an [agentloop.CancelledError], through OnItem and the
// attached Stream), and that ending is the workflow's recorded outcome. A
// run that executes elsewhere, or ended, is not touched.
func (r *Runner) Stop(runID string, cause error) bool {
	r.mu.Lock()
	cancel := r.cancels[runID]
	r.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel(cause)
	return true
}

// Stream starts run, or attaches to it if it exists, and returns its items
// as [agentloop.Agent.Stream] does. The run belongs to DBOS, not to the
// iterator: when the consumer stops ranging, or ctx is done, the run goes
// on (cancel it with dbos.CancelWorkflow). Only one Stream per run may be
// attached in a process at a time. A run that ended already yields its last
// item (an [agentloop.Final] or [agentloop.Pending]) or its error only;
// such errors are rebuilt from their record ([agentloop.CancelledError],
// [agentloop.TurnLimitError], [agentloop.TurnError], with the history) and
// their causes are plain errors.
//
// Stream leaves one goroutine waiting for the run's outcome until the run
// ends, even when the consumer stopped earlier.
func (r *Runner) Stream(ctx context.Context, run Run) iter.Seq2[agentloop.Item, error] {
	return func(yield func(agentloop.Item, error) bool) {
		if run.ID == "" {
			yield(nil, errors.New("dbosrun: Run.ID is empty"))
			return
		}
		s := &subscriber{ch: make(chan pair), gone: make(chan struct{})}
		r.mu.Lock()
		if r.subs[run.ID] != nil {
			r.mu.Unlock()
			yield(nil, fmt.Errorf("dbosrun: run %q already has a Stream attached in this process", run.ID))
			return
		}
		r.subs[run.ID] = s
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			delete(r.subs, run.ID)
			r.mu.Unlock()
			close(s.gone)
		}()

		h, err := dbos.RunWorkflow(r.dbos, r.workflow, run.input(), dbos.WithWorkflowID(run.ID), dbos.WithRunInstance(r))
		if err != nil {
			yield(nil, fmt.Errorf("dbosrun: starting run %q: %w", run.ID, err))
			return
		}
		ended := make(chan pair, 1)
		go func() {
			out, err := h.GetResult()
			if err != nil {
				ended <- pair{err: fmt.Errorf("dbosrun: run %q: %w", run.ID, err)}
				return
			}
			it, err := out.Item("dbosrun")
			ended <- pair{it, err}
		}()
		for {
			select {
			case p := <-s.ch:
				if !yield(p.item, p.err) || p.err != nil || last(p.item) {
					return
				}
			case p := <-ended:
				yield(p.item, p.err)
				return
			case <-ctx.Done():
				yield(nil, fmt.Errorf("dbosrun: run %q: %w", run.ID, context.Cause(ctx)))
				return
			}
		}
	}
}

type pair struct {
	item agentloop.Item
	err  error
}

// subscriber is a Stream attached to a run in this process.
type subscriber struct {
	ch   chan pair
	gone chan struct{} // closed when the Stream returns
}

func last(it agentloop.Item) bool {
	switch it.(type) {
	case agentloop.Final, agentloop.Pending:
		return true
	}
	return false
}

// workflow runs one run; DBOS calls it to start the run and to recover it.
func (r *Runner) workflow(ctx dbos.Context, in input) (outcome.Outcome, error) {
	id, err := dbos.GetWorkflowID(ctx)
	if err != nil {
		return outcome.Outcome{}, fmt.Errorf("dbosrun: %w", err)
	}
	e := &effects{wf: ctx}
	opts := &agentloop.RunOptions{ConversationID: in.ConversationID, System: in.System, Effects: e}
	for _, d := range in.ClientTools {
		t, err := agentloop.NewClientTool(d.Name, d.Description, d.Schema)
		if err != nil {
			return outcome.Outcome{}, fmt.Errorf("dbosrun: run %q: client tool %q: %w", id, d.Name, err)
		}
		opts.Tools = append(opts.Tools, t)
	}
	// The run's own context, so that Stop ends the run the way a
	// cancelled run ends, with an outcome DBOS records; DBOS's shutdown
	// cancels ctx itself, and then records nothing (the run is recovered).
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.mu.Lock()
	r.cancels[id] = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.cancels, id)
		r.mu.Unlock()
	}()
	var out outcome.Outcome
	for it, err := range r.agent.Stream(rctx, in.History, opts) {
		e.count(it)
		end := err != nil || last(it)
		if end {
			it = outcome.AddSubUsage(it, r.agent.Name, e.replayedUsage())
			out = outcome.Of(it, err)
		}
		if ctx.Err() != nil && !end {
			// DBOS interrupted the workflow (its shutdown, or
			// CancelWorkflow): a step in flight failed for that alone and
			// is not recorded, so its result and what follows are not the
			// run's; only the run's end is told.
			continue
		}
		r.deliver(id, it, err)
	}
	return out, nil
}

// deliver hands an item to OnItem and to the Stream attached to the run,
// if any; a Stream that goes away gets no more.
func (r *Runner) deliver(id string, it agentloop.Item, err error) {
	if r.opts.OnItem != nil {
		r.opts.OnItem(id, it, err)
	}
	r.mu.Lock()
	s := r.subs[id]
	r.mu.Unlock()
	if s == nil {
		return
	}
	select {
	case s.ch <- pair{it, err}:
	case <-s.gone:
	}
}

// effects runs a run's model and tool calls as steps of its workflow.
type effects struct {
	wf dbos.Context

	mu sync.Mutex
	// live is the usage of the sub-runs of the agent tools' calls that
	// run live, per call id and agent, as the run yields their items.
	live map[string]map[string]agentloop.Usage
	// replayed is the usage of the sub-runs of replayed tool steps, per
	// agent: the run did not see their items, the steps recorded it.
	replayed map[string]agentloop.Usage
}

// count follows the run's items: a sub-run's TurnEnd, at any depth, adds
// its usage to the call's.
func (e *effects) count(it agentloop.Item) {
	n, ok := it.(*agentloop.Nested)
	if !ok {
		return
	}
	te, ok := n.Item.(agentloop.TurnEnd)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.live == nil {
		e.live = make(map[string]map[string]agentloop.Usage)
	}
	e.live[n.CallID] = outcome.AddUsage(e.live[n.CallID], map[string]agentloop.Usage{n.Agent: te.Usage})
}

// subUsage returns, and forgets, the usage of the sub-runs of the call
// callID, which has returned (so the run yielded its items).
func (e *effects) subUsage(callID string) map[string]agentloop.Usage {
	e.mu.Lock()
	defer e.mu.Unlock()
	u := e.live[callID]
	delete(e.live, callID)
	return u
}

func (e *effects) replayedUsage() map[string]agentloop.Usage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.replayed
}

func (e *effects) Model(_ context.Context, _ agentloop.Step, call func() (agentloop.ModelReply, error)) (agentloop.ModelReply, error) {
	return dbos.RunAsStep(e.wf, func(context.Context) (agentloop.ModelReply, error) { return call() },
		dbos.WithStepName("agentloop.model"))
}

func (e *effects) Tool(_ context.Context, step agentloop.Step, call func() agentloop.ToolResult, done func(agentloop.ToolResult)) {
	// The step records the result with a paused sub-run's state, so
	// that a replayed step pauses the run as the live one did, and an
	// agent tool's sub-runs' usage, so that a replayed step counts it
	// (the run does not see their items again). When call returns, the
	// run has yielded the call's items, so count has seen them.
	var ran atomic.Bool
	ch, err := dbos.Go(e.wf, func(context.Context) (outcome.ToolStep, error) {
		ran.Store(true)
		rec := outcome.StepOf(call())
		rec.SubUsage = e.subUsage(step.CallID)
		return rec, nil
	}, dbos.WithStepName("agentloop.tool/"+step.Name))
	if err != nil {
		done(stepFailed(step, err))
		return
	}
	go func() {
		o := <-ch
		if o.Err != nil {
			done(stepFailed(step, o.Err))
			return
		}
		if !ran.Load() {
			e.mu.Lock()
			e.replayed = outcome.AddUsage(e.replayed, o.Result.SubUsage)
			e.mu.Unlock()
		}
		done(o.Result.Result())
	}()
}

// stepFailed is the result of a tool step that DBOS could not run or record.
func stepFailed(step agentloop.Step, err error) agentloop.ToolResult {
	return agentloop.ToolResult{CallID: step.CallID, Name: step.Name, IsError: true, Err: err,
		Content: "error: the tool call could not be run durably: " + err.Error()}
}
