package aisdk

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store/memstore"
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
// and allocs/delta include decoding, the loop, mapping and SSE writing,
// and the scripted model's own cost (1 allocation per delta: see
// BenchmarkModelOnly_TextDeltas in the root package).
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

// BenchmarkHandler_TextRunStored is BenchmarkHandler_TextRun in the
// stored mode, on a memstore: every op is a new chat, saved before and
// after its run, its 1,000 chunks also appended to the chat's stream log
// (64 at a time).
func BenchmarkHandler_TextRunStored(b *testing.B) {
	const deltas = 1000
	text := strings.Repeat("word ", deltas)
	model := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text(text)}, nil
	})
	st := memstore.New(memstore.Options{})
	defer st.Close()
	h := &ChatServer{Agent: &agentloop.Agent{Model: model}, Store: st, NewMessageID: func() string { return "m" }}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		body := `{"id":"chat-` + strconv.Itoa(n) + `","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}],"trigger":"submit-message"}`
		w := &discardResponse{h: http.Header{}}
		r, _ := http.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = "127.0.0.1:1"
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

// postedChat returns the body useChat posts after exchanges rounds of a
// weather chat, as the Mapper streamed each answer with signing on (s) and
// the client kept it: a user question, then an assistant message with a
// signed text, a signed server tool call with its signed output, and a
// signed answer of about 200 bytes with quotes and a line break; and the
// new question last. With system set, a system message comes first. With
// exchanges 0 it is the first post of a chat.
func postedChat(tb testing.TB, s *signer, system bool, exchanges int) []byte {
	user := func(i int) UIMessage {
		return UIMessage{ID: "u" + strconv.Itoa(i), Role: "user", Parts: []UIPart{{Type: "text", Text: "What is the weather in Oslo tomorrow? Do I need an umbrella?"}}}
	}
	var msgs []UIMessage
	if system {
		msgs = append(msgs, UIMessage{ID: "s", Role: "system", Parts: []UIPart{{Type: "text", Text: "You are a weather assistant. Answer briefly."}}})
	}
	for i := range exchanges {
		id := "msg-" + strconv.Itoa(i)
		callID := "call-" + strconv.Itoa(i)
		m := NewMapper(id)
		m.signWith(s, nil)
		c := agentloop.ToolCall{ID: callID, Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo","day":"tomorrow"}`)}
		var chunks []Chunk
		for _, it := range []agentloop.Item{
			agentloop.TurnStart{Turn: 1},
			agentloop.TextDelta{Text: "Let me check the forecast."},
			agentloop.ToolCallReady{Call: c},
			agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishToolCalls},
			agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: callID, Name: "get_weather", Content: `{"city":"Oslo","forecast":"rain","high":14,"low":8}`}},
			agentloop.TurnStart{Turn: 2},
			agentloop.TextDelta{Text: "Tomorrow in Oslo: rain, with a high of 14 °C and a low of 8 °C.\nYes, \"bring an umbrella\": the showers last most of the day, heaviest in the afternoon."},
			agentloop.TurnEnd{Turn: 2},
			agentloop.Final{},
		} {
			chunks = m.Map(chunks, it, nil)
		}
		msg := UIMessage{ID: id, Role: "assistant", Parts: []UIPart{}}
		client := newUIClient(&msg)
		for _, ch := range chunks {
			if err := client.apply(ch); err != nil {
				tb.Fatal(err)
			}
		}
		msgs = append(msgs, user(i), msg)
	}
	msgs = append(msgs, user(exchanges))
	body, err := json.Marshal(ChatRequest{ID: "chat-1", Messages: msgs, Trigger: TriggerSubmit})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

// BenchmarkPostedChat measures what the Handler does with a posted body
// before the run starts: DecodeRequest and ToHistory, and in the stateless
// mode (signed) the signature check between them. Bodies are the first
// post of a chat (1 message) and a long chat (1,000 messages: a system
// message, 499 weather exchanges and the new question). MB/s is of the
// body; ns/msg and allocs/msg are per posted message.
func BenchmarkPostedChat(b *testing.B) {
	s := newSigner([]byte("a benchmark secret of 32+ bytes...."))
	for _, bc := range []struct {
		name   string
		msgs   int
		signed bool
	}{
		{"1-message", 1, false},
		{"1000-messages", 1000, false},
		{"1-message/signed", 1, true},
		{"1000-messages/signed", 1000, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			system := bc.msgs%2 == 0
			body := postedChat(b, s, system, (bc.msgs-1)/2)
			msgs := bc.msgs
			b.SetBytes(int64(len(body)))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			for b.Loop() {
				req, err := DecodeRequest(bytes.NewReader(body), Limits{})
				if err != nil {
					b.Fatal(err)
				}
				posted := req.Messages
				if bc.signed {
					if posted, err = s.verify(posted); err != nil {
						b.Fatal(err)
					}
				}
				h, err := ToHistory(posted)
				if err != nil {
					b.Fatal(err)
				}
				if len(h) < msgs {
					b.Fatalf("history of %d messages from %d posted", len(h), msgs)
				}
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*msgs), "ns/msg")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*msgs), "allocs/msg")
		})
	}
}

// BenchmarkFloor_TextDeltaEvent is the physical floor of a text delta on
// the wire: a hand-built SSE event for an ASCII delta that needs no
// escaping, appended to a reused buffer. The Handler's own work per delta
// (BenchmarkHandler_TextDeltaPath) is measured against it.
func BenchmarkFloor_TextDeltaEvent(b *testing.B) {
	id, delta := "text-1", "word "
	buf := make([]byte, 0, writerBufferSize+256)
	b.ReportAllocs()
	defer threadCPU(b)()
	for b.Loop() {
		buf = append(buf, `data: {"type":"text-delta","id":"`...)
		buf = append(buf, id...)
		buf = append(buf, `","delta":"`...)
		buf = append(buf, delta...)
		buf = append(buf, "\"}\n\n"...)
		if len(buf) >= writerBufferSize {
			buf = buf[:0]
		}
	}
}

// BenchmarkHandler_TextDeltaPath is the Handler's own work per text delta
// in its default (signed, stateless) mode, without the loop and the
// model: the Mapper's bookkeeping of a delta that continues an open text
// part, its signature's share, and the SSE event written to the response
// writer, flushed once per 32 deltas as a batch of the run's pipe is.
func BenchmarkHandler_TextDeltaPath(b *testing.B) {
	out := &output{sw: NewWriter(&discardResponse{h: http.Header{}}), client: true}
	m := NewMapper("m")
	m.signWith(newSigner([]byte("a benchmark secret of 32+ bytes....")), nil)
	m.Map(nil, agentloop.TurnStart{Turn: 1}, nil)
	m.Map(nil, agentloop.TextDelta{Text: "Hi"}, nil)
	text := "word "
	b.ReportAllocs()
	defer threadCPU(b)()
	n := 0
	for b.Loop() {
		if !out.continueText(m, text) {
			b.Fatal("the text part is not open")
		}
		if n++; n%32 == 0 {
			out.flush()
		}
		if n%100000 == 0 { // a long text's part ends, as a long answer's would
			m.Map(nil, agentloop.TurnStart{Turn: 2}, nil)
			m.Map(nil, agentloop.TextDelta{Text: "Hi"}, nil)
		}
	}
}

// BenchmarkMapper_WriteTextDelta: an item to its SSE event through
// Mapper.Write, per text delta, flushed once per 32 deltas.
func BenchmarkMapper_WriteTextDelta(b *testing.B) {
	w := NewWriter(&discardResponse{h: http.Header{}})
	m := NewMapper("m")
	_ = m.Write(w, agentloop.TurnStart{Turn: 1}, nil)
	var item agentloop.Item = agentloop.TextDelta{Text: "word "}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if err := m.Write(w, item, nil); err != nil {
			b.Fatal(err)
		}
		if n++; n%32 == 0 {
			_ = w.Flush()
		}
	}
}

// BenchmarkMapper_TextDeltaSigned: items to chunks, per text delta, with
// the stateless mode's signing, through the public Map.
func BenchmarkMapper_TextDeltaSigned(b *testing.B) {
	m := NewMapper("m")
	m.signWith(newSigner([]byte("a benchmark secret of 32+ bytes....")), nil)
	buf := m.Map(nil, agentloop.TurnStart{Turn: 1}, nil)
	item := agentloop.TextDelta{Text: "word "}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		buf = m.Map(buf[:0], item, nil)
		if n++; n%100000 == 0 {
			buf = m.Map(buf[:0], agentloop.TurnStart{Turn: 2}, nil)
		}
	}
}

// BenchmarkMapper_ToolCallRun maps and writes one response with a server
// tool's call and result (and a short answer after it), as the Handler
// does, unsigned (as in the stored mode) and signed (the stateless mode):
// the difference is what the signatures cost.
func BenchmarkMapper_ToolCallRun(b *testing.B) {
	c := agentloop.ToolCall{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo","day":"tomorrow"}`)}
	items := []agentloop.Item{
		agentloop.TurnStart{Turn: 1},
		agentloop.ToolCallReady{Call: c},
		agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishToolCalls},
		agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: c.ID, Name: c.Name, Content: `{"city":"Oslo","forecast":"rain","high":14,"low":8}`}},
		agentloop.TurnStart{Turn: 2},
		agentloop.TextDelta{Text: "Rain, "},
		agentloop.TextDelta{Text: "14 degrees."},
		agentloop.TurnEnd{Turn: 2, FinishReason: agentloop.FinishStop},
		agentloop.Final{},
	}
	s := newSigner([]byte("a benchmark secret of 32+ bytes...."))
	for _, bc := range []struct {
		name string
		sign *signer
	}{{"unsigned", nil}, {"signed", s}} {
		b.Run(bc.name, func(b *testing.B) {
			out := &output{sw: NewWriter(&discardResponse{h: http.Header{}}), client: true}
			var chunks []Chunk
			b.ReportAllocs()
			for b.Loop() {
				m := NewMapper("m")
				if bc.sign != nil {
					m.signWith(bc.sign, nil)
					m.sigReuse = reusedSigs.Get().(*reusedSig) // as the Handler's
				}
				for _, it := range items {
					if d, ok := it.(agentloop.TextDelta); ok && out.continueText(m, d.Text) {
						continue
					}
					chunks = m.Map(chunks[:0], it, nil)
					out.write(chunks)
				}
				out.flush()
				if m.sigReuse != nil {
					m.sigReuse.release()
				}
			}
		})
	}
}
