package aisdk

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// setHeaders sets the response headers of a UI message stream
// (ui-message-stream.md §1) on h.
func setHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	h.Set("X-Accel-Buffering", "no")
}

// writerBufferSize is how much a Writer buffers before it writes to the
// underlying writer without waiting for Flush.
const writerBufferSize = 32 << 10

// Writer writes a UI message stream as server-sent events: each chunk as
// "data: <json>\n\n", keep-alive comments, and "data: [DONE]\n\n" at the
// end.
//
// Like a [bufio.Writer], it buffers: [Writer.WriteChunk] and
// [Writer.KeepAlive] add events to the buffer, and the events reach the
// client when [Writer.Flush] or [Writer.Close] is called, which write the
// buffer and flush the underlying writer. A buffer that fills up is written
// early, without the flush. Call Flush whenever the client should see what
// was written so far (the [Handler] does when the run has nothing more
// ready), and Close once at the end.
//
// A Writer is not safe for concurrent use: one goroutine writes. After a
// write to the underlying writer fails, every later call returns that
// error.
type Writer struct {
	w      io.Writer
	flush  func() error
	buf    []byte       // the events not yet written out
	pooled *[]byte      // where buf came from in bufPool, and goes back to on Close
	enc    bytes.Buffer // buf, lent to the chunk encoders (encode)
	err    error
	closed bool

	// deadline, when set, bounds each write to the client: it is called
	// with true before a write or flush, and with false after it.
	deadline func(set bool)

	// textID is the text part whose text-delta events textDeltaEvent
	// wrote last, and textHead those events' start, up to the delta:
	// `data: {"type":"text-delta","id":"<textID>","delta":`.
	textID   string
	textHead []byte
	headBuf  [64]byte // textHead's first array: a Mapper's ids fit, at no allocation
}

// NewWriter returns a Writer on w. When w is an [http.ResponseWriter], the
// stream's headers are set on it (call NewWriter before anything is written
// to w) and Flush flushes it through [http.ResponseController]; when w has
// a Flush() error method, Flush calls it.
func NewWriter(w io.Writer) *Writer {
	pooled := bufPool.Get().(*[]byte)
	sw := &Writer{w: w, buf: (*pooled)[:0], pooled: pooled}
	if rw, ok := w.(http.ResponseWriter); ok {
		setHeaders(rw.Header())
		rc := http.NewResponseController(rw)
		sw.flush = func() error {
			if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return err
			}
			return nil
		}
	} else if f, ok := w.(interface{ Flush() error }); ok {
		sw.flush = f.Flush
	}
	return sw
}

// newTimedWriter returns a Writer on w whose every write and flush must
// end within timeout (a per-write deadline through
// [http.ResponseController]), so that a client that stops reading fails
// the write after timeout instead of holding the response forever. A
// timeout <= 0, or a w without deadlines, bounds nothing.
func newTimedWriter(w http.ResponseWriter, timeout time.Duration) *Writer {
	sw := NewWriter(w)
	if timeout <= 0 {
		return sw
	}
	rc := http.NewResponseController(w)
	if err := rc.SetWriteDeadline(time.Time{}); err != nil {
		return sw // http.ErrNotSupported: an in-process recorder
	}
	sw.deadline = func(set bool) {
		var t time.Time
		if set {
			t = time.Now().Add(timeout)
		}
		_ = rc.SetWriteDeadline(t)
	}
	return sw
}

// bufPool holds the buffers of closed Writers, so that a server's
// streams reuse them instead of growing a new one each.
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuffer is the largest buffer bufPool keeps: a Writer's buffer
// seldom passes writerBufferSize.
const maxPooledBuffer = 2 * writerBufferSize

// errClosed is returned by writes after Close.
var errClosed = errors.New("aisdk: write to a closed Writer (after data: [DONE])")

// WriteChunk adds one chunk to the buffer as an SSE event. A chunk that
// does not encode is an error that leaves the stream as it was.
func (w *Writer) WriteChunk(c Chunk) error {
	if err := w.usable(); err != nil {
		return err
	}
	n := len(w.buf)
	w.buf = append(w.buf, "data: "...)
	if err := w.encode(c); err != nil {
		w.buf = w.buf[:n]
		return err
	}
	w.buf = append(w.buf, "\n\n"...)
	return w.spill()
}

// encode appends c's wire JSON to the buffer: the encoders write to a
// bytes.Buffer, so the buffer is lent to them as one and taken back.
func (w *Writer) encode(c Chunk) error {
	w.enc = *bytes.NewBuffer(w.buf)
	err := appendChunk(&w.enc, c)
	w.buf = w.enc.Bytes()
	w.enc = bytes.Buffer{} // w.buf is not shared
	return err
}

// writeData adds one event whose data is already encoded (a chunk's wire
// JSON, as appendChunk writes it).
func (w *Writer) writeData(data []byte) error {
	if err := w.usable(); err != nil {
		return err
	}
	w.grow(len(data) + len("data: \n\n"))
	w.buf = append(w.buf, "data: "...)
	w.buf = append(w.buf, data...)
	w.buf = append(w.buf, "\n\n"...)
	return w.spill()
}

// textDeltaEvent adds the event of a text-delta chunk without provider
// metadata, encoded straight into the buffer, and returns the chunk's
// JSON, which stays valid until the next call on w, and whether delta is
// valid UTF-8 (appendJSONText). It does not write a full buffer out: the
// caller calls spill once done with the JSON. The events of one text part
// share their start up to the delta, encoded once.
func (w *Writer) textDeltaEvent(id, delta string) (data []byte, valid bool, err error) {
	if err := w.usable(); err != nil {
		return nil, false, err
	}
	if id != w.textID || w.textHead == nil {
		if w.textHead == nil {
			w.textHead = w.headBuf[:0]
		}
		w.textHead = append(appendJSONString(append(w.textHead[:0], `data: {"type":"text-delta","id":`...), id), `,"delta":`...)
		w.textID = id
	}
	w.grow(len(w.textHead) + len(delta) + len("}\n\n"))
	start := len(w.buf) + len("data: ")
	w.buf = append(w.buf, w.textHead...)
	w.buf, valid = appendJSONText(w.buf, delta)
	w.buf = append(w.buf, "}\n\n"...)
	return w.buf[start : len(w.buf)-len("\n\n")], valid, nil
}

// grow makes room for n more bytes in the buffer, at least doubling it
// when it grows, as the bytes.Buffer it replaced did (append alone grows a
// large slice by about a quarter at a time).
func (w *Writer) grow(n int) {
	if cap(w.buf)-len(w.buf) < n {
		w.buf = slices.Grow(w.buf, max(n, cap(w.buf)))
	}
}

// buffered returns how many bytes are buffered, waiting for Flush.
func (w *Writer) buffered() int { return len(w.buf) }

// KeepAlive adds the comment ": keep-alive\n\n" to the buffer. Clients
// ignore it; it keeps proxies from closing an idle stream once flushed.
func (w *Writer) KeepAlive() error {
	if err := w.usable(); err != nil {
		return err
	}
	w.buf = append(w.buf, ": keep-alive\n\n"...)
	return w.spill()
}

// Flush writes the buffer to the underlying writer and flushes it, if it
// can be flushed.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.deadline != nil {
		w.deadline(true)
	}
	if err := w.writeOut(); err != nil {
		return err
	}
	if w.flush != nil {
		if err := w.flush(); err != nil {
			w.err = err
			return err
		}
	}
	if w.deadline != nil {
		w.deadline(false)
	}
	return nil
}

// Close ends the stream: it adds "data: [DONE]\n\n" and flushes. It does
// not close the underlying writer. Writes after Close are errors; a second
// Close does nothing.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	if w.err == nil {
		w.buf = append(w.buf, "data: [DONE]\n\n"...)
	}
	w.closed = true
	err := w.Flush()
	if len(w.buf) == 0 && cap(w.buf) <= maxPooledBuffer && w.pooled != nil {
		*w.pooled = w.buf
		bufPool.Put(w.pooled)
		w.buf, w.pooled = nil, nil // nothing writes after Close
	}
	return err
}

func (w *Writer) usable() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errClosed
	}
	return nil
}

// spill writes the buffer out once it is full.
func (w *Writer) spill() error {
	if len(w.buf) < writerBufferSize {
		return nil // most calls: spill is inlined
	}
	return w.spillOut()
}

func (w *Writer) spillOut() error {
	if w.deadline != nil {
		w.deadline(true)
		defer w.deadline(false)
	}
	return w.writeOut()
}

func (w *Writer) writeOut() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		w.err = err
	}
	return err
}
