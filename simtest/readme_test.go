package simtest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/ollama"
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
	text, err := agentloop.Text(agent.Stream(t.Context(), agentloop.History{agentloop.UserMessage("Weather in Oslo?")}, nil))
	require.NoError(t, err)
	require.Equal(t, "It is sunny in Oslo.", text)
}

// The README's record-and-replay example. testdata/weather-session.json
// was recorded with a simtest.Recorder from this agent, with a scripted
// model standing in for Ollama so that making it needed no server;
// SIMTEST_RECORD=1 records it again from Ollama's qwen3:4b.
func TestWeatherAgentReplay(t *testing.T) {
	weather, err := agentloop.NewTool("get_weather", "The forecast for a city.",
		func(ctx context.Context, in struct {
			City string `json:"city"`
		}) (string, error) {
			return "sunny in " + in.City, nil
		})
	require.NoError(t, err)

	model := simtest.Replay(t, "testdata/weather-session.json", func() agentloop.Model {
		m, err := ollama.New(ollama.Config{Model: "qwen3:4b"})
		require.NoError(t, err)
		return m
	})
	agent := &agentloop.Agent{Model: model, System: "Be brief.", Tools: []*agentloop.Tool{weather}}
	text, err := agentloop.Text(agent.Stream(t.Context(), agentloop.History{agentloop.UserMessage("Weather in Oslo?")}, nil))
	require.NoError(t, err)
	require.Contains(t, text, "sunny")
}
