package enginetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentloop/agentloop"
)

// Benchmark measures a 200-step run ([StepTurns] model calls that each
// call a tool, then the answer) on the engine: one run per iteration, on
// one runner of one harness, with run ids unique within it. It reports
// ns/step, the wall time of a run over its 200 steps. A nil newHarness
// runs the agent in process, without an engine: the baseline.
func Benchmark(b *testing.B, newHarness NewHarness) {
	agent := stepsAgent()
	h := agentloop.History{agentloop.UserMessage("go")}
	ctx := context.Background()
	run := func(int) (agentloop.Item, error) { return agentloop.Drain(agent.Stream(ctx, h, nil)) }
	if newHarness != nil {
		r := newHarness(b).Open(agent, nil)
		run = func(n int) (agentloop.Item, error) {
			return agentloop.Drain(r.Stream(ctx, fmt.Sprintf("bench-%d", n), "bench", h))
		}
	}
	n := 0
	for b.Loop() {
		n++
		last, err := run(n)
		if err != nil {
			b.Fatal(err)
		}
		if f, ok := last.(agentloop.Final); !ok || f.Text != "done" {
			b.Fatalf("the run ended with %#v", last)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*StepTurns), "ns/step")
}
