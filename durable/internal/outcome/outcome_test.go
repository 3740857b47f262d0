package outcome_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/outcome"
)

// Every way a run ends survives the record's JSON round trip with its type
// and its history, so a recovered run ends as the original did.
func TestOutcome_EveryEndSurvivesItsJSONRoundTrip(t *testing.T) {
	h := agentloop.History{agentloop.UserMessage("hi")}
	u := agentloop.Usage{Input: 10, Output: 2}
	cases := map[string]struct {
		it  agentloop.Item
		err error
	}{
		"final":      {it: agentloop.Final{Text: "done", Usage: u, AgentUsage: map[string]agentloop.Usage{"a": u}, Turns: 1, History: h}},
		"pending":    {it: agentloop.Pending{Approvals: []agentloop.ToolCall{{ID: "c1", Name: "delete", Args: json.RawMessage(`{}`)}}, Usage: u, History: h}},
		"cancelled":  {err: &agentloop.CancelledError{Reason: "user left", History: h}},
		"turn limit": {err: &agentloop.TurnLimitError{Limit: 3, History: h}},
		"turn error": {err: &agentloop.TurnError{Turn: 2, Err: errors.New("model down"), History: h}},
		"budget":     {err: &agentloop.BudgetError{Budget: agentloop.Budget{Tokens: 100}, Usage: u, History: h}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			data, err := json.Marshal(outcome.Of(c.it, c.err))
			require.NoError(t, err)
			var back outcome.Outcome
			require.NoError(t, json.Unmarshal(data, &back))
			it, err := back.Item("engine")
			if c.err == nil {
				require.NoError(t, err)
				assert.Empty(t, cmp.Diff(c.it, it))
				return
			}
			require.Error(t, err)
			assert.Equal(t, c.err.Error(), err.Error())
			got, ok := agentloop.HistoryOf(err)
			require.True(t, ok, "the history comes back with the error")
			assert.Equal(t, h, got)
		})
	}
}

func TestOutcome_AnErrorOfNoKnownTypeNamesTheEngine(t *testing.T) {
	_, err := outcome.Of(nil, errors.New("disk full")).Item("dbosrun")
	assert.EqualError(t, err, "dbosrun: the run failed: disk full")
}

// A record of a bare ToolResult (before ToolStep) reads as a step that did
// not pause; a paused sub-run survives the step's JSON round trip.
func TestToolStep_APausedSubRunSurvivesTheJSONRoundTrip(t *testing.T) {
	var old outcome.ToolStep
	require.NoError(t, json.Unmarshal([]byte(`{"callId":"c1","name":"t","content":"ok"}`), &old))
	assert.Equal(t, agentloop.ToolResult{CallID: "c1", Name: "t", Content: "ok"}, old.Result())
	assert.Nil(t, old.Paused)

	pause := &agentloop.SubRunPause{SubRun: agentloop.SubRun{CallID: "c1", Agent: "sub", History: agentloop.History{agentloop.UserMessage("task")}},
		Approvals: []agentloop.ToolCall{{ID: "s1", Name: "pay", Args: json.RawMessage(`{}`)}}}
	live := pause.Result(agentloop.ToolResult{CallID: "c1", Name: "sub", Content: "paused", IsError: true})
	data, err := json.Marshal(outcome.StepOf(live))
	require.NoError(t, err)
	var back outcome.ToolStep
	require.NoError(t, json.Unmarshal(data, &back))
	res := back.Result()
	assert.ErrorIs(t, res.Err, agentloop.ErrPending)
	assert.Empty(t, cmp.Diff(pause, agentloop.PausedSubRun(res)))
	assert.Equal(t, "paused", res.Content)
}

// Sub-runs' usage that the run did not count adds to its last item's
// Usage and, per agent, to its AgentUsage (with the lead's own usage when
// the run had no sub-agent of its own); other items are unchanged.
func TestAddSubUsage_AddsToTheLastItemPerAgent(t *testing.T) {
	sub := map[string]agentloop.Usage{"helper": {Input: 7, Output: 2}}
	f := outcome.AddSubUsage(agentloop.Final{Usage: agentloop.Usage{Input: 2, Output: 2}}, "lead", sub).(agentloop.Final)
	assert.Equal(t, agentloop.Usage{Input: 9, Output: 4}, f.Usage)
	assert.Equal(t, map[string]agentloop.Usage{"lead": {Input: 2, Output: 2}, "helper": {Input: 7, Output: 2}}, f.AgentUsage)
	per := map[string]agentloop.Usage{"lead": {Input: 1}, "helper": {Input: 1}}
	p := outcome.AddSubUsage(agentloop.Pending{Usage: agentloop.Usage{Input: 2}, AgentUsage: per}, "lead", sub).(agentloop.Pending)
	assert.Equal(t, map[string]agentloop.Usage{"lead": {Input: 1}, "helper": {Input: 8, Output: 2}}, p.AgentUsage)
	assert.Equal(t, agentloop.Usage{Input: 1}, per["helper"], "the item's map is not changed in place")
	assert.Equal(t, agentloop.TurnEnd{Turn: 1}, outcome.AddSubUsage(agentloop.TurnEnd{Turn: 1}, "lead", sub))
	assert.Equal(t, agentloop.Final{Text: "x"}, outcome.AddSubUsage(agentloop.Final{Text: "x"}, "lead", nil))
}
