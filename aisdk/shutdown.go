package aisdk

import (
	"context"
	"errors"
	"sync"
)

// This file ends the runs of a Handler or a ChatServer when its server
// shuts down: a ChatServer's outlive their requests, so http.Server.Shutdown alone would wait
// for them up to MaxRunTime. Drain, before it, lets the runs in progress
// finish while no new ones start.

// ErrShutdown is the cause of the runs that [Handler.Shutdown] and
// [ChatServer.Shutdown] cancel.
var ErrShutdown = errors.New("aisdk: the server is shutting down")

// runSet tracks a Handler's requests that run or follow a run, so that
// Shutdown can cancel and await them, and its runs in progress, so that
// Drain can await them. The zero value is ready.
type runSet struct {
	mu       sync.Mutex
	closed   bool            // Shutdown began
	draining bool            // Drain or Shutdown began: no run starts
	ctx      context.Context // cancelled with ErrShutdown by Shutdown; made on first use
	cancel   context.CancelCauseFunc
	wg       sync.WaitGroup
	active   int           // the runs in progress
	idle     chan struct{} // closed when active drops to 0; nil while it is 0
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

// addRun registers a chat request, which starts a run, both as a request
// (see add) and as a run in progress (see beginRun); it returns false once
// Drain or Shutdown began. The returned func, called when the request
// ends, must be called once.
func (s *runSet) addRun() (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.draining {
		return nil, false
	}
	s.wg.Add(1)
	s.beginLocked()
	return func() {
		s.endRun()
		s.wg.Done()
	}, true
}

// beginRun registers a run in progress that no request of this process
// carries (one that a Runner executes here), for Drain to wait for; it is
// never refused: the run executes already. endRun must be called once
// when it ends.
func (s *runSet) beginRun() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beginLocked()
}

func (s *runSet) beginLocked() {
	if s.active == 0 {
		s.idle = make(chan struct{})
	}
	s.active++
}

// endRun ends a run that addRun's or beginRun registered.
func (s *runSet) endRun() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active--; s.active == 0 {
		close(s.idle)
		s.idle = nil
	}
}

// drain refuses new runs and waits until no run is in progress, or for
// ctx.
func (s *runSet) drain(ctx context.Context) error {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	for {
		s.mu.Lock()
		idle := s.idle
		s.mu.Unlock()
		if idle == nil {
			return nil
		}
		select {
		case <-idle:
			// A run may have begun since (a Runner recovers one here):
			// look again.
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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
		s.closed, s.draining = true, true
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
