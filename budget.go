package agentloop

import (
	"errors"
	"fmt"
)

// ErrBudget matches the error of a run that used up its [Budget].
var ErrBudget = errors.New("agentloop: budget used up")

// Budget bounds what one run may spend, in tokens, in money, or both. The
// run checks it before each model call, like [Agent.MaxTurns]: when the
// usage of the run's calls so far has reached a bound, the run makes no
// further call and fails with a [*BudgetError] whose history holds every
// finished turn and its tool results, so it stores and resumes. A model
// call that answers without tools ends the run normally even if it went
// over the budget: what it cost is spent by then. A resumed run starts
// counting from zero; pass what is left to bound a whole conversation.
//
// The zero Budget sets no bound.
type Budget struct {
	// Tokens bounds Usage.Total (input plus output tokens) summed over the
	// run's model calls; 0 means no bound.
	Tokens int
	// Cost bounds what the run's usage costs, as Pricer prices it, in the
	// Pricer's currency; 0 means no bound.
	Cost float64
	// Pricer prices the run's usage for Cost. Required when Cost > 0; the
	// run fails before its first model call when it is nil or does not
	// know the price of the agent's model.
	Pricer Pricer
}

// Pricer turns usage into money. The pricing package's Table implements it.
// Implementations must be safe for concurrent use. A price is linear in the
// counts, so the cost of a sum of usages is the sum of their costs: the
// costs of several agents add up.
type Pricer interface {
	// Cost returns what u costs with model, and false when it does not
	// know model's price.
	Cost(model ModelInfo, u Usage) (float64, bool)
}

// BudgetError is the error of a run that reached its [Budget]. History holds
// everything up to there, with a result for every tool call; pass it to
// [Agent.Stream] to go on, with a new budget.
type BudgetError struct {
	// Budget is the budget that was reached.
	Budget Budget
	// Usage is the run's usage when it stopped.
	Usage Usage
	// Cost is what Usage cost, as Budget.Pricer priced it; 0 without a
	// Pricer.
	Cost float64
	// History is the transcript up to the budget, with a result for every
	// tool call.
	History History
}

// Error says which bound was reached, with what was spent.
func (e *BudgetError) Error() string {
	if e.Budget.Tokens > 0 && e.Usage.Total() >= e.Budget.Tokens {
		return fmt.Sprintf("agentloop: budget used up: %d of %d tokens", e.Usage.Total(), e.Budget.Tokens)
	}
	return fmt.Sprintf("agentloop: budget used up: cost %.6g of %.6g", e.Cost, e.Budget.Cost)
}

// Is reports whether target is [ErrBudget].
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// check validates b for model; it returns nil when b sets no money bound or
// can price model.
func (b Budget) check(model ModelInfo) error {
	switch {
	case b.Tokens < 0:
		return fmt.Errorf("agentloop: Budget.Tokens %d is negative", b.Tokens)
	case b.Cost < 0:
		return fmt.Errorf("agentloop: Budget.Cost %v is negative", b.Cost)
	case b.Cost == 0:
		return nil
	case b.Pricer == nil:
		return errors.New("agentloop: Budget.Cost is set without a Budget.Pricer")
	}
	if _, ok := b.Pricer.Cost(model, Usage{}); !ok {
		return fmt.Errorf("agentloop: Budget.Pricer has no price for model %q of provider %q", model.Model, model.Provider)
	}
	return nil
}

// exceeded returns the budget's error when total, the usage of the run's
// own calls (own, with model) and of its sub-agents' (subs), has reached
// it, nil otherwise. A sub-agent's usage is priced with its own model; one
// whose price the Pricer does not know costs nothing.
func (b Budget) exceeded(model ModelInfo, own, total Usage, subs []subUsage) *BudgetError {
	u := total
	var cost float64
	if b.Pricer != nil {
		cost, _ = b.Pricer.Cost(model, own)
		for _, s := range subs {
			c, _ := b.Pricer.Cost(s.model, s.usage)
			cost += c
		}
	}
	if (b.Tokens > 0 && u.Total() >= b.Tokens) || (b.Cost > 0 && cost >= b.Cost) {
		return &BudgetError{Budget: b, Usage: u, Cost: cost}
	}
	return nil
}

// modelInfo names m, when it can name itself.
func modelInfo(m Model) ModelInfo {
	if d, ok := m.(ModelDescriber); ok {
		return d.ModelInfo()
	}
	return ModelInfo{}
}
