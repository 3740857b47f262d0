package telemetry_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"slices"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/telemetry"
)

// A run traced into memory: one invoke_agent span, a chat span per model
// call and an execute_tool span per tool call under it.
func Example() {
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))

	hooks, err := telemetry.NewHooks(telemetry.Options{TracerProvider: tp})
	if err != nil {
		log.Fatal(err)
	}
	add, err := agentloop.NewTool("add", "Adds two numbers.", func(_ context.Context, in struct{ A, B int }) (int, error) {
		return in.A + in.B, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	agent := &agentloop.Agent{
		Name: "calculator",
		Model: simtest.NewModel(
			simtest.Turn{Reply: []simtest.Step{simtest.Call("call_1", "add", map[string]int{"A": 2, "B": 3}), simtest.Usage(12, 7)}},
			simtest.Turn{Reply: []simtest.Step{simtest.Text("2 + 3 = 5."), simtest.Usage(25, 6)}},
		),
		Tools: []*agentloop.Tool{add},
		Hooks: hooks,
	}
	answer, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("2 + 3?")}, nil))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer)
	printTree(exporter.GetSpans())
	// Output:
	// 2 + 3 = 5.
	// invoke_agent calculator [gen_ai.usage.input_tokens=37 gen_ai.usage.output_tokens=13]
	//   chat [gen_ai.usage.input_tokens=12 gen_ai.usage.output_tokens=7]
	//   execute_tool add [gen_ai.tool.call.id=call_1]
	//   chat [gen_ai.usage.input_tokens=25 gen_ai.usage.output_tokens=6]
}

// Tracing an agent with the application's OpenTelemetry setup: the hooks
// use the global providers, and the agent's logs carry the run's trace id.
func ExampleNewHooks() {
	ctx := context.Background()
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Hello!")}})
	history := agentloop.History{agentloop.UserMessage("Hi")}

	// Spans and metrics go to the providers the app installed with
	// otel.SetTracerProvider and otel.SetMeterProvider.
	hooks, err := telemetry.NewHooks(telemetry.Options{})
	if err != nil {
		log.Fatal(err)
	}
	agent := &agentloop.Agent{
		Model: model,
		Hooks: hooks,
		// Tool panics and hook errors are logged with the run's trace and span ids.
		Logger: slog.New(telemetry.LogHandler(slog.NewJSONHandler(os.Stderr, nil))),
	}
	answer, err := agentloop.Text(agent.Stream(ctx, history, &agentloop.RunOptions{ConversationID: "chat-42"}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer)
	// Output:
	// Hello!
}

// printTree prints spans as a tree, children in the order they started,
// with a few of their attributes.
func printTree(spans tracetest.SpanStubs) {
	slices.SortFunc(spans, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		for _, s := range spans {
			if s.Parent.SpanID().String() != parent {
				continue
			}
			var attrs []string
			for _, kv := range s.Attributes {
				switch kv.Key {
				case "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.tool.call.id":
					attrs = append(attrs, string(kv.Key)+"="+kv.Value.Emit())
				}
			}
			slices.Sort(attrs)
			fmt.Printf("%s%s %v\n", strings.Repeat("  ", depth), s.Name, attrs)
			walk(s.SpanContext.SpanID().String(), depth+1)
		}
	}
	walk("0000000000000000", 0)
}
