package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/eval"
	"github.com/agentloop/agentloop/simtest"
)

// answersFromTools is a deterministic judge: it gives 1 when the final
// answer quotes every tool result it was shown.
func answersFromTools() *simtest.Model {
	return simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		prompt := req.Messages[len(req.Messages)-1].Text()
		_, final, _ := strings.Cut(prompt, "\nFinal answer:\n")
		for _, line := range strings.Split(prompt, "\n") {
			if _, result, ok := strings.Cut(line, ") -> "); ok && !strings.Contains(final, result) {
				return []simtest.Step{simtest.Text(`{"score": 0, "reason": "The answer leaves out ` + strings.ReplaceAll(result, `"`, `'`) + `."}`)}, nil
			}
		}
		return []simtest.Step{simtest.Text(`{"score": 1, "reason": "The answer uses every tool result."}`)}, nil
	})
}

// The quickstart agent, evaluated with the built-in simulator as its model
// over a small dataset; the realollama suite runs a dataset like it
// against a real server.
func TestQuickstart_EvalWithTheSimulator(t *testing.T) {
	tools, err := demoTools()
	require.NoError(t, err)
	agent := &agentloop.Agent{Model: simulator(), System: systemPrompt, Tools: tools}
	weather := func(city string) eval.Call {
		return eval.Call{Name: "get_weather", Args: json.RawMessage(`{"city": "` + city + `"}`)}
	}
	sum := eval.Call{Name: "add", Args: json.RawMessage(`{"a": 2, "b": 3}`)}
	dataset := &eval.Dataset{
		Name:    "quickstart",
		Scorers: []eval.Scorer{&eval.Judge{Model: answersFromTools(), Rubric: "The answer states what the tools returned."}},
		Cases: []eval.Case{
			{Name: "weather", Input: agentloop.History{agentloop.UserMessage("What is the weather in Paris?")},
				Scorers: []eval.Scorer{eval.Trajectory(weather("Paris")), eval.Contains("Paris")}},
			{Name: "sum", Input: agentloop.History{agentloop.UserMessage("What is 2 + 3?")},
				Scorers: []eval.Scorer{eval.Trajectory(sum), eval.Contains(`"sum":5`)}},
			{Name: "both", Input: agentloop.History{agentloop.UserMessage(demoPrompt)},
				Scorers: []eval.Scorer{eval.Trajectory(weather("Paris"), sum)}},
			{Name: "no tool", Input: agentloop.History{agentloop.UserMessage("Hello!")},
				Scorers: []eval.Scorer{eval.Trajectory(), eval.Contains("weather")}},
		},
	}
	report := dataset.Test(t, agent, &eval.Options{Price: eval.Price{Input: 0.1, Output: 0.4}})
	assert.Equal(t, 1.0, report.Score)
	assert.Equal(t, len(dataset.Cases), report.Passed)
	assert.Equal(t, agentloop.Usage{Input: 3*(30+40) + 30, Output: 3*(12+25) + 12}, report.Usage)
}
