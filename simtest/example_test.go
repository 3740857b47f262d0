package simtest_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// A scripted model answers a tool call, and the test checks what the
// model was sent.
func Example() {
	type weatherArgs struct {
		City string `json:"city"`
	}
	weather, _ := agentloop.NewTool("get_weather", "Forecast for a city.", func(ctx context.Context, a weatherArgs) (string, error) {
		return "sunny in " + a.City, nil
	})
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
	text, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("Weather in Oslo?")}))
	fmt.Println(text, err)
	fmt.Println("model calls:", model.Calls(), "turns left:", model.Remaining())
	// Output:
	// It is sunny in Oslo. <nil>
	// model calls: 2 turns left: 0
}
