package agentloop_test

// The code blocks of README.md live here (and in the other packages'
// example files), compiled and run; TestREADME_CodeBlocksAreCompiled checks
// that the README quotes them verbatim.

import (
	"context"
	"fmt"
	"log"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// The README's typed tool.
func newAddTool() (*agentloop.Tool, error) {
	type AddArgs struct {
		A float64 `json:"a" jsonschema:"description=First number"`
		B float64 `json:"b" jsonschema:"description=Second number"`
	}

	add, err := agentloop.NewTool("add", "Add two numbers.",
		func(ctx context.Context, in AddArgs) (map[string]float64, error) {
			return map[string]float64{"sum": in.A + in.B}, nil
		})
	return add, err
}

// The README's first example: a run is a range loop.
func Example_rangeLoop() {
	ctx := context.Background()
	add, err := newAddTool()
	if err != nil {
		log.Fatal(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_1", "add", map[string]float64{"a": 2, "b": 3})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("2 + 3 = 5.")}},
	)

	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{add}}
	history := agentloop.History{agentloop.UserMessage("What is 2 + 3?")}
	for item, err := range agent.Stream(ctx, history, nil) {
		if err != nil {
			log.Fatal(err) // *CancelledError, *TurnLimitError or *TurnError; each carries the history
		}
		switch it := item.(type) {
		case agentloop.TextDelta:
			fmt.Print(it.Text)
		case agentloop.ToolResultReady:
			fmt.Printf("[%s → %s]\n", it.Result.Name, it.Result.Content)
		case agentloop.Final:
			history = it.History // store it; pass it back to continue the conversation
		}
	}

	fmt.Printf("\n%d messages\n", len(history))
	// Output:
	// [add → {"sum":5}]
	// 2 + 3 = 5.
	// 4 messages
}

// The README's client tool: the run pauses, and resumes from the stored
// history once the front end answered.
func Example_clientTool() {
	ctx := context.Background()
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_1", "get_location", nil)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("You are in Lyon.")}},
	)
	history := agentloop.History{agentloop.UserMessage("Where am I?")}

	location, err := agentloop.NewClientTool("get_location", "The user's city, from the browser.", nil)
	if err != nil {
		log.Fatal(err)
	}
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{location}}

	last, err := agentloop.Drain(agent.Stream(ctx, history, nil))
	if err != nil {
		log.Fatal(err)
	}
	pending, ok := last.(agentloop.Pending)
	if !ok {
		log.Fatalf("the run answered without the client tool: %v", last)
	}
	call := pending.ClientCalls[0] // call.Name == "get_location"

	// …later, possibly in another process, from the stored pending.History:
	history, err = pending.History.AppendResults(agentloop.ToolResult{CallID: call.ID, Content: `{"city":"Lyon"}`})
	if err != nil {
		log.Fatal(err)
	}
	text, err := agentloop.Text(agent.Stream(ctx, history, nil)) // the model answers from the result
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(text)

	// Output:
	// You are in Lyon.
}
