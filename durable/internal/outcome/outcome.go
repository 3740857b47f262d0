// Package outcome records how a run ended, as the durable engines
// (durable/dbosrun, durable/temporalrun) store it as their workflow's
// result, and rebuilds the run's last item or error from the record; and
// how the engines record a tool step's result ([ToolStep]).
package outcome

import (
	"errors"
	"fmt"

	"github.com/agentloop/agentloop"
)

// Outcome is how a run ended, as JSON an engine can store.
type Outcome struct {
	// Kind is "final", "pending", "cancelled", "turnLimit", "turnError",
	// "budget" or "error".
	Kind        string                     `json:"kind"`
	Text        string                     `json:"text,omitempty"`
	Usage       agentloop.Usage            `json:"usage"`
	AgentUsage  map[string]agentloop.Usage `json:"agentUsage,omitempty"`
	Turns       int                        `json:"turns,omitempty"`
	ClientCalls []agentloop.ToolCall       `json:"clientCalls,omitempty"`
	Approvals   []agentloop.ToolCall       `json:"approvals,omitempty"`
	History     agentloop.History          `json:"history"`
	Error       string                     `json:"error,omitempty"` // the error's text, or a cancel's reason
	Turn        int                        `json:"turn,omitempty"`  // of a turnError
	Limit       int                        `json:"limit,omitempty"` // of a turnLimit
	// Budget and Cost are a budget error's bounds (without its Pricer,
	// which is code) and what was spent.
	Budget *agentloop.Budget `json:"budget,omitempty"`
	Cost   float64           `json:"cost,omitempty"`
}

// Of records a run's last item or error.
func Of(it agentloop.Item, err error) Outcome {
	var (
		ce *agentloop.CancelledError
		le *agentloop.TurnLimitError
		te *agentloop.TurnError
		be *agentloop.BudgetError
	)
	switch {
	case errors.As(err, &ce):
		return Outcome{Kind: "cancelled", Error: ce.Reason, History: ce.History}
	case errors.As(err, &le):
		return Outcome{Kind: "turnLimit", Limit: le.Limit, History: le.History}
	case errors.As(err, &te):
		return Outcome{Kind: "turnError", Turn: te.Turn, Error: te.Err.Error(), History: te.History}
	case errors.As(err, &be):
		b := be.Budget
		b.Pricer = nil
		return Outcome{Kind: "budget", Budget: &b, Usage: be.Usage, Cost: be.Cost, History: be.History}
	case err != nil:
		return Outcome{Kind: "error", Error: err.Error()}
	}
	switch v := it.(type) {
	case agentloop.Final:
		return Outcome{Kind: "final", Text: v.Text, Usage: v.Usage, AgentUsage: v.AgentUsage, Turns: v.Turns, History: v.History}
	case agentloop.Pending:
		return Outcome{Kind: "pending", ClientCalls: v.ClientCalls, Approvals: v.Approvals, Usage: v.Usage, AgentUsage: v.AgentUsage, History: v.History}
	}
	return Outcome{Kind: "error", Error: fmt.Sprintf("the run ended with a %T", it)}
}

// Item rebuilds the run's last item or error from its record: an
// [agentloop.Final] or [agentloop.Pending], or the typed error with its
// history (a cause that was an error value comes back as a plain error).
// engine prefixes the text of an error of no known type.
func (o Outcome) Item(engine string) (agentloop.Item, error) {
	switch o.Kind {
	case "final":
		return agentloop.Final{Text: o.Text, Usage: o.Usage, AgentUsage: o.AgentUsage, Turns: o.Turns, History: o.History}, nil
	case "pending":
		return agentloop.Pending{ClientCalls: o.ClientCalls, Approvals: o.Approvals, Usage: o.Usage, AgentUsage: o.AgentUsage, History: o.History}, nil
	case "cancelled":
		return nil, &agentloop.CancelledError{Reason: o.Error, Cause: agentloop.Cancel(o.Error), History: o.History}
	case "turnLimit":
		return nil, &agentloop.TurnLimitError{Limit: o.Limit, History: o.History}
	case "turnError":
		return nil, &agentloop.TurnError{Turn: o.Turn, Err: errors.New(o.Error), History: o.History}
	case "budget":
		var b agentloop.Budget
		if o.Budget != nil {
			b = *o.Budget
		}
		return nil, &agentloop.BudgetError{Budget: b, Usage: o.Usage, Cost: o.Cost, History: o.History}
	}
	return nil, fmt.Errorf("%s: the run failed: %s", engine, o.Error)
}

// ToolStep is a tool step's result as the engines record it: the
// [agentloop.ToolResult] (its JSON fields, so a record of a bare result
// reads as one) and, for an agent tool's call whose sub-run paused, the
// pause, which the result's JSON does not carry.
type ToolStep struct {
	agentloop.ToolResult
	Paused *agentloop.SubRunPause `json:"paused,omitempty"`
	// SubUsage is the usage of the sub-runs an agent tool's call ran, per
	// agent name (nil for other calls): what a run adds when it does not
	// count them from their items, which a replayed step does not yield
	// again (dbosrun) and a call run in an activity never gives the run
	// (temporalrun).
	SubUsage map[string]agentloop.Usage `json:"subUsage,omitempty"`
}

// StepOf records a tool step's live result.
func StepOf(res agentloop.ToolResult) ToolStep {
	return ToolStep{ToolResult: res, Paused: agentloop.PausedSubRun(res)}
}

// Result returns the result the loop gets for the step: a paused sub-run's
// result pauses the run again.
func (s ToolStep) Result() agentloop.ToolResult {
	if s.Paused != nil {
		return s.Paused.Result(s.ToolResult)
	}
	return s.ToolResult
}

// AddSubUsage adds the usage of sub-runs that the run did not count (per
// agent name: sub-runs whose items it did not see, as an engine records
// them in [ToolStep.SubUsage]) to the run's last item, as the loop counts
// them in process: to an [agentloop.Final]'s or [agentloop.Pending]'s
// Usage, and per agent to its AgentUsage, which gets lead's own usage when
// it had none. Other items, and an empty sub, come back unchanged.
func AddSubUsage(it agentloop.Item, lead string, sub map[string]agentloop.Usage) agentloop.Item {
	if len(sub) == 0 {
		return it
	}
	add := func(u agentloop.Usage, per map[string]agentloop.Usage) (agentloop.Usage, map[string]agentloop.Usage) {
		out := make(map[string]agentloop.Usage, len(per)+len(sub))
		if per == nil {
			out[lead] = u
		}
		for a, v := range per {
			out[a] = v
		}
		for a, v := range sub {
			out[a] = out[a].Add(v)
			u = u.Add(v)
		}
		return u, out
	}
	switch v := it.(type) {
	case agentloop.Final:
		v.Usage, v.AgentUsage = add(v.Usage, v.AgentUsage)
		return v
	case agentloop.Pending:
		v.Usage, v.AgentUsage = add(v.Usage, v.AgentUsage)
		return v
	}
	return it
}

// AddUsage adds the usage per agent in from to into, making into when nil,
// and returns it.
func AddUsage(into, from map[string]agentloop.Usage) map[string]agentloop.Usage {
	for a, u := range from {
		if into == nil {
			into = make(map[string]agentloop.Usage, len(from))
		}
		into[a] = into[a].Add(u)
	}
	return into
}
