package agentloop_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// Range over a run: text streams in, a typed tool runs, and the model
// answers from its result.
func Example() {
	type addArgs struct {
		A float64 `json:"a" jsonschema:"description=First number"`
		B float64 `json:"b" jsonschema:"description=Second number"`
	}
	add, err := agentloop.NewTool("add", "Add two numbers.", func(ctx context.Context, in addArgs) (map[string]float64, error) {
		return map[string]float64{"sum": in.A + in.B}, nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	model := simtest.NewModel( // any agentloop.Model: Ollama, OpenAI, Anthropic…
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Adding."), simtest.Call("call_1", "add", map[string]int{"a": 2, "b": 3})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("2 + 3 = 5.")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{add}}

	history := agentloop.History{agentloop.UserMessage("What is 2 + 3?")}
	for item, err := range agent.Stream(context.Background(), history, nil) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch it := item.(type) {
		case agentloop.TextDelta:
			fmt.Print(it.Text)
		case agentloop.ToolCallReady:
			fmt.Printf("\n[call %s %s]\n", it.Call.Name, it.Call.Args)
		case agentloop.ToolResultReady:
			fmt.Printf("[result %s]\n", it.Result.Content)
		case agentloop.Final:
			fmt.Printf("\n(%d turns, %d messages)\n", it.Turns, len(it.History))
		}
	}
	// Output:
	// Adding.
	// [call add {"a":2,"b":3}]
	// [result {"sum":5}]
	// 2 + 3 = 5.
	// (2 turns, 4 messages)
}

// A client tool runs in the caller's front end: the run pauses with a
// Pending item, and the caller resumes it by appending the result.
func ExampleHistory_AppendResults() {
	location, _ := agentloop.NewClientTool("get_location", "The user's city, from the browser.", nil)
	agent := &agentloop.Agent{
		Model: simtest.NewModel(
			simtest.Turn{Reply: []simtest.Step{simtest.Call("call_1", "get_location", nil)}},
			simtest.Turn{Reply: []simtest.Step{simtest.Text("You are in Lyon.")}},
		),
		Tools: []*agentloop.Tool{location},
	}
	ctx := context.Background()
	last, _ := agentloop.Drain(agent.Stream(ctx, agentloop.History{agentloop.UserMessage("Where am I?")}, nil))
	pending := last.(agentloop.Pending)
	fmt.Println("waiting for:", pending.ClientCalls[0].Name)

	// …later, possibly in another process, with the stored history:
	history, err := pending.History.AppendResults(agentloop.ToolResult{CallID: "call_1", Content: `{"city":"Lyon"}`})
	if err != nil {
		fmt.Println(err)
		return
	}
	text, err := agentloop.Text(agent.Stream(ctx, history, nil))
	fmt.Println(text, err)
	// Output:
	// waiting for: get_location
	// You are in Lyon. <nil>
}

// A hook cancels the run with a reason; the error carries it and a history
// in which every call has a result.
func ExampleCancel() {
	agent := &agentloop.Agent{
		Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("I will spend a lot.")}}),
		Hooks: &agentloop.Hooks{
			OnTextDelta: func(ctx context.Context, text string) error {
				return agentloop.Cancel("budget exhausted")
			},
		},
	}
	_, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("go")}, nil))
	var ce *agentloop.CancelledError
	if errors.As(err, &ce) {
		fmt.Println("cancelled:", ce.Reason)
	}
	// Output:
	// cancelled: budget exhausted
}
