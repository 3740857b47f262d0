package temporalrun_test

import (
	"context"
	"fmt"
	"iter"
	"log/slog"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/temporalrun"
)

// A run as a Temporal workflow, in Temporal's in-process test suite. A real
// program starts runner.Worker(c, worker.Options{}) beside its HTTP server
// and ranges over runner.Stream(ctx, c, run) instead.
func Example() {
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) { yield(agentloop.TextDelta{Text: "Hello!"}, nil) }
	})
	agent := &agentloop.Agent{Model: model} // a provider's model in a real program
	runner, err := temporalrun.New(agent, temporalrun.Options{
		TaskQueue: "agents",
		OnItem: func(runID string, item agentloop.Item, err error) {
			if d, ok := item.(agentloop.TextDelta); ok {
				fmt.Println("streamed:", d.Text)
			}
		},
	})
	if err != nil {
		panic(err)
	}

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	runner.Register(env)
	env.ExecuteWorkflow(runner.WorkflowName(), temporalrun.Input{
		ConversationID: "chat-1", History: agentloop.History{agentloop.UserMessage("hi")},
	})
	var out temporalrun.Outcome
	if err := env.GetWorkflowResult(&out); err != nil {
		panic(err)
	}
	item, err := out.Item()
	if err != nil {
		panic(err)
	}
	fmt.Println("final:", item.(agentloop.Final).Text)
	// Output:
	// streamed: Hello!
	// final: Hello!
}
