package aisdk

import (
	"context"
	"errors"
	"sync"
)

// This file ends a Handler's runs when its server shuts down: with a Store
// they outlive their requests, so http.Server.Shutdown alone would wait
// for them up to MaxRunTime.

// ErrShutdown is the cause of the runs that [Handler.Shutdown] cancels.
var ErrShutdown = errors.New("aisdk: the server is shutting down")

// runSet tracks a Handler's requests that run or follow a run, so that
// Shutdown can cancel and await them. The zero value is ready.
type runSet struct {
	mu     sync.Mutex
	closed bool
	ctx    context.Context // cancelled with ErrShutdown by Shutdown; made on first use
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

func (s *runSet) initLocked() {
	if s.ctx == nil {
		s.ctx, s.cancel = context.WithCancelCause(context.Background())
	}
}

// add registers a request; it returns false once Shutdown began. The
// returned func, called when the request ends, must be called once.
func (s *runSet) add() (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	s.wg.Add(1)
	return s.wg.Done, true
}

// onShutdown arranges for cancel to be called with ErrShutdown when
// Shutdown begins, until the returned func is called.
func (s *runSet) onShutdown(cancel context.CancelCauseFunc) (stop func() bool) {
	s.mu.Lock()
	s.initLocked()
	ctx := s.ctx
	s.mu.Unlock()
	return context.AfterFunc(ctx, func() { cancel(ErrShutdown) })
}

// Shutdown ends what the Handler serves, for a server that is shutting
// down: new chat and resume requests are refused with 503 Service
// Unavailable, the runs in progress are cancelled with [ErrShutdown] (a
// stored run saves its history first, with an interrupted result for each
// call still running, and ends its stream), and requests that follow a
// stream end. Shutdown returns once they all ended, or with ctx's error
// when ctx is done first. Call it before http.Server.Shutdown, which would
// otherwise wait for runs that outlive their clients (with a Store) up to
// MaxRunTime. It may be called more than once, and concurrently with
// ServeHTTP; the Handler does not serve runs again afterwards.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.runs.mu.Lock()
	if !h.runs.closed {
		h.runs.closed = true
		h.runs.initLocked()
		h.runs.cancel(ErrShutdown)
	}
	h.runs.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		h.runs.wg.Wait()
		close(ended)
	}()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
