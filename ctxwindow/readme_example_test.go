package ctxwindow_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"github.com/agentloop/agentloop/store/memstore"
)

// The README's section on long conversations quotes the body of this
// function between its begin and end markers.
func Example_readme() {
	var (
		ctx     context.Context
		model   agentloop.Model // the provider's model, 128k tokens of context
		tools   []*agentloop.Tool
		history agentloop.History
		chatID  string
	)
	mgr, err := ctxwindow.New(ctxwindow.Config{
		ContextWindow: 128_000,
		OutputReserve: 8_000,
		Strategies: []ctxwindow.Strategy{
			ctxwindow.DropReasoning{},  // reasoning of old turns
			ctxwindow.ShortenResults{}, // old tool results as previews
			ctxwindow.Summarize{},      // older turns summarized by the agent's model
			ctxwindow.SlidingWindow{},  // the oldest turns left out
		},
		LargeResults: &ctxwindow.LargeResults{},        // huge results as previews, always
		Docs:         memstore.New(memstore.Options{}), // summaries per conversation
	})
	if err != nil {
		log.Fatal(err)
	}
	agent := &agentloop.Agent{
		Model: model,
		Tools: append(tools, mgr.ReadResultTool()), // reads the rest of a preview
		Hooks: mgr.Hooks(),
	}
	// The summary is kept under the conversation's id; the run's history
	// (Final.History) keeps every message, whatever each model call sent.
	text, err := agentloop.Text(agent.Stream(ctx, history, &agentloop.RunOptions{ConversationID: chatID}))
	fmt.Println(text, err)
}
