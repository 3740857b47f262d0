package aisdk

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type flushRecorder struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushRecorder) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

func TestWriter_SetsHeadersFramesEventsAndFlushesEach(t *testing.T) {
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
	if err := w.Done(); err != nil {
		t.Fatal(err)
	}
	want := "data: {\"type\":\"start\",\"messageId\":\"m\"}\n\n" +
		": keep-alive\n\n" +
		"data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"line1\\nline2\"}\n\n" +
		"data: [DONE]\n\n"
	if diff := cmp.Diff(want, rec.Body.String()); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if rec.flushes < 4 {
		t.Errorf("%d flushes for 4 events", rec.flushes)
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
		t.Error("a chunk after [DONE] was accepted")
	}
}

func TestWriter_NoFlushBatchesUntilFlush(t *testing.T) {
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	w := NewWriter(rec)
	w.NoFlush = true
	if err := w.WriteChunks(StartStepChunk{}, FinishStepChunk{}); err != nil {
		t.Fatal(err)
	}
	if rec.flushes != 0 {
		t.Errorf("%d flushes before Flush", rec.flushes)
	}
	if err := w.Flush(); err != nil || rec.flushes != 1 {
		t.Errorf("Flush: %v, %d flushes", err, rec.flushes)
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
	if err := w.WriteChunk(StartStepChunk{}); err == nil {
		t.Fatal("write to a broken writer succeeded")
	}
	if err := w.KeepAlive(); err == nil {
		t.Error("KeepAlive after a failure succeeded")
	}
	if err := w.Done(); err == nil {
		t.Error("Done after a failure succeeded")
	}
}
