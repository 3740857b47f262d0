package pricing_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/simtest"
)

func TestPrice_CostPricesUncachedInputCacheReadsCacheWritesAndOutputApart(t *testing.T) {
	p := pricing.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	u := agentloop.Usage{Input: 1_000_000 + 2_000_000 + 4_000_000, CacheRead: 2_000_000, CacheWrite: 4_000_000, Output: 1_000_000, Reasoning: 500_000}
	assert.InDelta(t, 3+2*0.3+4*3.75+15, p.Cost(u), 1e-9)
}

func TestPrice_ZeroCachePricesMeanTheInputPrice(t *testing.T) {
	p := pricing.Price{Input: 2, Output: 8}
	u := agentloop.Usage{Input: 3_000_000, CacheRead: 1_000_000, CacheWrite: 1_000_000}
	assert.InDelta(t, 6, p.Cost(u), 1e-9)
	assert.Zero(t, pricing.Price{}.Cost(u), "the zero Price is free")
}

func TestPrice_CostIsLinearSoCostsOfUsagesAddUp(t *testing.T) {
	p := pricing.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	a := agentloop.Usage{Input: 5000, Output: 300, CacheRead: 4000, CacheWrite: 500}
	b := agentloop.Usage{Input: 700, Output: 90, CacheRead: 100}
	assert.InDelta(t, p.Cost(a)+p.Cost(b), p.Cost(a.Add(b)), 1e-12)
}

func TestTable_LookupTriesProviderAndModelThenModelThenWithoutTheDate(t *testing.T) {
	table := pricing.Table{
		"gpt-4.1-mini":        {Input: 0.4},
		"azure/gpt-4.1-mini":  {Input: 0.44},
		"claude-sonnet-4-5":   {Input: 3},
		"gpt-4o-2024-05-13":   {Input: 5},
		"gpt-4o":              {Input: 2.5},
		"ollama/llama3.2:3b":  {},
		"claude-haiku-4-5-v2": {Input: 1},
	}
	for _, c := range []struct {
		provider, model string
		want            float64
		ok              bool
	}{
		{"openai", "gpt-4.1-mini", 0.4, true},
		{"azure", "gpt-4.1-mini", 0.44, true},
		{"openai", "gpt-4.1-mini-2025-04-14", 0.4, true},
		{"anthropic", "claude-sonnet-4-5-20250929", 3, true},
		{"openai", "gpt-4o-2024-05-13", 5, true},
		{"openai", "gpt-4o-2024-08-06", 2.5, true},
		{"ollama", "llama3.2:3b", 0, true},
		{"openai", "gpt-4.1-nano", 0, false},
		{"openai", "gpt-4.1", 0, false},
		{"", "", 0, false},
	} {
		p, ok := table.Lookup(agentloop.ModelInfo{Provider: c.provider, Model: c.model})
		assert.Equal(t, c.ok, ok, "%s/%s", c.provider, c.model)
		assert.Equal(t, c.want, p.Input, "%s/%s", c.provider, c.model)
	}
}

func TestTable_CostSaysWhenTheModelHasNoPrice(t *testing.T) {
	cost, ok := pricing.Table{"m": {Input: 1, Output: 2}}.Cost(agentloop.ModelInfo{Model: "m"}, agentloop.Usage{Input: 1e6, Output: 1e6})
	assert.True(t, ok)
	assert.InDelta(t, 3, cost, 1e-9)
	_, ok = pricing.Table{}.Cost(agentloop.ModelInfo{Model: "m"}, agentloop.Usage{})
	assert.False(t, ok)
}

func TestTable_RoundTripsThroughJSON(t *testing.T) {
	b, err := json.Marshal(pricing.Table{"m": {Input: 1, Output: 2, CacheRead: 0.1}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"m":{"input":1,"output":2,"cacheRead":0.1}}`, string(b))
	var back pricing.Table
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, pricing.Price{Input: 1, Output: 2, CacheRead: 0.1}, back["m"])
}

func TestDefault_PricesEveryModelAndReturnsAFreshTable(t *testing.T) {
	d := pricing.Default()
	require.NotEmpty(t, d)
	for name, p := range d {
		assert.Positive(t, p.Input, name)
		assert.Greater(t, p.Output, p.Input, name)
	}
	d["claude-sonnet-4-5"] = pricing.Price{}
	assert.NotZero(t, pricing.Default()["claude-sonnet-4-5"].Input, "changing one table leaves the next alone")
}

type named struct{ *simtest.Model }

func (named) ModelInfo() agentloop.ModelInfo {
	return agentloop.ModelInfo{Provider: "anthropic", Model: "claude-sonnet-4-5-20250929"}
}

func TestTable_AsABudgetsPricerStopsARunAtTheTurnItsCostReachesTheBudget(t *testing.T) {
	echo, err := agentloop.NewRawTool("echo", "Echoes.", nil, func(_ context.Context, args json.RawMessage) (string, error) {
		return string(args), nil
	})
	require.NoError(t, err)
	turn := func(id string) simtest.Turn {
		// 10k input, 8k of it read from the cache, and 1k output: 0.0234 each at Sonnet prices (0.006 + 0.0024 + 0.015).
		return simtest.Turn{Reply: []simtest.Step{simtest.Call(id, "echo", map[string]any{}), simtest.UsageOf(agentloop.Usage{Input: 10_000, CacheRead: 8_000, Output: 1_000})}}
	}
	m := simtest.NewModel(turn("a"), turn("b"), turn("c"), turn("d"))
	agent := &agentloop.Agent{Model: named{m}, Tools: []*agentloop.Tool{echo},
		Budget: agentloop.Budget{Cost: 0.06, Pricer: pricing.Default()}}
	_, err = agentloop.Drain(agent.Stream(t.Context(), agentloop.History{agentloop.UserMessage("go")}, nil))
	var be *agentloop.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 3, m.Calls(), "0.0234, 0.0468, then 0.0702 reaches 0.06")
	assert.InDelta(t, 3*0.0234, be.Cost, 1e-9)
}
