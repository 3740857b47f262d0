package telemetry_test

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/telemetry"
)

// benchHooks returns the hooks each benchmark variant runs with: none, a
// tracer that records nothing (no SDK, or a sampler that drops every
// trace), or one that records every span.
func benchHooks(b *testing.B) map[string]*agentloop.Hooks {
	b.Helper()
	mk := func(opts telemetry.Options) *agentloop.Hooks {
		h, err := telemetry.NewHooks(opts)
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	return map[string]*agentloop.Hooks{
		"none":      nil,
		"noop":      mk(telemetry.Options{TracerProvider: noop.NewTracerProvider()}),
		"unsampled": mk(telemetry.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))}),
		"recording": mk(telemetry.Options{TracerProvider: sdktrace.NewTracerProvider()}),
	}
}

var variants = []string{"none", "noop", "unsampled", "recording"}

// BenchmarkTextDelta measures the hook the loop calls for each text delta
// after the first of a model call: the whole per-delta cost of
// instrumentation.
func BenchmarkTextDelta(b *testing.B) {
	hooks := benchHooks(b)
	for _, name := range variants[1:] {
		b.Run(name, func(b *testing.B) {
			h := hooks[name]
			ctx := inModelCall(b, h)
			b.ReportAllocs()
			for b.Loop() {
				_ = h.OnTextDelta(ctx, "word ")
			}
		})
	}
}

// BenchmarkRunDeltas runs a model call that streams 1000 text deltas, and
// reports the time per delta of the whole run.
func BenchmarkRunDeltas(b *testing.B) {
	const deltas = 1000
	model := agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			for range deltas {
				if !yield(agentloop.TextDelta{Text: "w "}, nil) {
					return
				}
			}
			yield(agentloop.Usage{Input: 10, Output: deltas}, nil)
		}
	})
	history := agentloop.History{agentloop.UserMessage("go")}
	hooks := benchHooks(b)
	for _, name := range variants {
		b.Run(name, func(b *testing.B) {
			agent := &agentloop.Agent{Model: model, Hooks: hooks[name]}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := agentloop.Drain(agent.Stream(context.Background(), history, nil)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
		})
	}
}

// BenchmarkRunToolCalls runs a turn of 10 tool calls and an answer, and
// reports the time per tool call of the whole run.
func BenchmarkRunToolCalls(b *testing.B) {
	const calls = 10
	model := agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if req.Turn == 1 {
				for i := range calls {
					if !yield(agentloop.ToolCall{ID: "c" + strconv.Itoa(i), Name: "echo", Args: json.RawMessage(`{}`)}, nil) {
						return
					}
				}
				return
			}
			yield(agentloop.TextDelta{Text: "done"}, nil)
		}
	})
	echo, err := agentloop.NewRawTool("echo", "", nil, func(context.Context, json.RawMessage) (string, error) { return "ok", nil })
	if err != nil {
		b.Fatal(err)
	}
	history := agentloop.History{agentloop.UserMessage("go")}
	hooks := benchHooks(b)
	for _, name := range variants {
		b.Run(name, func(b *testing.B) {
			agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{echo}, Hooks: hooks[name]}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := agentloop.Drain(agent.Stream(context.Background(), history, nil)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
		})
	}
}
