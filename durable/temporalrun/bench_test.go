package temporalrun_test

import (
	"context"
	"encoding/json"
	"iter"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/temporalrun"
)

// stepTurns model calls that each call a tool make a 200-step run (plus
// the answer's model call), as in durable/dbosrun's benchmark.
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
			n := 0
			for _, m := range req.Messages {
				if m.Role == agentloop.RoleAssistant {
					n++
				}
			}
			if n < stepTurns {
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

// BenchmarkSteps_TestSuite is the cost per step of a 200-step run as a
// workflow in Temporal's in-process test suite: the workflow, the
// activities and the payload encoding, without a server's round trips
// (a real server adds tens of milliseconds per activity).
func BenchmarkSteps_TestSuite(b *testing.B) {
	r, err := temporalrun.New(stepsAgent(b), temporalrun.Options{})
	if err != nil {
		b.Fatal(err)
	}
	in := temporalrun.Input{ConversationID: "bench", History: agentloop.History{agentloop.UserMessage("go")}}
	for b.Loop() {
		env := newEnv(b)
		r.Register(env)
		env.ExecuteWorkflow(r.WorkflowName(), in)
		var out temporalrun.Outcome
		if err := env.GetWorkflowResult(&out); err != nil {
			b.Fatal(err)
		}
		if it, err := out.Item(); err != nil {
			b.Fatal(err)
		} else if f, ok := it.(agentloop.Final); !ok || f.Text != "done" {
			b.Fatalf("the run ended with %#v", it)
		}
	}
	reportPerStep(b)
}
