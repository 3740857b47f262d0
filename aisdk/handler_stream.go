package aisdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
)

// This file runs the agent and streams the run as the response.

type runPair struct {
	item agentloop.Item
	err  error
}

// stream runs the agent and writes the response. The calling goroutine is
// the only writer; the run is ranged over in a goroutine that hands its
// items over a channel, so that keep-alive comments can be written while
// the run is idle.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, req *ChatRequest, history agentloop.History, opts []agentloop.Option, messageID string, release func()) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	if d := h.MaxRunTime; d >= 0 {
		if d == 0 {
			d = DefaultMaxRunTime
		}
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, d, fmt.Errorf("the run took longer than the limit of %v", d))
		defer stop()
	}
	opts = append(opts, agentloop.WithConversationID(req.ID))

	items := make(chan runPair, 32)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(items)
		for item, err := range h.Agent.Stream(ctx, history, opts...) {
			select {
			case items <- runPair{item, err}:
			case <-stop:
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

	sw := NewWriter(w)
	m := NewMapper(messageID)
	m.ErrorText = h.errorText
	if h.signer != nil {
		m.signWith(h.signer, history.Unanswered())
	}
	var tick <-chan time.Time
	if ka := h.KeepAlive; ka >= 0 {
		if ka == 0 {
			ka = DefaultKeepAlive
		}
		t := time.NewTicker(ka)
		defer t.Stop()
		tick = t.C
	}
	var chunks []Chunk
	wrote := true
	write := func() bool {
		for _, c := range chunks {
			if sw.WriteChunk(c) != nil {
				return false
			}
		}
		chunks = chunks[:0]
		wrote = true
		if len(items) == 0 {
			return sw.Flush() == nil
		}
		return true
	}
	for {
		select {
		case p, ok := <-items:
			if !ok {
				if !m.Done() {
					err := errors.New("aisdk: the run ended without a final item")
					h.logRunError(r, req, err)
					chunks = m.Map(chunks, nil, err)
				}
				if write() {
					_ = sw.Close()
				}
				return
			}
			if h.Store != nil && !m.Done() {
				if err := h.save(r, req, p, messageID); err != nil {
					p = runPair{err: err}
				}
				if isTerminal(p) {
					release()
				}
			}
			if p.err != nil && !m.Done() {
				h.logRunError(r, req, p.err)
			}
			chunks = m.Map(chunks, p.item, p.err)
			if !write() {
				return
			}
		case <-tick:
			if !wrote && (sw.KeepAlive() != nil || sw.Flush() != nil) {
				return
			}
			wrote = false
		}
	}
}

func isTerminal(p runPair) bool {
	if p.err != nil {
		return true
	}
	switch p.item.(type) {
	case agentloop.Final, agentloop.Pending:
		return true
	}
	return false
}
