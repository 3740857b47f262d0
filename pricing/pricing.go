// Package pricing turns token usage into money: a [Table] of per-model
// [Price]s prices an [agentloop.Usage], and implements [agentloop.Pricer]
// so that an [agentloop.Budget] can bound a run's cost.
//
// Prices are per million tokens, in whatever currency the caller chooses
// (every price of one table in the same one). Cost is linear in the counts,
// so the cost of a sum of usages is the sum of their costs: the costs of
// several runs, or of several agents, add up.
//
// [Default] is a small table of list prices in US dollars, dated; prices
// change, so pass a table of your own for anything that matters.
package pricing

import (
	"regexp"

	"github.com/agentloop/agentloop"
)

// Price is what one model's tokens cost, per million tokens. The zero Price
// is free.
type Price struct {
	// Input is the price of a prompt token read without the cache.
	Input float64 `json:"input"`
	// Output is the price of a generated token, reasoning included.
	Output float64 `json:"output"`
	// CacheRead is the price of a prompt token read from the prompt cache;
	// 0 means Input (no discount known).
	CacheRead float64 `json:"cacheRead,omitempty"`
	// CacheWrite is the price of a prompt token written to the prompt
	// cache; 0 means Input (no surcharge known).
	CacheWrite float64 `json:"cacheWrite,omitempty"`
}

// Cost returns what u costs at p. Input tokens are priced as uncached
// input, cache reads and cache writes (see [agentloop.Usage] for how they
// nest); a usage whose cache counts exceed its Input is priced as if Input
// were their sum.
func (p Price) Cost(u agentloop.Usage) float64 {
	read, write := p.CacheRead, p.CacheWrite
	if read == 0 {
		read = p.Input
	}
	if write == 0 {
		write = p.Input
	}
	uncached := max(u.Input-u.CacheRead-u.CacheWrite, 0)
	return (float64(uncached)*p.Input + float64(u.CacheRead)*read +
		float64(u.CacheWrite)*write + float64(u.Output)*p.Output) / 1e6
}

// Table maps model names to their prices. A key is a model name as the
// provider's API spells it ("claude-sonnet-4-5"), or a provider and a model
// joined by a slash ("anthropic/claude-sonnet-4-5") to price one provider's
// model apart. A Table is safe for concurrent reads; do not change it while
// runs use it.
type Table map[string]Price

var _ agentloop.Pricer = Table(nil)

// dated matches the date suffix of a model snapshot: -20250929 or
// -2025-04-14.
var dated = regexp.MustCompile(`-\d{4}-?\d{2}-?\d{2}$`)

// Lookup returns the price of model and whether the table has one. It
// tries "provider/model", then the model name, then both without a date
// suffix, so a dated snapshot ("gpt-4.1-mini-2025-04-14") has its model's
// price unless the table prices it apart.
func (t Table) Lookup(model agentloop.ModelInfo) (Price, bool) {
	names := []string{model.Model}
	if undated := dated.ReplaceAllString(model.Model, ""); undated != model.Model {
		names = append(names, undated)
	}
	for _, name := range names {
		if name == "" {
			continue
		}
		if model.Provider != "" {
			if p, ok := t[model.Provider+"/"+name]; ok {
				return p, true
			}
		}
		if p, ok := t[name]; ok {
			return p, true
		}
	}
	return Price{}, false
}

// Cost returns what u costs with model, and false when the table has no
// price for it. It implements [agentloop.Pricer].
func (t Table) Cost(model agentloop.ModelInfo, u agentloop.Usage) (float64, bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	return p.Cost(u), true
}

// DefaultDate is when the prices of [Default] were taken from the
// providers' published price lists.
const DefaultDate = "2025-10-15"

// Default returns a new table of list prices in US dollars per million
// tokens, as the providers published them on [DefaultDate], for standard
// (not batch, not priority) requests, short prompts (Gemini charges more
// above 200k tokens) and the 5-minute Anthropic cache. It is not kept up to
// date: check the providers' price pages, and pass your own table for
// anything that matters.
func Default() Table {
	return Table{
		"claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
		"gpt-4.1":           {Input: 2, Output: 8, CacheRead: 0.5},
		"gpt-4.1-mini":      {Input: 0.4, Output: 1.6, CacheRead: 0.1},
		"gpt-4o":            {Input: 2.5, Output: 10, CacheRead: 1.25},
		"gpt-4o-mini":       {Input: 0.15, Output: 0.6, CacheRead: 0.075},
		"gpt-5":             {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":        {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gemini-2.5-pro":    {Input: 1.25, Output: 10, CacheRead: 0.31},
		"gemini-2.5-flash":  {Input: 0.3, Output: 2.5, CacheRead: 0.075},
	}
}
