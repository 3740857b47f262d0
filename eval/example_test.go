package eval_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/eval"
	"github.com/agentloop/agentloop/simtest"
)

// A dataset of two cases scored on the tool trajectory, the answer and a
// judge's rubric. A simulator stands in for the agent's model and for the
// judge; in real use both are providers' models.
func Example() {
	type weatherArgs struct {
		City string `json:"city"`
	}
	weather, _ := agentloop.NewTool("get_weather", "Forecast for a city.", func(ctx context.Context, a weatherArgs) (string, error) {
		return "sunny in " + a.City, nil
	})
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentloop.RoleTool {
			return []simtest.Step{simtest.Text("It is " + last.Parts[0].ToolResult.Content + "."), simtest.Usage(40, 8)}, nil
		}
		city := strings.TrimSuffix(strings.TrimPrefix(last.Text(), "Weather in "), "?")
		return []simtest.Step{simtest.Call("", "get_weather", weatherArgs{City: city}), simtest.Usage(30, 10)}, nil
	})
	judge := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		if strings.Contains(req.Messages[0].Text(), "Final answer:\nIt is sunny") {
			return []simtest.Step{simtest.Text(`{"score": 1, "reason": "Answers from the forecast."}`)}, nil
		}
		return []simtest.Step{simtest.Text(`{"score": 0, "reason": "No forecast."}`)}, nil
	})

	dataset := &eval.Dataset{
		Name: "weather",
		Cases: []eval.Case{
			{Name: "paris", Input: agentloop.History{agentloop.UserMessage("Weather in Paris?")}, Scorers: []eval.Scorer{
				eval.Trajectory(eval.Call{Name: "get_weather", Args: []byte(`{"city": "Paris"}`)}),
				eval.Contains("Paris"),
			}},
			{Name: "oslo", Input: agentloop.History{agentloop.UserMessage("Weather in Oslo?")}, Scorers: []eval.Scorer{
				eval.Trajectory(eval.Call{Name: "get_weather", Args: []byte(`{"city": "Bergen"}`)}),
			}},
		},
		Scorers: []eval.Scorer{&eval.Judge{Model: judge, Rubric: "The answer gives the forecast from the tool."}},
	}
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{weather}}
	report, err := dataset.Run(context.Background(), agent, &eval.Options{Price: eval.Price{Input: 2, Output: 8}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range report.Cases {
		fmt.Printf("%s: score %.2f, pass %v, %d+%d tokens\n", c.Name, c.Score, c.Pass, c.Usage.Input, c.Usage.Output)
		for _, s := range c.Scores {
			fmt.Println(strings.TrimSpace(fmt.Sprintf("  %s %.2f %s", s.Scorer, s.Value, s.Reason)))
		}
	}
	fmt.Printf("score %.2f, %d of %d passed, cost %.5f\n", report.Score, report.Passed, len(report.Cases), report.Cost)
	// Output:
	// paris: score 1.00, pass true, 70+18 tokens
	// judge 1.00 Answers from the forecast.
	// trajectory 1.00
	// contains 1.00
	// oslo: score 0.50, pass false, 70+18 tokens
	// judge 1.00 Answers from the forecast.
	// trajectory 0.00 call 1: want get_weather({"city": "Bergen"}), got get_weather({"city":"Oslo"})
	// score 0.75, 1 of 2 passed, cost 0.00057
}
