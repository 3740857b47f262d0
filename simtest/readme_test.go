package simtest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// The README's simtest example.
func TestWeatherAgent(t *testing.T) {
	type weatherArgs struct {
		City string `json:"city"`
	}
	weather, err := agentloop.NewTool("get_weather", "The forecast for a city.",
		func(ctx context.Context, in weatherArgs) (string, error) { return "sunny in " + in.City, nil })
	require.NoError(t, err)

	model := simtest.NewModel(
		simtest.Turn{
			Expect: simtest.Expect{Tools: []string{"get_weather"}, User: "Oslo"},
			Reply:  []simtest.Step{simtest.Call("call_1", "get_weather", map[string]string{"city": "Oslo"})},
		},
		simtest.Turn{
			Expect: simtest.Expect{ToolResults: map[string]string{"call_1": "sunny"}},
			Reply:  []simtest.Step{simtest.Text("It is sunny in Oslo.")},
		},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{weather}}
	text, err := agentloop.Text(agent.Stream(t.Context(), agentloop.History{agentloop.UserMessage("Weather in Oslo?")}))
	require.NoError(t, err)
	require.Equal(t, "It is sunny in Oslo.", text)
}
