package aisdk

import (
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// discardResponse is an http.ResponseWriter that keeps nothing.
type discardResponse struct {
	h     http.Header
	bytes int
}

func (d *discardResponse) Header() http.Header         { return d.h }
func (d *discardResponse) WriteHeader(int)             {}
func (d *discardResponse) Flush()                      {}
func (d *discardResponse) Write(p []byte) (int, error) { d.bytes += len(p); return len(p), nil }

// BenchmarkWriter_TextDelta measures the encoder on the chunk that makes up
// most of a stream: one op is one text-delta event, flushed.
func BenchmarkWriter_TextDelta(b *testing.B) {
	w := NewWriter(&discardResponse{h: http.Header{}})
	c := TextDeltaChunk{ID: "text-1", Delta: "Hello, \"world\" "}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteChunk(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkWriter_ToolOutput measures the generic (encoding/json) path.
func BenchmarkWriter_ToolOutput(b *testing.B) {
	w := NewWriter(io.Discard)
	c := ToolOutputAvailableChunk{ToolCallID: "call_1", Output: outputJSON(`{"city":"Oslo","forecast":[{"day":1,"temp":20}]}`)}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteChunk(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkMapper_TextDelta: items to chunks, per text delta.
func BenchmarkMapper_TextDelta(b *testing.B) {
	m := NewMapper("m")
	buf := m.Map(nil, agentloop.TurnStart{Turn: 1}, nil)
	item := agentloop.TextDelta{Text: "word "}
	b.ReportAllocs()
	for b.Loop() {
		buf = m.Map(buf[:0], item, nil)
	}
}

// BenchmarkHandler_TextRun runs a whole request through the handler: a
// scripted model answering with deltas text deltas. The reported ns/delta
// and allocs/delta include decoding, the loop, mapping and SSE writing.
func BenchmarkHandler_TextRun(b *testing.B) {
	const deltas = 1000
	text := strings.Repeat("word ", deltas)
	model := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text(text)}, nil
	})
	h := &Handler{Agent: &agentloop.Agent{Model: model}, NewMessageID: func() string { return "m" }}
	body := userBody("hi")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	for b.Loop() {
		w := &discardResponse{h: http.Header{}}
		r, _ := http.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(w, r)
		if w.bytes < deltas*40 {
			b.Fatalf("only %d bytes written", w.bytes)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*deltas), "allocs/delta")
}

// BenchmarkHandler_VerifySignedConversation measures the stateless mode's
// check of what a client posts back: a conversation of 20 exchanges, each
// answer a signed text of about 200 bytes and a server tool's call and
// output. One op verifies the whole conversation; ns/answer is per
// assistant message (its text, call and output).
func BenchmarkHandler_VerifySignedConversation(b *testing.B) {
	const exchanges = 20
	s := newSigner([]byte("a benchmark secret of 32+ bytes...."))
	var msgs []UIMessage
	for i := range exchanges {
		id := "msg-" + strconv.Itoa(i)
		callID := "call-" + strconv.Itoa(i)
		m := NewMapper(id)
		m.signWith(s, nil)
		c := agentloop.ToolCall{ID: callID, Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}
		var chunks []Chunk
		for _, it := range []agentloop.Item{
			agentloop.TurnStart{Turn: 1},
			agentloop.ToolCallReady{Call: c},
			agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishToolCalls},
			agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: callID, Name: "get_weather", Content: `{"city":"Oslo","forecast":"sunny","high":21}`}},
			agentloop.TurnStart{Turn: 2},
			agentloop.TextDelta{Text: strings.Repeat("The weather in Oslo is sunny. ", 7)},
			agentloop.TurnEnd{Turn: 2},
			agentloop.Final{},
		} {
			chunks = m.Map(chunks, it, nil)
		}
		msg := UIMessage{ID: id, Role: "assistant"}
		client := newUIClient(&msg)
		for _, ch := range chunks {
			if err := client.apply(ch); err != nil {
				b.Fatal(err)
			}
		}
		msgs = append(msgs, UIMessage{ID: "u" + strconv.Itoa(i), Role: "user", Parts: []UIPart{{Type: "text", Text: "Weather?"}}}, msg)
	}
	raw, _ := json.Marshal(msgs)
	if err := json.Unmarshal(raw, &msgs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.verify(msgs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*exchanges), "ns/answer")
}
