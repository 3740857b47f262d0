package simtest_test

import (
	"context"
	"iter"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// BenchmarkRecorder measures what a Recorder adds to each text delta of a
// model that yields 1,000 pre-built deltas: "bare" ranges over the model
// itself, "recorded" over the same model wrapped in a Recorder (the turn
// recorded, its text kept for the script). Each iteration is one model call
// on a new Recorder; ns/delta, B/delta and allocs/delta are per delta.
func BenchmarkRecorder(b *testing.B) {
	const deltas = 1000
	chunks := make([]agentloop.Chunk, deltas)
	for i := range chunks {
		chunks[i] = agentloop.TextDelta{Text: "ab "} // boxed once, outside the timed part
	}
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			for _, c := range chunks {
				if !yield(c, nil) {
					return
				}
			}
		}
	})
	req := &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("go")}}
	for _, bc := range []struct {
		name  string
		model func() agentloop.Model
	}{
		{"bare", func() agentloop.Model { return model }},
		{"recorded", func() agentloop.Model { return &simtest.Recorder{Model: model} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, err := range bc.model().Stream(context.Background(), req) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != deltas {
					b.Fatalf("got %d chunks, want %d", n, deltas)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/deltas, "ns/delta")
			allocs := testing.AllocsPerRun(10, func() {
				for range bc.model().Stream(context.Background(), req) {
				}
			})
			b.ReportMetric(allocs/deltas, "allocs/delta")
		})
	}
}
