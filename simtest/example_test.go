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
	text, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("Weather in Oslo?")}, nil))
	fmt.Println(text, err)
	fmt.Println("model calls:", model.Calls(), "turns left:", model.Remaining())
	// Output:
	// It is sunny in Oslo. <nil>
	// model calls: 2 turns left: 0
}

// A script can live in a JSON file (version 1 of the format); LoadScript
// reads one from disk.
func ExampleParseScript() {
	script, err := simtest.ParseScript([]byte(`{"turns": [
	  {"expect": {"user": "hello"}, "reply": [{"text": "Hi there!"}, {"usage": {"input": 5, "output": 3}}]}
	]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	agent := &agentloop.Agent{Model: script.Model()}
	last, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hello")}, nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	f := last.(agentloop.Final)
	fmt.Println(f.Text, f.Usage.Input, f.Usage.Output)

	_, err = agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("again")}, nil))
	fmt.Println(err)
	// Output:
	// Hi there! 5 3
	// agentloop: turn 1: simtest: the script has no turn left: model call 2, but the script has 1 turns
}

// A Recorder turns a session with any model into a script; the script
// replays it with no model server, and fails a changed agent naming the
// first difference.
func ExampleRecorder() {
	ctx := context.Background()
	real := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Hello, Ada!"), simtest.Usage(9, 4)}}) // a provider's model in real use
	rec := &simtest.Recorder{Model: real}
	agent := &agentloop.Agent{Model: rec, System: "Greet the user."}
	text, err := agentloop.Text(agent.Stream(ctx, agentloop.History{agentloop.UserMessage("I am Ada.")}, nil))
	fmt.Println(text, err)

	script := rec.Script() // script.WriteFile("testdata/greet.json") keeps it
	agent.Model = script.Model()
	text, err = agentloop.Text(agent.Stream(ctx, agentloop.History{agentloop.UserMessage("I am Ada.")}, nil))
	fmt.Println(text, err)

	agent.Model = script.Model()
	agent.System = "Greet the user warmly."
	_, err = agentloop.Text(agent.Stream(ctx, agentloop.History{agentloop.UserMessage("I am Ada.")}, nil))
	fmt.Println(err)
	// Output:
	// Hello, Ada! <nil>
	// Hello, Ada! <nil>
	// agentloop: turn 1: simtest: turn 1: system prompt: want "Greet the user.", got "Greet the user warmly."
}
