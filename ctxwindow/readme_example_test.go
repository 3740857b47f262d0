package ctxwindow_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
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
	// README begin
	mgr, err := ctxwindow.New(ctxwindow.Config{
		ContextWindow: 128_000,
		OutputReserve: 8_000,
		Strategies: []ctxwindow.Strategy{
			ctxwindow.DropReasoning{},  // reasoning of old turns
			ctxwindow.ShortenResults{}, // old tool results as previews
			ctxwindow.Summarize{},      // older turns summarized by the agent's model
			ctxwindow.Window{},         // the oldest turns left out
		},
		LargeResults: &ctxwindow.LargeResults{}, // huge results as previews, always
		Store:        &ctxwindow.MemoryStore{},  // summaries per conversation
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
	text, err := agentloop.Text(agent.Stream(ctx, history, agentloop.WithConversationID(chatID)))
	// README end
	fmt.Println(text, err)
}

// The README quotes Example_readme verbatim.
func TestREADME_QuotesTheCompiledExample(t *testing.T) {
	src, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(src), "\t// README begin\n")
	body, _, ok := strings.Cut(rest, "\t// README end\n")
	if !ok {
		t.Fatal("the README markers are missing")
	}
	var snippet strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		snippet.WriteString(strings.TrimPrefix(line, "\t"))
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+snippet.String()+"```\n") {
		t.Fatalf("README.md does not quote Example_readme's snippet verbatim; it should hold:\n```go\n%s```", snippet.String())
	}
}
