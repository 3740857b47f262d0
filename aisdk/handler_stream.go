package aisdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
)

// This file runs the agent and streams the run as the response (and, in
// the stored mode, to the chat's stream log).

type runPair struct {
	item agentloop.Item
	err  error
}

// stream runs the agent and writes the response. The calling goroutine is
// the only writer; the run is ranged over in a goroutine that hands its
// items over in batches (an itemPipe), so that keep-alive comments can be
// written while the run is idle, and a run that is ahead of its client
// costs one handoff per batch, not per item, and one flush per batch or
// per flushWindow, whichever is less often (flushPacer).
//
// Without a stored run (sr nil) the run lives and dies with the request: a
// client that goes away cancels it. With one, the run is detached from the
// request: it goes on without its client (bounded by MaxRunTime), sr saves
// it as it goes and logs its chunks, and sr's stop signal cancels it.
func (h *core) stream(w http.ResponseWriter, r *http.Request, req *ChatRequest, history agentloop.History, opts *agentloop.RunOptions, m *Mapper, sr *storedRun) {
	parent := r.Context()
	if sr != nil {
		parent = context.WithoutCancel(parent)
	}
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	defer h.runs.onShutdown(cancel)()
	if d := h.MaxRunTime; d >= 0 {
		if d == 0 {
			d = DefaultMaxRunTime
		}
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, d, fmt.Errorf("the run took longer than the limit of %v", d))
		defer stop()
	}
	if sr != nil {
		defer sr.watch(ctx, cancel)()
	}
	opts.ConversationID = req.ID
	m.ResumeFrom(history)

	items := newItemPipe()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer items.close()
		for item, err := range h.Agent.Stream(ctx, history, opts) {
			if !items.put(runPair{item, err}, stop) {
				return
			}
		}
	}()
	var stopOnce sync.Once
	abandon := func() {
		stopOnce.Do(func() { close(stop) })
		cancel(errors.New("aisdk: the response could not be written"))
		<-done
	}
	defer abandon()

	out := &output{sw: h.newWriter(w), client: true, sr: sr}
	var tick <-chan time.Time
	if ka := h.KeepAlive; ka >= 0 {
		if ka == 0 {
			ka = DefaultKeepAlive
		}
		t := time.NewTicker(ka)
		defer t.Stop()
		tick = t.C
	}
	var (
		chunks []Chunk
		batch  = make([]runPair, 0, pipeLimit)
		closed bool
		last   runPair
	)
	var pace flushPacer
	defer pace.stop()
	for {
		select {
		case <-items.ready:
		case <-pace.held:
			pace.held = nil
			if !out.flush() && sr == nil {
				return
			}
			pace.flushed()
			continue
		case <-tick:
			if !out.keepAlive() && sr == nil {
				return
			}
			continue
		}
		batch, closed = items.take(batch)
		for _, p := range batch {
			if sr != nil && !m.Done() {
				if err := sr.persist(p); err != nil {
					cancel(err)
					p = runPair{err: joinRunError(p.err, err)}
				}
			}
			if !m.Done() {
				last = p
			}
			if d, ok := p.item.(agentloop.TextDelta); ok && p.err == nil && out.continueText(m, d.Text) {
				continue // most of a stream: written without a Chunk
			}
			switch {
			case p.err != nil && !m.Done() && sr != nil && sr.stopped(ctx):
				h.logRunError(r, req, p.err, slog.LevelInfo)
				chunks = m.abort(chunks[:0], "stopped")
			case p.err != nil && !m.Done():
				level := slog.LevelError
				if (r.Context().Err() != nil && sr == nil) || errors.Is(context.Cause(ctx), ErrShutdown) {
					level = slog.LevelInfo // the client went away, or the server shuts down: the run was cancelled for it
				}
				h.logRunError(r, req, p.err, level)
				chunks = m.Map(chunks[:0], nil, p.err)
			default:
				chunks = m.Map(chunks[:0], p.item, p.err)
			}
			out.write(chunks)
		}
		clear(batch) // let the batch's items go
		if chunks = m.Flush(chunks[:0]); len(chunks) > 0 {
			out.write(chunks) // a sub-agent's text of this batch, as one chunk
		}
		if closed {
			if !m.Done() {
				err := errors.New("aisdk: the run ended without a final item")
				h.logRunError(r, req, err, slog.LevelError)
				out.write(m.Map(chunks[:0], nil, err))
				last = runPair{err: err}
			}
			out.flush()
			out.close()
			if sr == nil {
				return
			}
			if rest := sr.end(last); rest != nil {
				// The store failed: the client's response ends now, and
				// the run's end goes on, within what Shutdown waits for.
				if release, ok := h.runs.add(); ok {
					go func() {
						defer release()
						rest()
					}()
				} else {
					rest()
				}
			}
			return
		}
		if !out.client && sr == nil {
			return
		}
		if items.pending() || pace.hold(out.sw.buffered()) {
			continue
		}
		if !out.flush() && sr == nil {
			return
		}
		pace.flushed()
	}
}

// flushWindow is the longest a flush is held back so that it carries
// more events (flushPacer). Over 1,000 concurrent streams on loopback
// (BenchmarkHTTP_ConcurrentRuns) 2 ms cut the write system calls per
// stream from 9 to 6 and the server's CPU time by a tenth to a fifth on
// a loaded machine, for about 6 MB more peak memory; 5 and 10 ms cut no
// more.
const flushWindow = 2 * time.Millisecond

// flushHoldMax is the most a held flush gathers: net/http writes a
// response through a 4 KB buffer, so a flush of more costs a write per
// 4 KB anyway.
const flushHoldMax = 4 << 10

// flushPacer decides when a response is flushed. A flush that would come
// within flushWindow of the last one is held until the window ends, and
// what the run sends meanwhile goes out with it: a fast stream is flushed
// about once per window instead of once per batch of items, each flush a
// write system call or more (net/http's connection buffer is 4 KB). The
// first flush is never held, nor is one after a pause longer than the
// window (a model's next delta after it thought, say), nor the stream's
// end (the caller flushes it without asking).
type flushPacer struct {
	last  time.Time        // the last flush; zero before the first
	held  <-chan time.Time // receives when a held flush is due; nil when none is held
	timer *time.Timer
}

// hold reports whether the flush due now, of buffered bytes, is held:
// true when one is held already, or when it comes within the window of
// the last flush, which arms held; never once the bytes would fill
// net/http's connection buffer, since holding them longer spares no
// write.
func (p *flushPacer) hold(buffered int) bool {
	if p.held != nil {
		return true
	}
	wait := flushWindow - time.Since(p.last)
	if p.last.IsZero() || wait <= 0 || buffered >= flushHoldMax {
		return false
	}
	if p.timer == nil {
		p.timer = time.NewTimer(wait)
	} else {
		p.timer.Reset(wait)
	}
	p.held = p.timer.C
	return true
}

// flushed records a flush.
func (p *flushPacer) flushed() { p.last = time.Now() }

func (p *flushPacer) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

// newMapper returns the Mapper of a response whose message is messageID.
func (h *core) newMapper(messageID string) *Mapper {
	m := NewMapper(messageID)
	m.ErrorText = h.errorText
	return m
}

// newWriter returns the Writer of a streamed response, with the
// Handler's per-write deadline.
func (h *core) newWriter(w http.ResponseWriter) *Writer {
	d := h.WriteTimeout
	if d == 0 {
		d = DefaultWriteTimeout
	}
	return newTimedWriter(w, d)
}

// joinRunError returns the error a run ends with when saving it failed:
// the run's own error, if any, with the save's.
func joinRunError(runErr, saveErr error) error {
	if runErr == nil {
		return saveErr
	}
	return fmt.Errorf("%w (and saving the chat failed: %v)", runErr, saveErr)
}

// output writes a response's chunks to its client, while it is there, and
// to the stored run's log. Each chunk is encoded once, so the log holds
// the bytes the client got.
type output struct {
	sw     *Writer
	client bool // the client is still reading
	wrote  bool // something was written since the last keep-alive tick
	sr     *storedRun
	buf    bytes.Buffer // the chunk being sent
}

// write sends chunks to the client and queues them for the log.
func (o *output) write(chunks []Chunk) {
	for _, c := range chunks {
		o.buf.Reset()
		if err := appendChunk(&o.buf, c); err != nil {
			continue // a chunk the Mapper made always encodes
		}
		o.send()
	}
}

// continueText sends a text delta that continues m's open text part, as
// writing m.Map's chunks for it would, without a Chunk; it reports false,
// sending nothing, when the delta needs Map.
func (o *output) continueText(m *Mapper, delta string) bool {
	id, ok := m.continueText(delta)
	if ok {
		m.signText(delta, o.textDelta(id, delta))
	}
	return ok
}

// textDelta sends the text-delta chunk of the text part id, as write
// would, without a Chunk. It reports whether delta is known to be valid
// UTF-8 (appendJSONText).
func (o *output) textDelta(id, delta string) (valid bool) {
	o.wrote = true
	var data []byte // the chunk's JSON, encoded once
	if o.client {
		var err error
		if data, valid, err = o.sw.textDeltaEvent(id, delta); err != nil {
			o.client = false
		}
	}
	if o.sr != nil {
		if data == nil {
			o.buf.Reset()
			appendTextDelta(&o.buf, id, delta)
			data = o.buf.Bytes()
		}
		o.sr.log(data)
	}
	if o.client && o.sw.spill() != nil {
		o.client = false
	}
	return valid
}

// send sends the chunk in buf.
func (o *output) send() {
	if o.client && o.sw.writeData(o.buf.Bytes()) != nil {
		o.client = false
	}
	if o.sr != nil {
		o.sr.log(o.buf.Bytes())
	}
	o.wrote = true
}

// flush flushes what was sent to the client and to the log; it reports
// whether the client is still there.
func (o *output) flush() bool {
	if o.sr != nil {
		o.sr.flushLog()
	}
	if o.client && o.sw.Flush() != nil {
		o.client = false
	}
	return o.client
}

// keepAlive sends a keep-alive comment to an idle client; it reports
// whether the client is still there.
func (o *output) keepAlive() bool {
	if o.client && !o.wrote && (o.sw.KeepAlive() != nil || o.sw.Flush() != nil) {
		o.client = false
	}
	o.wrote = false
	return o.client
}

// close ends the client's stream with data: [DONE].
func (o *output) close() {
	if o.client {
		_ = o.sw.Close()
	}
}
