package aisdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// This file is a run of the stored mode: it saves the chat as the run
// goes, logs the response's chunks to the chat's stream log, renews the
// stream lease, and stops the run when asked to from any replica.

// InterruptedResult is the content of the error result that a save made
// during a run gives each tool call that has no result yet, so that the
// stored history is consistent at every moment: if the server dies there,
// the next request continues from a history in which those calls were
// interrupted, and the model sees that they were. The run's next save
// replaces it with the call's real result.
const InterruptedResult = "interrupted: the server stopped before this tool call finished"

// errStopped cancels a run whose chat was asked to stop (POST
// …/{id}/stop, or a newer request for the chat).
var errStopped = agentloop.Cancel("stopped")

// logBatch is how many chunks are gathered before they are appended to the
// stream log even while the run has more ready.
const logBatch = 64

type storedRun struct {
	h         *ChatServer
	ctx       context.Context // for store calls: the request's values, never cancelled
	chat      store.Chat      // as last written
	lease     store.Lease
	messageID string
	restate   []Chunk // the continued message's parts, restated in the log after its start

	base    agentloop.History               // whose last assistant message's calls are being answered
	results map[string]agentloop.ToolResult // results of those calls so far

	queued  []byte   // the encoded chunks not yet appended to the log, one after the other
	ends    []int    // where each of them ends in queued
	chunks  [][]byte // the slices of queued, for the next AppendChunks
	started bool     // the start chunk went to the log

	cancel context.CancelCauseFunc
	stop   atomic.Bool   // the run was asked to stop
	lost   atomic.Bool   // the lease is lost: nothing more is written
	lostCh chan struct{} // closed when lost is set
	logErr error         // the log could not be written
	// unsaved is the history of a save that failed (the database was
	// down): end saves it again before it ends the stream.
	unsaved agentloop.History
	// dry is set while a recovered run replays what the chat has already:
	// persist follows the items without saving.
	dry bool
}

func newStoredRun(ctx context.Context, h *ChatServer, chat store.Chat, lease store.Lease, history agentloop.History, messageID string) *storedRun {
	sr := &storedRun{
		h: h, ctx: context.WithoutCancel(ctx), chat: chat, lease: lease, messageID: messageID,
		base: history, results: map[string]agentloop.ToolResult{}, lostCh: make(chan struct{}),
	}
	msgs := FromHistory(history)
	if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" && msgs[n-1].ID == messageID {
		sr.restate = restateParts(msgs[n-1].Parts)
	}
	return sr
}

// watch renews the lease and waits for a stop request until the returned
// func is called; a stop, or the loss of the lease, cancels the run.
func (s *storedRun) watch(ctx context.Context, cancel context.CancelCauseFunc) (unwatch func()) {
	s.cancel = cancel
	wctx, wcancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.renew(wctx)
	}()
	go func() {
		defer wg.Done()
		err := s.h.Store.WaitStop(wctx, s.lease)
		switch {
		case err == nil:
			s.stop.Store(true)
			cancel(errStopped)
		case errors.Is(err, store.ErrLeaseLost), errors.Is(err, store.ErrClosed):
			// A closed store comes back no more: the run writes nothing
			// more, as when its lease is lost.
			s.lose(err)
		}
	}()
	return func() {
		wcancel()
		wg.Wait()
	}
}

// renew renews the lease every third of its length until ctx is done.
func (s *storedRun) renew(ctx context.Context) {
	ttl := s.h.streamLease()
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.lostCh:
			return
		case <-t.C:
		}
		_, err := s.h.Store.RenewLease(ctx, s.lease, ttl)
		switch {
		case errors.Is(err, store.ErrLeaseLost), errors.Is(err, store.ErrClosed):
			s.lose(err)
			return
		case err != nil && ctx.Err() == nil:
			// Try again at the next tick, within the lease.
			s.h.logger().LogAttrs(s.ctx, slog.LevelWarn, "aisdk: renewing a stream lease failed",
				slog.String("chat", s.chat.ID), slog.Any("error", err))
		}
	}
}

// lose records that the lease is lost and cancels the run: another replica
// may now run the chat, so this one writes nothing more.
func (s *storedRun) lose(err error) {
	if s.lost.Swap(true) {
		return
	}
	close(s.lostCh)
	s.cancel(fmt.Errorf("aisdk: the run of chat %q lost its stream lease (its chat was deleted, or taken over after the lease ran out): %w", s.chat.ID, err))
}

// stopped reports whether the run was cancelled because it was asked to
// stop.
func (s *storedRun) stopped(context.Context) bool { return s.stop.Load() }

// persist saves what an item of the run adds to the chat, before the item
// is shown to anyone: the history at every turn end and with every tool
// result (with InterruptedResult for the calls still running), and the
// history of the run's end (its paused state, its answer, or the consistent
// history of its error).
func (s *storedRun) persist(p runPair) error {
	if s.lost.Load() {
		return nil
	}
	var h agentloop.History
	switch it := p.item.(type) {
	case agentloop.TurnEnd:
		if it.Err != nil {
			return nil // the run's error, with its history, follows
		}
		s.base, s.results = s.withIDs(it.History.Clone()), map[string]agentloop.ToolResult{}
		h = s.consistent()
	case agentloop.ToolResultReady:
		s.results[it.Result.CallID] = it.Result
		h = s.consistent()
	case agentloop.Pending:
		h = s.withIDs(it.History.Clone())
	case agentloop.Final:
		h = s.withIDs(it.History.Clone())
	default:
		var ok bool
		if p.err == nil {
			return nil
		}
		if h, ok = agentloop.HistoryOf(p.err); !ok {
			return nil
		}
		h = s.withIDs(h.Clone())
	}
	if s.dry {
		return nil
	}
	err := s.save(s.ctx, h)
	if err != nil && !errors.Is(err, store.ErrConflict) {
		s.unsaved = h
	}
	if _, final := p.item.(agentloop.Final); final && err == nil && p.err == nil {
		if c := s.nameChat(h); c != nil {
			s.chat = *c
		}
	}
	return err
}

// withIDs gives the run's assistant messages the response's message id.
func (s *storedRun) withIDs(h agentloop.History) agentloop.History {
	for i := range h {
		if h[i].Role == agentloop.RoleAssistant && h[i].ID == "" {
			h[i].ID = s.messageID
		}
	}
	return h
}

// consistent returns the base history with a result for every call of its
// last assistant message: the result so far, or InterruptedResult.
func (s *storedRun) consistent() agentloop.History {
	if n := len(s.base); n == 0 || (s.base[n-1].Role != agentloop.RoleAssistant && s.base[n-1].Role != agentloop.RoleTool) {
		return s.base
	}
	calls := s.base.Unanswered()
	if len(calls) == 0 {
		return s.base
	}
	rs := make([]agentloop.ToolResult, 0, len(calls))
	for _, c := range calls {
		r, ok := s.results[c.ID]
		if !ok {
			r = agentloop.ToolResult{CallID: c.ID, Name: c.Name, Content: InterruptedResult, IsError: true}
		}
		rs = append(rs, r)
	}
	h, err := s.base.AppendResults(rs...)
	if err != nil {
		return s.base // cannot happen: every result answers an unanswered call
	}
	return h
}

// save writes h as the chat's history, with the version last written. A
// conflict with a writer that left the history alone (a new title) is
// retried; one that changed the history means another run owns the chat,
// and fails the run.
func (s *storedRun) save(ctx context.Context, h agentloop.History) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	c := s.chat
	c.History = h
	for range maxSetupWrites {
		err := s.h.Store.PutChat(ctx, &c)
		if err == nil {
			s.chat = c
			return nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("aisdk: saving chat %q: %w", c.ID, err)
		}
		cur, gerr := s.h.Store.GetChat(ctx, c.ID)
		if gerr != nil {
			return fmt.Errorf("aisdk: saving chat %q: %w", c.ID, gerr)
		}
		if sameHistory(cur.History, h) {
			s.chat = *cur // an earlier try was written, though its answer was lost
			return nil
		}
		if !sameHistory(cur.History, s.chat.History) {
			return fmt.Errorf("aisdk: saving chat %q: another writer changed its history during the run: %w", c.ID, err)
		}
		c.Version, c.Owner, c.Title = cur.Version, cur.Owner, cur.Title
	}
	return fmt.Errorf("aisdk: saving chat %q: it keeps changing", c.ID)
}

func sameHistory(a, b agentloop.History) bool {
	ja, err1 := a.MarshalJSON()
	jb, err2 := b.MarshalJSON()
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// log queues an encoded chunk of the response for the stream log (data
// is copied). The continued message's earlier parts follow its start
// chunk, since a client that resumes the stream rebuilds the message from
// the start chunk on.
func (s *storedRun) log(data []byte) {
	s.queue(data)
	if !s.started {
		s.started = true
		var buf bytes.Buffer
		for _, c := range s.restate {
			buf.Reset()
			if appendChunk(&buf, c) == nil {
				s.queue(buf.Bytes())
			}
		}
	}
	if len(s.ends) >= logBatch {
		s.flushLog()
	}
}

// queue copies a chunk into the queue of the next log write.
func (s *storedRun) queue(data []byte) {
	s.queued = append(s.queued, data...)
	s.ends = append(s.ends, len(s.queued))
}

// flushLog appends the queued chunks to the stream log in one write. A
// failure cancels the run: its stream could not be resumed.
func (s *storedRun) flushLog() {
	if len(s.ends) == 0 || s.lost.Load() || s.logErr != nil {
		s.queued, s.ends = s.queued[:0], s.ends[:0]
		return
	}
	s.chunks = s.chunks[:0]
	start := 0
	for _, end := range s.ends {
		s.chunks = append(s.chunks, s.queued[start:end:end])
		start = end
	}
	ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
	defer cancel()
	_, err := s.h.Store.AppendChunks(ctx, s.lease, s.chunks...) // which keeps no slice
	s.queued, s.ends = s.queued[:0], s.ends[:0]
	clear(s.chunks)
	switch {
	case errors.Is(err, store.ErrLeaseLost):
		s.lose(err)
	case err != nil:
		s.logErr = err
		s.cancel(fmt.Errorf("aisdk: writing the stream log of chat %q: %w", s.chat.ID, err))
	}
}

// end ends the stream in the state of the run's last pair, with one try
// of each store write. When the store fails (a database outage) it returns
// the rest, which tries again with backoff, for the caller to run once the
// client's response is complete: the client need not wait for the
// database. A history whose save failed is saved first, so that what the
// client saw is kept once the database is back.
func (s *storedRun) end(last runPair) (rest func()) {
	s.flushLog()
	if s.lost.Load() {
		return nil
	}
	state := store.StreamDone
	switch {
	case last.err == nil:
	case errors.Is(last.err, agentloop.ErrCancelled):
		state = store.StreamCancelled
	default:
		state = store.StreamFailed
	}
	if s.unsaved != nil && s.save(s.ctx, s.unsaved) == nil {
		s.unsaved = nil
	}
	if s.unsaved == nil {
		ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
		s.h.recordRunEnd(ctx, s.chat.ID, state)
		err := s.h.Store.EndStream(ctx, s.lease, state)
		cancel()
		if err == nil || errors.Is(err, store.ErrLeaseLost) {
			return nil
		}
	}
	return func() {
		if s.unsaved != nil {
			err := s.h.retry(s.ctx, s.chat.ID, "saving the chat", func(ctx context.Context) error { return s.save(ctx, s.unsaved) },
				func(err error) bool { return errors.Is(err, store.ErrConflict) })
			if err != nil {
				s.h.logger().LogAttrs(s.ctx, slog.LevelError, "aisdk: saving a failed run's chat failed; it keeps its last saved history",
					slog.String("chat", s.chat.ID), slog.Any("error", err))
			}
		}
		s.h.recordRunEnd(s.ctx, s.chat.ID, state)
		s.h.endStream(s.ctx, s.lease, state)
	}
}

// Backoff of endStream's tries.
const (
	endRetryFirst = 50 * time.Millisecond
	endRetryMax   = 2 * time.Second
)

// endStream ends the stream of lease l in state. A store that fails (a
// database outage) is tried again (see retry), since until the end is
// written the chat stays locked for every other request, up to the
// lease's expiry; a lost lease, or ctx done, ends the tries.
func (h *ChatServer) endStream(ctx context.Context, l store.Lease, state store.StreamState) {
	err := h.retry(ctx, l.ChatID, "ending a stream", func(ctx context.Context) error { return h.Store.EndStream(ctx, l, state) },
		func(err error) bool { return errors.Is(err, store.ErrLeaseLost) })
	if err != nil && !errors.Is(err, store.ErrLeaseLost) {
		h.logger().LogAttrs(ctx, slog.LevelError, "aisdk: ending a stream failed; the chat is free once its lease runs out",
			slog.String("chat", l.ChatID), slog.Any("error", err))
	}
}

// retry calls try until it succeeds or fails with an error that final
// accepts, trying again after a failure (a database outage) with backoff,
// endRetryFirst doubling to endRetryMax, for up to writeTimeout or until
// ctx is done. Each failure is logged (Warn) as what. It returns try's
// last error.
func (h *ChatServer) retry(ctx context.Context, chatID, what string, try func(context.Context) error, final func(error) bool) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	wait := endRetryFirst
	for {
		err := try(ctx)
		if err == nil || final(err) || ctx.Err() != nil {
			return err
		}
		h.logger().LogAttrs(ctx, slog.LevelWarn, "aisdk: "+what+" failed; trying again",
			slog.String("chat", chatID), slog.Duration("in", wait), slog.Any("error", err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		wait = min(2*wait, endRetryMax)
	}
}
