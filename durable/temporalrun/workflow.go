package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/outcome"
)

// workflow runs one run; Temporal calls it to start the run and to replay
// it. It ranges over the agent's run on the workflow's goroutine: under
// effects the loop starts no goroutine and reads no clock, and every call
// goes through an activity, so the run is deterministic. A long run
// continues as new (see Options.ContinueAfter) with its history so far.
func (r *Runner) workflow(ctx workflow.Context, in Input) (Outcome, error) {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	defer r.executing(id)()
	// The loop's context is cancelled only when a call's activity comes
	// back cancelled because the workflow was (Runner.Stop): an event of
	// its history, so a replay cancels it at the same point.
	lctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	d := r.delivery(id + "/" + workflow.GetInfo(ctx).WorkflowExecution.RunID)
	e := &effects{r: r, wf: ctx, d: d, cur: in.History, cancel: cancel}
	capture := &agentloop.Hooks{BeforeModelCall: func(_ context.Context, req *agentloop.Request) error {
		e.req = req
		return nil
	}}
	agent, limit := r.agent, maxTurns(r.agent)
	if in.Turns > 0 { // a continued run: the turn limit counts its earlier executions' calls
		a := *r.agent
		a.MaxTurns = limit - in.Turns
		agent = &a
	}
	opts := &agentloop.RunOptions{Effects: e, ConversationID: in.ConversationID, Hooks: capture, System: in.System}
	for _, d := range in.ClientTools {
		t, err := agentloop.NewClientTool(d.Name, d.Description, d.Schema)
		if err != nil {
			return Outcome{}, fmt.Errorf("temporalrun: run %q: client tool %q: %w", id, d.Name, err)
		}
		opts.Tools = append(opts.Tools, t)
	}
	var out Outcome
	var next agentloop.History // the history to continue as new with
	n := 0                     // the index of the item in this execution
	for it, err := range agent.Stream(lctx, in.History, opts) {
		if ts, ok := it.(agentloop.TurnStart); ok && e.continueNow(ctx, ts.Turn, in.Turns, limit) {
			next = e.state()
			break // the turn is made again by the next execution
		}
		e.observe(it)
		it, err = in.carry(it, err, limit)
		it = outcome.AddSubUsage(it, r.agent.Name, e.sub)
		if err != nil || last(it) {
			out = outcomeOf(it, err)
		}
		d.offer(r, id, n, workflow.IsReplaying(ctx), pair{it, err})
		n++
	}
	r.delivered(id + "/" + workflow.GetInfo(ctx).WorkflowExecution.RunID)
	if next != nil {
		return Outcome{}, workflow.NewContinueAsNewError(ctx, r.WorkflowName(), Input{
			ConversationID: in.ConversationID, History: next, ClientTools: in.ClientTools, System: in.System,
			Turns: in.Turns + e.turns, Usage: in.Usage.Add(e.usage).Add(e.subTotal())})
	}
	return out, nil
}

func maxTurns(a *agentloop.Agent) int {
	if a.MaxTurns > 0 {
		return a.MaxTurns
	}
	return agentloop.DefaultMaxTurns
}

// continueNow reports whether the run continues as new instead of making
// the model call of its execution's turn: once Options.ContinueAfter
// calls were made in this execution, or Temporal suggests it (the event
// history grew large), and the history so far is known to the last tool
// result. A run with a budget never continues (the budget counts one
// execution's calls), nor one at its last allowed call.
func (e *effects) continueNow(ctx workflow.Context, turn, before, limit int) bool {
	made := turn - 1
	if made == 0 || !e.turnEnded || before+made >= limit || e.r.agent.Budget != (agentloop.Budget{}) {
		return false
	}
	after := e.r.opts.ContinueAfter
	if (after <= 0 || made < after) && !workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
		return false
	}
	h := e.state()
	return h != nil && len(h.Unanswered()) == 0
}

// carry makes the items and outcome of a continued execution those of
// the whole run: turn numbers, usage and the turn limit count the earlier
// executions too. (A sub-agent's calls run in a tool activity: the
// workflow adds their usage to the last item, outcome.AddSubUsage.)
func (in Input) carry(it agentloop.Item, err error, limit int) (agentloop.Item, error) {
	if in.Turns == 0 {
		return it, err
	}
	switch v := it.(type) {
	case agentloop.TurnStart:
		v.Turn += in.Turns
		return v, err
	case agentloop.TurnEnd:
		v.Turn += in.Turns
		return v, err
	case agentloop.Final:
		v.Turns += in.Turns
		v.Usage = in.Usage.Add(v.Usage)
		return v, err
	case agentloop.Pending:
		v.Usage = in.Usage.Add(v.Usage)
		return v, err
	}
	var tl *agentloop.TurnLimitError
	if errors.As(err, &tl) {
		tl.Limit = limit
	}
	var te *agentloop.TurnError
	if errors.As(err, &te) {
		te.Turn += in.Turns
	}
	return it, err
}

// effects runs a run's model and tool calls as activities of its workflow.
// All its methods run on the workflow's goroutine.
type effects struct {
	r      *Runner
	wf     workflow.Context
	cancel context.CancelCauseFunc // the loop's context's
	d      *delivery               // this process's delivery of the execution's items
	req    *agentloop.Request      // the request of the model call to come, as the hooks left it
	cur    agentloop.History       // the history the next tool calls belong to

	announced int // server calls of this turn announced by ToolCallReady, not yet started
	started   []startedCall

	// What the execution made, for continuing as new: the model calls,
	// their usage, whether a turn ended, and the results of the last
	// turn's calls.
	turns     int
	usage     agentloop.Usage
	turnEnded bool
	results   []agentloop.ToolResult

	// The usage of the sub-agents' runs, per agent, which ran in tool
	// activities: the loop never saw their items.
	sub map[string]agentloop.Usage
}

// subTotal is the sub-agents' usage in all.
func (e *effects) subTotal() agentloop.Usage {
	var u agentloop.Usage
	for _, v := range e.sub {
		u = u.Add(v)
	}
	return u
}

type startedCall struct {
	step agentloop.Step
	fut  workflow.Future
	done func(agentloop.ToolResult)
}

// observe follows the run's items: which history the tool calls belong
// to, and how many server calls the turn will start.
func (e *effects) observe(it agentloop.Item) {
	switch v := it.(type) {
	case agentloop.TurnStart:
		e.announced = 0
	case agentloop.ToolCallReady:
		if v.Err == nil && !v.RunsOnClient && !v.NeedsApproval {
			e.announced++
		}
	case agentloop.TurnEnd:
		e.cur = v.History
		e.turns++
		e.usage = e.usage.Add(v.Usage)
		e.turnEnded, e.results = v.Err == nil, nil
	case agentloop.ToolResultReady:
		e.results = append(e.results, v.Result)
	}
}

// state is the run's history after the last turn's tool results, as the
// loop holds it (one tool message with the results in call order), or nil
// when the results do not answer that turn's calls.
func (e *effects) state() agentloop.History {
	if len(e.results) == 0 {
		return nil
	}
	h, err := e.cur.AppendResults(e.results...)
	if err != nil {
		return nil
	}
	return h
}

// ModelInput is the model activity's input.
type ModelInput struct {
	Step    agentloop.Step    `json:"step"`
	Request agentloop.Request `json:"request"`
}

// ToolInput is the tool activity's input: the call's step and the history
// that holds the call (and its approval, if any).
type ToolInput struct {
	Step    agentloop.Step    `json:"step"`
	History agentloop.History `json:"history"`
}

func (e *effects) Model(_ context.Context, step agentloop.Step, _ func() (agentloop.ModelReply, error)) (agentloop.ModelReply, error) {
	if e.req == nil {
		return agentloop.ModelReply{}, fmt.Errorf("temporalrun: model call of turn %d without a request", step.Turn)
	}
	timeout := e.r.opts.ModelTimeout
	if timeout <= 0 {
		timeout = DefaultModelTimeout
	}
	ctx := workflow.WithActivityOptions(e.wf, workflow.ActivityOptions{
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    e.r.heartbeat(),
		RetryPolicy:         retryOr(e.r.opts.ModelRetry),
		Summary:             fmt.Sprintf("model call, turn %d", step.Turn),
	})
	var rep agentloop.ModelReply
	err := workflow.ExecuteActivity(ctx, e.r.opts.Name+".model", ModelInput{Step: step, Request: *e.req}).Get(ctx, &rep)
	e.req = nil
	if err != nil {
		e.stopped()
		return agentloop.ModelReply{}, fmt.Errorf("temporalrun: model call: %w", err)
	}
	return rep, nil
}

// Tool starts the call's activity. The calls a turn announced all start
// before any is awaited, so they run concurrently; once the last has
// started (or for a call no item announced), Tool waits for the started
// ones in call order and hands their results to the loop. It must: the
// loop waits for results outside the workflow's scheduler.
func (e *effects) Tool(_ context.Context, step agentloop.Step, _ func() agentloop.ToolResult, done func(agentloop.ToolResult)) {
	ctx := workflow.WithActivityOptions(e.wf, workflow.ActivityOptions{
		StartToCloseTimeout: e.r.toolTimeout(step.Name),
		HeartbeatTimeout:    e.r.heartbeat(),
		RetryPolicy:         retryOr(e.r.opts.ToolRetry[step.Name]),
		Summary:             "tool " + step.Name + " " + step.CallID,
	})
	fut := workflow.ExecuteActivity(ctx, e.r.opts.Name+".tool", ToolInput{Step: step, History: e.cur})
	if !workflow.IsReplaying(e.wf) {
		// Live: the sub-run items of an agent tool's call go out from its
		// activity, if it runs in this process, until its result.
		e.d.openCall(step.CallID)
	}
	e.started = append(e.started, startedCall{step, fut, done})
	if e.announced > 0 {
		e.announced--
	}
	if e.announced > 0 {
		return
	}
	for _, s := range e.started {
		var rec outcome.ToolStep
		err := s.fut.Get(e.wf, &rec)
		e.d.closeCall(s.step.CallID)
		if err != nil {
			e.stopped()
			s.done(stepFailed(s.step, err))
			continue
		}
		e.sub = outcome.AddUsage(e.sub, rec.SubUsage)
		s.done(rec.Result()) // a paused sub-run's result pauses the run
	}
	e.started = nil
}

// ErrStopped is the cause of a run's cancellation when [Runner.Stop]
// stopped it.
var ErrStopped = errors.New("temporalrun: the run was stopped")

// stopped cancels the loop's context once the workflow is cancelled, so
// that the run ends as a cancelled run does, with an outcome.
func (e *effects) stopped() {
	if e.wf.Err() != nil {
		e.cancel(ErrStopped)
	}
}

func (r *Runner) toolTimeout(name string) time.Duration {
	for _, t := range r.agent.Tools {
		if t.Name == name && t.Timeout > 0 {
			return t.Timeout
		}
	}
	if r.agent.ToolTimeout > 0 {
		return r.agent.ToolTimeout
	}
	if r.opts.ToolTimeout > 0 {
		return r.opts.ToolTimeout
	}
	return DefaultToolTimeout
}

// heartbeat is the activities' heartbeat timeout; 0 means none.
func (r *Runner) heartbeat() time.Duration {
	switch {
	case r.opts.Heartbeat < 0:
		return 0
	case r.opts.Heartbeat == 0:
		return DefaultHeartbeat
	}
	return r.opts.Heartbeat
}

func retryOr(p *temporal.RetryPolicy) *temporal.RetryPolicy {
	if p != nil {
		return p
	}
	return &temporal.RetryPolicy{MaximumAttempts: 3}
}

// stepFailed is the result of a tool call whose activity failed for good.
func stepFailed(step agentloop.Step, err error) agentloop.ToolResult {
	return agentloop.ToolResult{CallID: step.CallID, Name: step.Name, IsError: true, Err: err,
		Content: "error: the tool call could not be run durably: " + err.Error()}
}
