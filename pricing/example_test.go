package pricing_test

import (
	"fmt"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/pricing"
)

func Example() {
	agent := &agentloop.Agent{}
	prices := pricing.Table{
		"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	}
	agent.Budget = agentloop.Budget{Cost: 0.05, Pricer: prices} // at most 5 cents a run

	model := agentloop.ModelInfo{Provider: "anthropic", Model: "claude-sonnet-4-5-20250929"}
	// A turn that read 20k prompt tokens, 18k of them from the cache.
	usage := agentloop.Usage{Input: 20_000, CacheRead: 18_000, Output: 500}
	if cost, ok := prices.Cost(model, usage); ok {
		fmt.Printf("$%.4f\n", cost)
	}
	// Output: $0.0189
}
