package temporalrun

import (
	"errors"
	"fmt"

	"github.com/agentloop/agentloop"
)

// Outcome is how a run ended, as Temporal records it (the workflow's result).
type Outcome struct {
	// Kind is "final", "pending", "cancelled", "turnLimit", "turnError" or
	// "error".
	Kind        string               `json:"kind"`
	Text        string               `json:"text,omitempty"`
	Usage       agentloop.Usage      `json:"usage"`
	Turns       int                  `json:"turns,omitempty"`
	ClientCalls []agentloop.ToolCall `json:"clientCalls,omitempty"`
	Approvals   []agentloop.ToolCall `json:"approvals,omitempty"`
	History     agentloop.History    `json:"history"`
	Error       string               `json:"error,omitempty"` // the error's text, or a cancel's reason
	Turn        int                  `json:"turn,omitempty"`  // of a turnError
	Limit       int                  `json:"limit,omitempty"` // of a turnLimit
}

// outcomeOf records a run's last item or error.
func outcomeOf(it agentloop.Item, err error) Outcome {
	var (
		ce *agentloop.CancelledError
		le *agentloop.TurnLimitError
		te *agentloop.TurnError
	)
	switch {
	case errors.As(err, &ce):
		return Outcome{Kind: "cancelled", Error: ce.Reason, History: ce.History}
	case errors.As(err, &le):
		return Outcome{Kind: "turnLimit", Limit: le.Limit, History: le.History}
	case errors.As(err, &te):
		return Outcome{Kind: "turnError", Turn: te.Turn, Error: te.Err.Error(), History: te.History}
	case err != nil:
		return Outcome{Kind: "error", Error: err.Error()}
	}
	switch v := it.(type) {
	case agentloop.Final:
		return Outcome{Kind: "final", Text: v.Text, Usage: v.Usage, Turns: v.Turns, History: v.History}
	case agentloop.Pending:
		return Outcome{Kind: "pending", ClientCalls: v.ClientCalls, Approvals: v.Approvals, Usage: v.Usage, History: v.History}
	}
	return Outcome{Kind: "error", Error: fmt.Sprintf("the run ended with a %T", it)}
}

// Item rebuilds the run's last item or error from its record: an
// [agentloop.Final] or [agentloop.Pending], or the error, whose cause is a
// plain error.
func (o Outcome) Item() (agentloop.Item, error) {
	switch o.Kind {
	case "final":
		return agentloop.Final{Text: o.Text, Usage: o.Usage, Turns: o.Turns, History: o.History}, nil
	case "pending":
		return agentloop.Pending{ClientCalls: o.ClientCalls, Approvals: o.Approvals, Usage: o.Usage, History: o.History}, nil
	case "cancelled":
		return nil, &agentloop.CancelledError{Reason: o.Error, Cause: agentloop.Cancel(o.Error), History: o.History}
	case "turnLimit":
		return nil, &agentloop.TurnLimitError{Limit: o.Limit, History: o.History}
	case "turnError":
		return nil, &agentloop.TurnError{Turn: o.Turn, Err: errors.New(o.Error), History: o.History}
	}
	return nil, fmt.Errorf("temporalrun: the run failed: %s", o.Error)
}
