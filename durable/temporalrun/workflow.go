package temporalrun

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentloop/agentloop"
)

// workflow runs one run; Temporal calls it to start the run and to replay
// it. It ranges over the agent's run on the workflow's goroutine: under
// effects the loop starts no goroutine and reads no clock, and every call
// goes through an activity, so the run is deterministic.
func (r *Runner) workflow(ctx workflow.Context, in Input) (Outcome, error) {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	e := &effects{r: r, wf: ctx, cur: in.History}
	capture := &agentloop.Hooks{BeforeModelCall: func(_ context.Context, req *agentloop.Request) error {
		e.req = req
		return nil
	}}
	var out Outcome
	for it, err := range r.agent.Stream(context.Background(), in.History, &agentloop.RunOptions{
		Effects: e, ConversationID: in.ConversationID, Hooks: capture}) {
		e.observe(it)
		if err != nil || last(it) {
			out = outcomeOf(it, err)
		}
		if !workflow.IsReplaying(ctx) {
			r.deliver(id, it, err)
		}
	}
	return out, nil
}

// effects runs a run's model and tool calls as activities of its workflow.
// All its methods run on the workflow's goroutine.
type effects struct {
	r   *Runner
	wf  workflow.Context
	req *agentloop.Request // the request of the model call to come, as the hooks left it
	cur agentloop.History  // the history the next tool calls belong to

	announced int // server calls of this turn announced by ToolCallReady, not yet started
	started   []startedCall
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
	}
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
		RetryPolicy:         retryOr(e.r.opts.ModelRetry),
		Summary:             fmt.Sprintf("model call, turn %d", step.Turn),
	})
	var rep agentloop.ModelReply
	err := workflow.ExecuteActivity(ctx, e.r.opts.Name+".model", ModelInput{Step: step, Request: *e.req}).Get(ctx, &rep)
	e.req = nil
	if err != nil {
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
		RetryPolicy:         retryOr(e.r.opts.ToolRetry[step.Name]),
		Summary:             "tool " + step.Name + " " + step.CallID,
	})
	fut := workflow.ExecuteActivity(ctx, e.r.opts.Name+".tool", ToolInput{Step: step, History: e.cur})
	e.started = append(e.started, startedCall{step, fut, done})
	if e.announced > 0 {
		e.announced--
	}
	if e.announced > 0 {
		return
	}
	for _, s := range e.started {
		var res agentloop.ToolResult
		if err := s.fut.Get(e.wf, &res); err != nil {
			res = stepFailed(s.step, err)
		}
		s.done(res)
	}
	e.started = nil
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
