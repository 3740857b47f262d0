package aisdk

import (
	"net/http"
	"testing"

	"github.com/agentloop/agentloop"
)

// BenchmarkMapper_NestedTextDelta: a sub-agent's streamed text, per delta,
// written as the Handler writes it: a Flush every 32 deltas (a batch of
// the run's items), a sub-run of 1,000 deltas ("word " each) per Mapper.
// Each flush sends the sub-run's whole view, so the cost per delta grows
// with the text's length over the flush interval.
func BenchmarkMapper_NestedTextDelta(b *testing.B) {
	w := NewWriter(&discardResponse{h: http.Header{}})
	var m *Mapper
	var buf []Chunk
	item := &agentloop.Nested{SubAgent: &agentloop.SubAgent{CallID: "l1", Agent: "researcher", Depth: 1, Path: []string{"l1"}}, Item: agentloop.TextDelta{Text: "word "}}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n%1000 == 0 {
			m = NewMapper("m")
		}
		if err := m.Write(w, item, nil); err != nil {
			b.Fatal(err)
		}
		if n++; n%32 == 0 {
			buf = m.Flush(buf[:0])
			for _, c := range buf {
				_ = w.WriteChunk(c)
			}
			_ = w.Flush()
		}
	}
}
