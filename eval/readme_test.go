package eval_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/eval"
	"github.com/agentloop/agentloop/simtest"
)

// The README's eval example, with simulators for the agent's model and
// the judge.
func TestWeatherAgentEval(t *testing.T) {
	weather, err := agentloop.NewTool("get_weather", "The forecast for a city.",
		func(ctx context.Context, in struct {
			City string `json:"city"`
		}) (string, error) {
			return "sunny in " + in.City, nil
		})
	require.NoError(t, err)
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("", "get_weather", `{"city":"Oslo"}`)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("It is sunny in Oslo.")}},
	)
	judge := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text(`{"score": 1, "reason": "Quotes the forecast."}`)}, nil
	})
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{weather}}

	dataset := &eval.Dataset{
		Name:      "weather",
		Threshold: 0.9,
		Cases: []eval.Case{{
			Name:  "oslo",
			Input: agentloop.History{agentloop.UserMessage("Weather in Oslo?")},
			Scorers: []eval.Scorer{
				eval.Trajectory(eval.Call{Name: "get_weather", Args: json.RawMessage(`{"city": "Oslo"}`)}),
				eval.Contains("sunny"),
				&eval.Judge{Model: judge, Rubric: "The answer gives the forecast the tool returned."},
			},
		}},
	}
	report := dataset.Test(t, agent, nil) // a subtest per case; AGENTLOOP_EVAL_DIR=dir saves the report
	require.Equal(t, 1.0, report.Score)
}
