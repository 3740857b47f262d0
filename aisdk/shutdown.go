package aisdk

import (
	"context"
	"errors"
	"sync"
)

// This file ends the runs of a Handler or a ChatServer when its server
// shuts down: a ChatServer's outlive their requests, so http.Server.Shutdown alone would wait
// for them up to MaxRunTime.

// ErrShutdown is the cause of the runs that [Handler.Shutdown] and
// [ChatServer.Shutdown] cancel.
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

// isClosed reports whether Shutdown began.
func (s *runSet) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
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

// shutdown refuses new requests, cancels those in progress with
// ErrShutdown, and waits for them to end, or for ctx.
func (s *runSet) shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.initLocked()
		s.cancel(ErrShutdown)
	}
	s.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(ended)
	}()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
