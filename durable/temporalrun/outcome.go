package temporalrun

import (
	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/outcome"
)

// Outcome is how a run ended, as Temporal records it (the workflow's
// result): its JSON is the record durable/dbosrun keeps too.
type Outcome struct {
	outcome.Outcome
}

func outcomeOf(it agentloop.Item, err error) Outcome { return Outcome{outcome.Of(it, err)} }

// Item rebuilds the run's last item or error from its record: an
// [agentloop.Final] or [agentloop.Pending], or the typed error
// ([agentloop.CancelledError], [agentloop.TurnLimitError],
// [agentloop.TurnError], [agentloop.BudgetError]) with its history; an
// error value inside one comes back as a plain error with the same text.
func (o Outcome) Item() (agentloop.Item, error) { return o.Outcome.Item("temporalrun") }
