package aisdk

import (
	"bytes"
	"errors"
	"io"
	"net/http"
)

// SetHeaders sets the response headers of a UI message stream
// (ui-message-stream.md §1) on h.
func SetHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	h.Set("X-Accel-Buffering", "no")
}

// Writer writes a UI message stream as server-sent events: each chunk as
// "data: <json>\n\n", keep-alive comments, and "data: [DONE]\n\n" at the
// end. It flushes after every event unless told otherwise.
//
// A Writer is not safe for concurrent use: one goroutine writes. After a
// write fails, every later call returns the same error.
type Writer struct {
	w     io.Writer
	flush func() error
	buf   bytes.Buffer
	err   error
	// NoFlush, when set, leaves flushing to the caller ([Writer.Flush]),
	// so several events can go out in one write.
	NoFlush bool
	done    bool
}

// NewWriter returns a Writer on w. When w is an [http.ResponseWriter], the
// stream's headers are set on it (call NewWriter before anything is written
// to w) and every event is flushed through [http.ResponseController].
func NewWriter(w io.Writer) *Writer {
	sw := &Writer{w: w}
	if rw, ok := w.(http.ResponseWriter); ok {
		SetHeaders(rw.Header())
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

// WriteChunk writes one chunk as an SSE event.
func (w *Writer) WriteChunk(c Chunk) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return errors.New("aisdk: chunk written after [DONE]")
	}
	w.buf.Reset()
	w.buf.WriteString("data: ")
	if err := appendChunk(&w.buf, c); err != nil {
		return err // the stream is intact: nothing was written
	}
	w.buf.WriteString("\n\n")
	return w.write()
}

// WriteChunks writes several chunks, flushing once at the end.
func (w *Writer) WriteChunks(cs ...Chunk) error {
	noFlush := w.NoFlush
	w.NoFlush = true
	for _, c := range cs {
		if err := w.WriteChunk(c); err != nil {
			w.NoFlush = noFlush
			return err
		}
	}
	w.NoFlush = noFlush
	if !noFlush {
		return w.Flush()
	}
	return nil
}

// KeepAlive writes the comment ": keep-alive\n\n", which clients ignore and
// which keeps proxies from closing an idle stream.
func (w *Writer) KeepAlive() error {
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	w.buf.WriteString(": keep-alive\n\n")
	return w.write()
}

// Done writes "data: [DONE]\n\n", the end of the stream, and flushes.
func (w *Writer) Done() error {
	if w.err != nil {
		return w.err
	}
	w.done = true
	w.buf.Reset()
	w.buf.WriteString("data: [DONE]\n\n")
	if err := w.write(); err != nil {
		return err
	}
	return w.Flush()
}

// Flush flushes the underlying writer, if it can be flushed.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.flush != nil {
		if err := w.flush(); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

func (w *Writer) write() error {
	if _, err := w.w.Write(w.buf.Bytes()); err != nil {
		w.err = err
		return err
	}
	if w.NoFlush {
		return nil
	}
	return w.Flush()
}
