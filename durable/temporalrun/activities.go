package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/outcome"
)

// modelActivity sends the request to the worker's model and returns the
// whole reply. The loop in the workflow assigns the call ids on replay.
func (r *Runner) modelActivity(ctx context.Context, in ModelInput) (agentloop.ModelReply, error) {
	req := in.Request
	var c collector
	info := activity.GetInfo(ctx)
	defer heartbeat(ctx, info.HeartbeatTimeout)()
	for chunk, err := range r.agent.Model.Stream(ctx, &req) {
		if err != nil {
			return agentloop.ModelReply{}, fmt.Errorf("temporalrun: model: %w", err)
		}
		if r.opts.OnModelChunk != nil {
			r.opts.OnModelChunk(info.WorkflowExecution.ID, in.Step, info.Attempt, chunk)
		}
		c.add(chunk)
	}
	return c.reply(), nil
}

// heartbeat records the activity's heartbeat every third of timeout until
// the returned stop is called, so that the server sees the worker alive
// while a call runs; a zero timeout records none.
func heartbeat(ctx context.Context, timeout time.Duration) (stop func()) {
	if timeout <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(timeout / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// collector gathers a model's stream into a reply, part by part.
type collector struct {
	parts   []agentloop.Part
	open    agentloop.PartType // the block being streamed, "" if none
	text    strings.Builder
	usage   agentloop.Usage
	finish  agentloop.FinishReason
	partial bool
}

func (c *collector) add(chunk agentloop.Chunk) {
	switch v := chunk.(type) {
	case agentloop.TextDelta:
		c.into(agentloop.PartText)
		c.text.WriteString(v.Text)
	case agentloop.ReasoningDelta:
		c.into(agentloop.PartReasoning)
		c.text.WriteString(v.Text)
	case agentloop.ReasoningEnd:
		c.into(agentloop.PartReasoning)
		c.parts = append(c.parts, agentloop.Part{Type: agentloop.PartReasoning, Text: c.text.String(),
			Signature: v.Signature, Redacted: v.Redacted})
		c.text.Reset()
		c.open = ""
	case agentloop.ToolCallDelta:
		c.partial = true
	case agentloop.ToolCall:
		c.close()
		call := v
		c.parts = append(c.parts, agentloop.Part{Type: agentloop.PartToolCall, ToolCall: &call})
	case agentloop.Usage:
		c.usage = c.usage.Add(v)
	case agentloop.Finish:
		c.finish = v.Reason
	}
}

// into makes typ the open block, closing another one.
func (c *collector) into(typ agentloop.PartType) {
	if c.open != typ {
		c.close()
		c.open = typ
	}
}

func (c *collector) close() {
	if c.open != "" {
		c.parts = append(c.parts, agentloop.Part{Type: c.open, Text: c.text.String()})
		c.text.Reset()
		c.open = ""
	}
}

func (c *collector) reply() agentloop.ModelReply {
	c.close()
	return agentloop.ModelReply{Message: agentloop.Message{Role: agentloop.RoleAssistant, Parts: c.parts},
		Usage: c.usage, Finish: c.finish, Partial: c.partial}
}

// toolActivity runs one tool call through the loop, in process, so that
// the tool hooks, the tool's timeout and its idempotency key work as in
// process: the history is cut to the call (and its approval), the loop
// runs it, and the activity stops the run at the call's result. An agent
// tool's call whose sub-run paused makes the cut run pause instead: the
// activity returns the call's result with the pause (captured by an
// AfterToolCall hook, which runs after the agent's), so that the
// workflow's run pauses with the sub-run's state. The sub-run's items go
// to this process's consumers of the run while the call is awaited
// (delivery.nested), and their usage back with the result.
func (r *Runner) toolActivity(ctx context.Context, in ToolInput) (outcome.ToolStep, error) {
	h, err := only(in.History, in.Step.CallID)
	if err != nil {
		return outcome.ToolStep{}, temporal.NewNonRetryableApplicationError(err.Error(), "agentloop.badInput", err)
	}
	info := activity.GetInfo(ctx)
	defer heartbeat(ctx, info.HeartbeatTimeout)()
	// The sub-runs' items go to this process's OnItem and Stream when a
	// worker of this process executes the run (design.md §3.10).
	wf := info.WorkflowExecution
	d := r.executionDelivery(wf.ID + "/" + wf.RunID)
	var paused *outcome.ToolStep // set before the run yields its Pending
	capture := &agentloop.Hooks{AfterToolCall: func(_ context.Context, call agentloop.ToolCall, res *agentloop.ToolResult) error {
		if call.ID == in.Step.CallID && agentloop.PausedSubRun(*res) != nil {
			step := outcome.StepOf(*res)
			paused = &step
		}
		return nil
	}}
	// The sub-runs' model calls, at any depth, which the workflow's run
	// does not count (it does not see their items): their usage goes back
	// with the result.
	var sub map[string]agentloop.Usage
	for it, err := range r.agent.Stream(ctx, h, &agentloop.RunOptions{ConversationID: in.Step.ConversationID, Hooks: capture}) {
		if err != nil {
			return outcome.ToolStep{}, fmt.Errorf("temporalrun: tool %s: %w", in.Step.Name, err)
		}
		if n, ok := it.(*agentloop.Nested); ok {
			if te, ok := n.Item.(agentloop.TurnEnd); ok {
				if sub == nil {
					sub = map[string]agentloop.Usage{}
				}
				sub[n.Agent] = sub[n.Agent].Add(te.Usage)
			}
			if d != nil {
				d.nested(r, wf.ID, in.Step.CallID, info.Attempt, n)
			}
			continue
		}
		if _, ok := it.(agentloop.Pending); ok && paused != nil {
			paused.SubUsage = sub
			return *paused, nil
		}
		v, ok := it.(agentloop.ToolResultReady)
		if !ok || v.Result.CallID != in.Step.CallID {
			continue
		}
		if errors.Is(v.Result.Err, ErrRetry) {
			return outcome.ToolStep{}, fmt.Errorf("temporalrun: tool %s: %w", in.Step.Name, v.Result.Err)
		}
		step := outcome.StepOf(v.Result)
		step.SubUsage = sub
		return step, nil
	}
	err = fmt.Errorf("temporalrun: tool %s did not run call %s", in.Step.Name, in.Step.CallID)
	return outcome.ToolStep{}, temporal.NewNonRetryableApplicationError(err.Error(), "agentloop.notRun", err)
}

// only returns h with its last assistant message cut to the call id's tool
// call (its other parts kept) and the tool messages after it cut to the
// call's parts (its approval, result, or paused sub-run's state), so that
// resuming it runs that call alone.
func only(h agentloop.History, callID string) (agentloop.History, error) {
	at := -1
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == agentloop.RoleAssistant {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("temporalrun: no assistant message holds call %s", callID)
	}
	out := append(agentloop.History(nil), h[:at]...)
	found := false
	msg := h[at]
	msg.Parts = nil
	for _, p := range h[at].Parts {
		switch {
		case p.Type == agentloop.PartToolCall && p.ToolCall != nil:
			if p.ToolCall.ID != callID {
				continue
			}
			found = true
		case p.Approval != nil && p.Approval.CallID != callID:
			continue
		}
		msg.Parts = append(msg.Parts, p)
	}
	if !found {
		return nil, fmt.Errorf("temporalrun: the last assistant message holds no call %s", callID)
	}
	out = append(out, msg)
	for _, m := range h[at+1:] {
		keep := m
		keep.Parts = nil
		for _, p := range m.Parts {
			if (p.Approval != nil && p.Approval.CallID == callID) || (p.ToolResult != nil && p.ToolResult.CallID == callID) ||
				(p.SubRun != nil && p.SubRun.CallID == callID) {
				keep.Parts = append(keep.Parts, p)
			}
		}
		if len(keep.Parts) > 0 {
			out = append(out, keep)
		}
	}
	return out, nil
}
