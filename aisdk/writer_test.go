package aisdk

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type flushRecorder struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushRecorder) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

func TestWriter_SetsHeadersFramesEventsAndSendsThemOnFlush(t *testing.T) {
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	w := NewWriter(rec)
	if err := w.WriteChunk(StartChunk{MessageID: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := w.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(TextDeltaChunk{ID: "t", Delta: "line1\nline2"}); err != nil {
		t.Fatal(err)
	}
	if rec.Body.Len() != 0 || rec.flushes != 0 {
		t.Fatalf("before Flush: %d bytes written, %d flushes; want nothing", rec.Body.Len(), rec.flushes)
	}
	if err := w.Flush(); err != nil || rec.flushes != 1 {
		t.Fatalf("Flush: %v, %d flushes", err, rec.flushes)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "data: {\"type\":\"start\",\"messageId\":\"m\"}\n\n" +
		": keep-alive\n\n" +
		"data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"line1\\nline2\"}\n\n" +
		"data: [DONE]\n\n"
	if diff := cmp.Diff(want, rec.Body.String()); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if rec.flushes != 2 {
		t.Errorf("%d flushes, want one per Flush and one for Close", rec.flushes)
	}
	for k, v := range map[string]string{
		"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Connection": "keep-alive",
		"X-Vercel-Ai-Ui-Message-Stream": "v1", "X-Accel-Buffering": "no",
	} {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if err := w.WriteChunk(FinishChunk{}); err == nil {
		t.Error("a chunk after Close was accepted")
	}
	if err := w.Close(); err != nil || strings.Count(rec.Body.String(), "[DONE]") != 1 {
		t.Errorf("a second Close: %v, body %q", err, rec.Body.String())
	}
}

func TestWriter_AFullBufferIsWrittenWithoutFlushing(t *testing.T) {
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	w := NewWriter(rec)
	big := TextDeltaChunk{ID: "t", Delta: strings.Repeat("x", writerBufferSize)}
	if err := w.WriteChunk(big); err != nil {
		t.Fatal(err)
	}
	if rec.Body.Len() <= writerBufferSize || rec.flushes != 0 {
		t.Errorf("after a buffer's worth: %d bytes written, %d flushes; want it written, not flushed", rec.Body.Len(), rec.flushes)
	}
}

func TestWriter_AChunkThatDoesNotEncodeLeavesTheStreamIntact(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewWriter(rec)
	if err := w.WriteChunk(nil); err == nil {
		t.Fatal("a nil chunk was accepted")
	}
	bad := ToolOutputAvailableChunk{ToolCallID: "c", Output: []byte("{not json")}
	if err := w.WriteChunk(bad); err == nil {
		t.Fatal("a chunk with invalid output JSON was accepted")
	}
	if err := w.WriteChunk(StartStepChunk{}); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if want := "data: {\"type\":\"start-step\"}\n\ndata: [DONE]\n\n"; rec.Body.String() != want {
		t.Errorf("body %q, want %q", rec.Body.String(), want)
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("broken pipe")
	}
	f.n--
	return len(p), nil
}

func TestWriter_AfterAFailedWriteEveryCallFails(t *testing.T) {
	w := NewWriter(&failingWriter{n: 1})
	if err := w.WriteChunk(StartChunk{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(StartStepChunk{}); err != nil {
		t.Fatal(err) // buffered: the failure shows at the next write out
	}
	if err := w.Flush(); err == nil {
		t.Fatal("a flush to a broken writer succeeded")
	}
	if err := w.WriteChunk(StartStepChunk{}); err == nil {
		t.Error("WriteChunk after a failure succeeded")
	}
	if err := w.KeepAlive(); err == nil {
		t.Error("KeepAlive after a failure succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failure succeeded")
	}
}

func TestWriter_TextDeltaEventsWriteWhatWriteChunkWritesWhateverTheParts(t *testing.T) {
	long := strings.Repeat("a-long-part-id-", 8) // longer than the head's first array
	deltas := []TextDeltaChunk{
		{ID: "text-1", Delta: "Hel"}, {ID: "text-1", Delta: "lo \"x\"\n"},
		{ID: long, Delta: "é\xff"}, {ID: long, Delta: "more"},
		{ID: `q"\`, Delta: "\u2028"}, {ID: "text-1", Delta: "again"},
	}
	var want, got strings.Builder
	ww, gw := NewWriter(&want), NewWriter(&got)
	for _, d := range deltas {
		if err := ww.WriteChunk(d); err != nil {
			t.Fatal(err)
		}
		data, valid, err := gw.textDeltaEvent(d.ID, d.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if valid != (wireText(d.Delta) == d.Delta) {
			t.Errorf("delta %q: valid %v", d.Delta, valid)
		}
		var one bytes.Buffer
		if err := appendChunk(&one, d); err != nil || string(data) != one.String() {
			t.Errorf("the event's JSON is %s, want %s (%v)", data, one.String(), err)
		}
	}
	if err := ww.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), got.String()); diff != "" {
		t.Errorf("textDeltaEvent wrote (-WriteChunk +textDeltaEvent):\n%s", diff)
	}
}
