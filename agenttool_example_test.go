package agentloop_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// An agent uses another as a tool: the researcher's work streams into the
// lead's run as Nested items, tagged with the call and the agent, and its
// answer is the call's result. Each agent has its own Model: here a
// simtest script per agent.
func ExampleAgentTool() {
	weather, _ := agentloop.NewTool("get_weather", "The weather in a city.", func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny, 22°C", nil
	})
	researcher := &agentloop.Agent{
		Name:  "researcher",
		Tools: []*agentloop.Tool{weather},
		Model: simtest.NewModel(
			simtest.Turn{Reply: []simtest.Step{simtest.Call("w1", "get_weather", map[string]string{"city": "Berlin"})}},
			simtest.Turn{Reply: []simtest.Step{simtest.Text("Berlin: sunny, 22°C.")}},
		),
	}
	leadModel := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("r1", "researcher", map[string]string{"task": "Weather in Berlin today?"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("It is sunny in Berlin.")}},
	)
	research, _ := agentloop.AgentTool(researcher, agentloop.AgentToolOptions{})
	lead := &agentloop.Agent{Name: "lead", Model: leadModel, Tools: []*agentloop.Tool{research}}

	history := agentloop.History{agentloop.UserMessage("Should I take an umbrella to Berlin?")}
	for item, err := range lead.Stream(context.Background(), history, nil) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch it := item.(type) {
		case *agentloop.Nested:
			switch sub := it.Item.(type) {
			case agentloop.ToolCallReady:
				fmt.Printf("  [%s, under %s] calls %s %s\n", it.Agent, it.CallID, sub.Call.Name, sub.Call.Args)
			case agentloop.ToolResultReady:
				fmt.Printf("  [%s, under %s] got %s\n", it.Agent, it.CallID, sub.Result.Content)
			}
		case agentloop.ToolCallReady:
			fmt.Printf("lead calls %s %s\n", it.Call.Name, it.Call.Args)
		case agentloop.ToolResultReady:
			fmt.Printf("lead got %q\n", it.Result.Content)
		case agentloop.Final:
			fmt.Println("lead:", it.Text)
			fmt.Println("tokens by agent:", len(it.AgentUsage), "agents")
		}
	}
	// Output:
	// lead calls researcher {"task":"Weather in Berlin today?"}
	//   [researcher, under r1] calls get_weather {"city":"Berlin"}
	//   [researcher, under r1] got sunny, 22°C
	// lead got "Berlin: sunny, 22°C."
	// lead: It is sunny in Berlin.
	// tokens by agent: 2 agents
}
