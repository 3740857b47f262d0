package agentloop_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// callsEcho is a turn that calls echo and reports 100 input and 10 output
// tokens.
func callsEcho(n int) simtest.Turn {
	return turn(simtest.Call(fmt.Sprintf("c%d", n), "echo", map[string]string{"text": "again"}), simtest.Usage(100, 10))
}

// perToken prices every input token at 0.001 and every output token at
// 0.002, for the model "priced" only.
type perToken struct{}

func (perToken) Cost(m agentloop.ModelInfo, u agentloop.Usage) (float64, bool) {
	if m.Model != "priced" {
		return 0, false
	}
	return float64(u.Input)*0.001 + float64(u.Output)*0.002, true
}

type pricedModel struct{ *simtest.Model }

func (pricedModel) ModelInfo() agentloop.ModelInfo {
	return agentloop.ModelInfo{Provider: "simtest", Model: "priced"}
}

func TestBudget_TokensStopTheRunBeforeTheCallAfterTheTurnThatReachedThem(t *testing.T) {
	m := simtest.NewModel(callsEcho(1), callsEcho(2), callsEcho(3), callsEcho(4))
	// 110 tokens a turn: 110, 220, then 330 reaches 300, so turn 4 never happens.
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, Budget: agentloop.Budget{Tokens: 300}}
	_, err := collect(a.Stream(t.Context(), user("loop"), nil))

	require.ErrorIs(t, err, agentloop.ErrBudget)
	var be *agentloop.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 3, m.Calls())
	assert.Equal(t, agentloop.Usage{Input: 300, Output: 30}, be.Usage)
	assert.Equal(t, "agentloop: budget used up: 330 of 300 tokens", be.Error())
	assert.Equal(t, []agentloop.Role{"user", "assistant", "tool", "assistant", "tool", "assistant", "tool"}, roles(be.History),
		"the third turn's tools ran and their results are in the history")
	h, ok := agentloop.HistoryOf(err)
	require.True(t, ok)
	assert.Equal(t, be.History, h)

	// The history stores and resumes: a new run with a new budget answers.
	stored, err := json.Marshal(be.History)
	require.NoError(t, err)
	var loaded agentloop.History
	require.NoError(t, json.Unmarshal(stored, &loaded))
	resumed := simtest.NewModel(turn(simtest.Text("Done."), simtest.Usage(400, 5)))
	b := &agentloop.Agent{Model: resumed, Tools: a.Tools, Budget: agentloop.Budget{Tokens: 300}}
	items, err := collect(b.Stream(t.Context(), loaded, nil))
	require.NoError(t, err)
	f := final(t, items)
	assert.Equal(t, "Done.", f.Text)
	assert.Len(t, resumed.Requests()[0].Messages, 7, "the resumed call saw the whole stored history")
}

func TestBudget_ATurnThatAnswersEndsTheRunEvenPastTheBudget(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Text("Long answer."), simtest.Usage(1000, 500)))
	a := &agentloop.Agent{Model: m, Budget: agentloop.Budget{Tokens: 10}}
	items, err := collect(a.Stream(t.Context(), user("hi"), nil))
	require.NoError(t, err)
	assert.Equal(t, agentloop.Usage{Input: 1000, Output: 500}, final(t, items).Usage)
}

func TestBudget_CostStopsTheRunAtTheTurnItsPriceReachesIt(t *testing.T) {
	m := simtest.NewModel(callsEcho(1), callsEcho(2), callsEcho(3))
	// 0.12 a turn: 0.12, then 0.24 reaches 0.2, so turn 3 never happens.
	a := &agentloop.Agent{Model: pricedModel{m}, Tools: []*agentloop.Tool{echoTool(t, "echo")},
		Budget: agentloop.Budget{Cost: 0.2, Pricer: perToken{}}}
	_, err := collect(a.Stream(t.Context(), user("loop"), nil))
	var be *agentloop.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 2, m.Calls())
	assert.InDelta(t, 0.24, be.Cost, 1e-9)
	assert.Equal(t, "agentloop: budget used up: cost 0.24 of 0.2", be.Error())
	assert.Equal(t, []agentloop.Role{"user", "assistant", "tool", "assistant", "tool"}, roles(be.History))
}

func TestBudget_RunOptionsBudgetReplacesTheAgentsBudgetForOneRun(t *testing.T) {
	m := simtest.NewModel(callsEcho(1), callsEcho(2))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}, Budget: agentloop.Budget{Tokens: 1_000_000}}
	_, err := collect(a.Stream(t.Context(), user("loop"), &agentloop.RunOptions{Budget: &agentloop.Budget{Tokens: 110}}))
	require.ErrorIs(t, err, agentloop.ErrBudget)
	assert.Equal(t, 1, m.Calls())
}

func TestBudget_AMoneyBoundThatCannotBePricedFailsBeforeTheFirstCall(t *testing.T) {
	for name, c := range map[string]struct {
		model  agentloop.Model
		budget agentloop.Budget
		want   string
	}{
		"no pricer":     {simtest.NewModel(), agentloop.Budget{Cost: 1}, "agentloop: Budget.Cost is set without a Budget.Pricer"},
		"unknown model": {simtest.NewModel(), agentloop.Budget{Cost: 1, Pricer: perToken{}}, `agentloop: Budget.Pricer has no price for model "" of provider ""`},
		"negative":      {simtest.NewModel(), agentloop.Budget{Tokens: -1}, "agentloop: Budget.Tokens -1 is negative"},
	} {
		t.Run(name, func(t *testing.T) {
			a := &agentloop.Agent{Model: c.model, Budget: c.budget}
			_, err := collect(a.Stream(t.Context(), user("hi"), nil))
			require.EqualError(t, err, c.want)
			assert.Equal(t, 0, c.model.(*simtest.Model).Calls())
		})
	}
}
