package aisdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// This file runs the stored mode's runs on a durable engine
// (ChatServer.Runner): the run, not the request, writes the chat and its
// stream log, so that a run that an engine recovers in another process
// goes on writing them; the request follows the stream log, as a resume
// request does.

// A Runner runs a [ChatServer]'s runs on a durable-execution engine, so
// that a run outlives the process that started it: durable/dbosrun's
// Runner is one (DBOS, on the SQLite or PostgreSQL database of the chats).
// The engine must hand every item of every run it executes in this
// process, live or recovered, to [ChatServer.RunItem], in order, from one
// goroutine per run (dbosrun: Options.OnItem).
type Runner interface {
	// Start starts the run runID (the chat's id and its stream's id,
	// "<chatID>/<streamID>") of the conversation conversationID from
	// history h, with opts (client tools; a Runner refuses options it
	// cannot record with the run), and returns once the run is recorded:
	// the run goes on without ctx, and its items reach RunItem.
	Start(ctx context.Context, runID, conversationID string, h agentloop.History, opts *agentloop.RunOptions) error
	// Stop cancels the run runID with cause if it executes in this
	// process, so that it ends as a cancelled run does; it reports whether
	// it did.
	Stop(runID string, cause error) bool
}

// runLeaseDoc names the chat document in which a ChatServer with a Runner
// keeps the stream lease of the chat's run, so that the process that
// recovers the run can take its stream over.
const runLeaseDoc = "aisdk.stream"

// runLease is runLeaseDoc's content.
type runLease struct {
	Stream    string `json:"stream"`
	Token     string `json:"token"`
	MessageID string `json:"messageId"`
}

// runID returns the id of the run of the stream that lease l holds.
func runID(l store.Lease) string { return l.ChatID + "/" + l.StreamID }

// sinks are the stored runs that a ChatServer's Runner executes in this
// process, by run id; a nil entry is a recovered run whose stream could not
// be taken over, whose items are dropped.
type sinks struct {
	mu sync.Mutex
	m  map[string]*runSink
}

func (s *sinks) get(id string) (*runSink, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[id]
	return r, ok
}

func (s *sinks) set(id string, r *runSink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]*runSink)
	}
	s.m[id] = r
}

func (s *sinks) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// serveDurable starts the run of a chat POST on the Runner and streams it
// to the client by following the stream log.
func (h *ChatServer) serveDurable(w http.ResponseWriter, r *http.Request, req *ChatRequest, chat store.Chat, lease store.Lease, history agentloop.History, opts *agentloop.RunOptions, messageID string) {
	ctx := context.WithoutCancel(r.Context())
	id := runID(lease)
	if err := h.recordLease(ctx, lease, messageID); err != nil {
		h.endSetup(r, lease)
		h.internalError(w, r, err)
		return
	}
	sr := newStoredRun(ctx, h, chat, lease, history, messageID)
	restated := len(sr.restate) // logged after the start, but the client has them
	s := h.newSink(ctx, id, sr, messageID)
	h.sinks.set(id, s)
	opts.ConversationID = req.ID
	if err := h.Runner.Start(ctx, id, req.ID, history, opts); err != nil {
		h.RunItem(id, nil, fmt.Errorf("aisdk: starting the run of chat %q: %w", req.ID, err))
	}
	h.followStream(w, r, chat.ID, lease.StreamID, restated)
}

// recordLease writes the chat's run-lease document.
func (h *ChatServer) recordLease(ctx context.Context, l store.Lease, messageID string) error {
	docs, ok := h.Store.(store.Docs)
	if !ok {
		return errors.New("aisdk: a ChatServer with a Runner needs a Store that keeps documents (store.Docs)")
	}
	data, err := json.Marshal(runLease{Stream: l.StreamID, Token: l.Token, MessageID: messageID})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	if _, err := store.UpdateDoc(ctx, docs, l.ChatID, runLeaseDoc, func(d *store.Doc) error {
		d.Data = data
		return nil
	}); err != nil {
		return fmt.Errorf("aisdk: recording the stream lease of chat %q: %w", l.ChatID, err)
	}
	return nil
}

// RunItem takes an item (or the final error) of the run runID that the
// Runner executes in this process: it saves the chat as the run goes and
// writes the chat's stream log, as a run in process does. The run of a
// process that died, which the Runner recovers here, takes over its
// stream, if its lease has not run out: the steps the stream log holds
// already are not logged again, and a step that was cut off is reset
// ("reset-step") before it streams again. If the lease ran out and nobody
// took the chat since, the run goes on in a new stream of the chat, logged
// from its start. A run whose chat went on without it is stopped. RunItem is the Runner's callback (dbosrun:
// Options.OnItem = chat.RunItem); it is safe for concurrent use by
// different runs, and must be called in order for each run.
func (h *ChatServer) RunItem(runID string, item agentloop.Item, err error) {
	if h.init() != nil || h.Runner == nil {
		return
	}
	s, ok := h.sinks.get(runID)
	if !ok {
		s = h.recoverRun(runID)
		h.sinks.set(runID, s)
	}
	if s == nil {
		return
	}
	if s.put(runPair{item, err}) {
		h.sinks.remove(runID)
		s.ended() // the run ended here, or was handed over
	}
}

// Abandoned reports whether the run runID was abandoned: the lease of its
// stream ran out (its process died, and did not start again in time)
// while its chat still waits for it (no request took the chat since). An
// engine may then resume the run in this process; RunItem goes on with it
// in a new stream of the chat. Errors are the store's.
func (h *ChatServer) Abandoned(ctx context.Context, runID string) (bool, error) {
	i := strings.LastIndexByte(runID, '/')
	if i < 0 {
		return false, nil
	}
	chatID, streamID := runID[:i], runID[i+1:]
	st, err := h.Store.GetStream(ctx, streamID)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
		return false, nil
	}
	if err != nil || st.State != store.StreamInterrupted || st.ChatID != chatID {
		return false, err
	}
	docs, ok := h.Store.(store.Docs)
	if !ok {
		return false, nil
	}
	d, err := docs.GetDoc(ctx, chatID, runLeaseDoc)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var rec runLease
	return json.Unmarshal(d.Data, &rec) == nil && rec.Stream == streamID, nil
}

// recoverRun rebuilds the sink of a run that another process (or an
// earlier life of this one) started, or returns nil and stops the run when
// its stream cannot be taken over.
func (h *ChatServer) recoverRun(id string) *runSink {
	s, err := h.takeOver(id)
	if err != nil {
		h.logger().LogAttrs(context.Background(), slog.LevelWarn, "aisdk: a recovered run cannot take its stream over; it is stopped",
			slog.String("run", id), slog.Any("error", err))
		h.Runner.Stop(id, err)
		return nil
	}
	h.logger().LogAttrs(context.Background(), slog.LevelInfo, "aisdk: a recovered run takes its stream over", slog.String("run", id))
	return s
}

func (h *ChatServer) takeOver(id string) (*runSink, error) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	i := strings.LastIndexByte(id, '/')
	if i < 0 {
		return nil, fmt.Errorf("aisdk: run id %q is not <chat id>/<stream id>", id)
	}
	chatID, streamID := id[:i], id[i+1:]
	docs, ok := h.Store.(store.Docs)
	if !ok {
		return nil, errors.New("aisdk: the Store keeps no documents")
	}
	d, err := docs.GetDoc(ctx, chatID, runLeaseDoc)
	if err != nil {
		return nil, fmt.Errorf("aisdk: reading the stream lease of chat %q: %w", chatID, err)
	}
	var rec runLease
	if err := json.Unmarshal(d.Data, &rec); err != nil || rec.Stream != streamID {
		return nil, fmt.Errorf("aisdk: chat %q holds no lease of stream %q (a newer run took the chat)", chatID, streamID)
	}
	lease, err := h.Store.RenewLease(ctx, store.Lease{ChatID: chatID, StreamID: streamID, Token: rec.Token}, h.streamLease())
	if errors.Is(err, store.ErrLeaseLost) {
		return h.takeOverAfresh(ctx, id, streamID, rec)
	}
	if err != nil {
		return nil, fmt.Errorf("aisdk: renewing the stream lease of chat %q: %w", chatID, err)
	}
	st, err := h.Store.GetStream(ctx, streamID)
	if err != nil {
		return nil, fmt.Errorf("aisdk: reading stream %q: %w", streamID, err)
	}
	var starts, finishes int
	if st.Len > 0 {
		for c, err := range h.Store.ReadStream(ctx, streamID, 0) {
			if err != nil {
				return nil, fmt.Errorf("aisdk: reading stream %q: %w", streamID, err)
			}
			switch chunkType(c.Data) {
			case "start-step":
				starts++
			case "finish-step":
				finishes++
			}
			if c.Seq >= st.Len-1 {
				break
			}
		}
	}
	chat, err := h.Store.GetChat(ctx, chatID)
	if err != nil {
		return nil, fmt.Errorf("aisdk: reading chat %q: %w", chatID, err)
	}
	sr := newStoredRun(context.Background(), h, *chat, lease, chat.History, rec.MessageID)
	sr.started = st.Len > 0 // the start and the restated parts are logged
	s := h.newSink(context.Background(), id, sr, rec.MessageID)
	s.skipStart, s.skipSteps, s.resetStep = st.Len > 0, finishes, starts > finishes
	return s, nil
}

// takeOverAfresh takes over the run id whose stream's lease ran out while
// nobody took the chat since (the stream reads as interrupted, and the
// chat's lease document still names it): the run goes on in a new stream
// of the chat, logged from its start (the replayed steps too, since the
// new log has none of them).
func (h *ChatServer) takeOverAfresh(ctx context.Context, id, streamID string, rec runLease) (*runSink, error) {
	st, err := h.Store.GetStream(ctx, streamID)
	if err != nil {
		return nil, fmt.Errorf("aisdk: reading stream %q: %w", streamID, err)
	}
	if st.State != store.StreamInterrupted {
		return nil, fmt.Errorf("aisdk: stream %q of chat %q is %s: its run may not go on", streamID, st.ChatID, st.State)
	}
	lease, err := h.Store.StartStream(ctx, st.ChatID, h.streamLease())
	if err != nil {
		return nil, fmt.Errorf("aisdk: starting a new stream of chat %q for its run: %w", st.ChatID, err)
	}
	if err := h.recordLease(ctx, lease, rec.MessageID); err != nil {
		h.endStream(ctx, lease, store.StreamFailed)
		return nil, err
	}
	chat, err := h.Store.GetChat(ctx, st.ChatID)
	if err != nil {
		h.endStream(ctx, lease, store.StreamFailed)
		return nil, fmt.Errorf("aisdk: reading chat %q: %w", st.ChatID, err)
	}
	sr := newStoredRun(context.Background(), h, *chat, lease, chat.History, rec.MessageID)
	sr.restate = nil // the saved parts of the message are this run's, which it replays
	return h.newSink(context.Background(), id, sr, rec.MessageID), nil
}

// chunkType returns the type of a logged chunk.
func chunkType(data []byte) string {
	var c struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(data, &c)
	return c.Type
}

// sinkFlush is how soon a runSink writes the deltas it gathered to the
// stream log; other chunks are written at once.
const sinkFlush = 50 * time.Millisecond

// runSink is a stored run that a Runner executes: the items come to
// RunItem, and go through the Mapper to the stream log (no client: the
// requests follow the log).
type runSink struct {
	h     *ChatServer
	id    string
	sr    *storedRun
	m     *Mapper
	out   output
	last  runPair
	stops []func() // what put stops when the run ends
	ended func()   // ends the run for Drain; it may be called more than once

	mu     sync.Mutex // put and the flusher
	chunks []Chunk
	keep   []Chunk

	// A recovered run replays the steps that the log holds already.
	skipStart bool // the log has the start chunk
	skipSteps int  // the finish-steps still to skip
	resetStep bool // the log ends in a cut-off step: the next start-step is a reset-step
}

func (h *ChatServer) newSink(ctx context.Context, id string, sr *storedRun, messageID string) *runSink {
	s := &runSink{h: h, id: id, sr: sr, m: h.newMapper(messageID)}
	// The run is in progress for Drain until its last item, or until it
	// lost its lease: then it is stopped and writes nothing more here, and
	// its end may never come here (the engine moved it to another process).
	h.runs.beginRun()
	s.ended = sync.OnceFunc(h.runs.endRun)
	s.out = output{sr: sr}
	stop := func(cause error) { h.Runner.Stop(id, cause) }
	s.stops = append(s.stops, sr.watch(ctx, stop))
	if d := h.MaxRunTime; d >= 0 {
		if d == 0 {
			d = DefaultMaxRunTime
		}
		t := time.AfterFunc(d, func() { stop(fmt.Errorf("the run took longer than the limit of %v", d)) })
		s.stops = append(s.stops, func() { t.Stop() })
	}
	// The flusher's stop is called with s.mu held: the flusher may be
	// waiting for it, and flushes nothing once stops is nil.
	done := make(chan struct{})
	s.stops = append(s.stops, func() { close(done) })
	go func() { // started last: it reads s.stops
		t := time.NewTicker(sinkFlush)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-sr.lostCh:
				s.ended()
				return // another process runs the run now (or nobody)
			case <-t.C:
			}
			s.mu.Lock()
			if s.stops != nil {
				s.sr.flushLog()
			}
			s.mu.Unlock()
		}
	}()
	return s
}

// put takes one pair of the run; it reports whether the run ended here.
func (s *runSink) put(p runPair) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m.Done() {
		return true
	}
	if p.err != nil && errors.Is(p.err, agentloop.ErrCancelled) && !s.sr.stopped(nil) && !s.sr.lost.Load() && s.h.runs.isClosed() {
		// The engine shuts down with the server: the run is not over, the
		// engine resumes it. What it logged stays; nothing else is
		// written. With ReleaseOnShutdown its lease is released (it runs
		// out now), so that a live replica may take the run over at once
		// (Abandoned) rather than once the lease ran out.
		s.sr.flushLog()
		s.end()
		if s.h.ReleaseOnShutdown {
			s.h.releaseLease(s.sr.ctx, s.sr.lease)
		}
		return true
	}
	s.sr.dry = s.skipStart || s.skipSteps > 0
	if err := s.sr.persist(p); err != nil {
		s.h.Runner.Stop(s.id, err)
		p = runPair{err: joinRunError(p.err, err)}
	}
	s.last = p
	switch {
	case p.err != nil && s.sr.stopped(nil):
		s.h.logger().LogAttrs(s.sr.ctx, slog.LevelInfo, "aisdk: a run was stopped", slog.String("run", s.id), slog.Any("error", p.err))
		s.chunks = s.m.abort(s.chunks[:0], "stopped")
	case p.err != nil:
		s.h.logger().LogAttrs(s.sr.ctx, slog.LevelError, "aisdk: a run failed", slog.String("run", s.id), slog.Any("error", p.err))
		s.chunks = s.m.Map(s.chunks[:0], nil, p.err)
	default:
		s.chunks = s.m.Map(s.chunks[:0], p.item, nil)
	}
	s.keep = s.keep[:0]
	for _, c := range s.chunks {
		switch c.(type) {
		case StartChunk:
			if s.skipStart {
				s.skipStart = false
				continue
			}
		case FinishStepChunk:
			if s.skipSteps > 0 {
				s.skipSteps--
				continue
			}
		case StartStepChunk:
			if s.skipSteps == 0 && s.resetStep {
				s.resetStep = false
				c = ResetStepChunk{}
			}
		}
		if s.skipSteps > 0 {
			continue
		}
		s.keep = append(s.keep, c)
	}
	s.out.write(s.keep)
	clear(s.chunks)
	if !s.m.Done() {
		switch p.item.(type) {
		case agentloop.TextDelta, agentloop.ReasoningDelta, agentloop.ToolCallDelta:
		default:
			s.sr.flushLog()
		}
		return false
	}
	s.sr.flushLog()
	s.end()
	if rest := s.sr.end(s.last); rest != nil {
		go rest()
	}
	return true
}

// end stops what the sink runs beside the run.
func (s *runSink) end() {
	for _, stop := range s.stops {
		stop()
	}
	s.stops = nil
}

// releaseLease makes lease l run out now, for a run that this process
// hands over: the stream stays active in the store until its lease ran
// out, and reads as interrupted from then on. A failure leaves the lease
// to run out by itself.
func (h *ChatServer) releaseLease(ctx context.Context, l store.Lease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if _, err := h.Store.RenewLease(ctx, l, time.Microsecond); err != nil {
		h.logger().LogAttrs(ctx, slog.LevelWarn, "aisdk: releasing the stream lease of a run handed over failed; it runs out by itself",
			slog.String("chat", l.ChatID), slog.Any("error", err))
	}
}
