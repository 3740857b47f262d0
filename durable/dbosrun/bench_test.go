package dbosrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/dbosrun"
)

// stepTurns model calls that each call a tool make a 200-step run (plus
// the answer's model call).
const stepTurns = 100

// stepsAgent's model calls tool "noop" on each of its first stepTurns
// turns, then answers.
func stepsAgent(b *testing.B) *agentloop.Agent {
	noop, err := agentloop.NewRawTool("noop", "Nothing.", nil, func(context.Context, json.RawMessage) (string, error) { return "ok", nil })
	if err != nil {
		b.Fatal(err)
	}
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if replies(req) < stepTurns {
				yield(agentloop.ToolCall{Name: "noop", Args: json.RawMessage(`{}`)}, nil)
				return
			}
			yield(agentloop.TextDelta{Text: "done"}, nil)
		}
	})
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{noop}, MaxTurns: stepTurns + 1}
}

func reportPerStep(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*stepTurns), "ns/step")
}

// BenchmarkSteps_InProcess is the same 200-step run without an engine.
func BenchmarkSteps_InProcess(b *testing.B) {
	a := stepsAgent(b)
	h := agentloop.History{agentloop.UserMessage("go")}
	for b.Loop() {
		if _, err := agentloop.Drain(a.Stream(context.Background(), h, nil)); err != nil {
			b.Fatal(err)
		}
	}
	reportPerStep(b)
}

// BenchmarkSteps_DBOS is the cost per step of a 200-step run recorded by
// DBOS: on SQLite, and on PostgreSQL when AGENTLOOP_TEST_POSTGRES is set.
func BenchmarkSteps_DBOS(b *testing.B) {
	for _, be := range backends(b) {
		n := 0 // run ids, unique across the sub-benchmark's invocations on one database
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			d, err := openDBOS(ctx, be.url, be.schema)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = dbos.Shutdown(d, 10*time.Second) }()
			r, err := dbosrun.New(d, stepsAgent(b), dbosrun.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := dbos.Launch(d); err != nil {
				b.Fatal(err)
			}
			h := agentloop.History{agentloop.UserMessage("go")}
			for b.Loop() {
				n++
				run := dbosrun.Run{ID: fmt.Sprintf("bench-%d", n), History: h}
				if _, err := agentloop.Drain(r.Stream(ctx, run)); err != nil {
					b.Fatal(err)
				}
			}
			reportPerStep(b)
		})
	}
}
