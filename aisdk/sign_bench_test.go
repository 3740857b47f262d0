package aisdk

import (
	"encoding/json"
	"testing"
)

// BenchmarkSigner_ToolCallParts: the stateless mode's own work for
// BenchmarkMapper_ToolCallRun's signed response, part by part, without
// the Mapper: the input's canonical form, the call's, the output's and the
// text part's signatures.
func BenchmarkSigner_ToolCallParts(b *testing.B) {
	s := newSigner([]byte("a benchmark secret of 32+ bytes...."))
	in := json.RawMessage(`{"city":"Oslo","day":"tomorrow"}`)
	out := json.RawMessage(`{"city":"Oslo","forecast":"rain","high":14,"low":8}`)
	info := callInfo{id: "call_1", name: "get_weather", input: canonicalValue(in)}
	const msgID = "msg_0123456789ab"
	var buf [64]byte
	b.Run("input-canonical", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = canonicalValue(in)
		}
	})
	b.Run("call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.appendCall(buf[:0], msgID, info, ownerServer)
		}
	})
	b.Run("output", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.appendOutput(buf[:0], msgID, info, out)
		}
	})
	b.Run("text", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t := s.streamText(msgID)
			t.write("Rain, ", true)
			t.write("14 degrees.", true)
			s.appendEndText(buf[:0], t)
		}
	})
}
