// Package backend holds what the store backends share: the in-process
// wake-ups and the follow and stop-wait loops built on them, and the
// encodings of histories, cursors and ids.
package backend

import "sync"

// Hub wakes the goroutines waiting on a key (a stream id) when it changes.
// The zero value is ready to use; it is safe for concurrent use.
type Hub struct {
	mu     sync.Mutex
	keys   map[string]*waiters
	closed bool
}

type waiters struct {
	ch   chan struct{}
	refs int
}

// Wait returns a channel that is closed at the next Notify of key (or when
// the hub closes), and a func that must be called once the caller stops
// waiting. Take the channel before reading the state it guards, so that a
// change made after the read is never missed.
func (h *Hub) Wait(key string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		c := make(chan struct{})
		close(c)
		return c, func() {}
	}
	if h.keys == nil {
		h.keys = make(map[string]*waiters)
	}
	w := h.keys[key]
	if w == nil {
		w = &waiters{ch: make(chan struct{})}
		h.keys[key] = w
	}
	w.refs++
	var once sync.Once
	return w.ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			w.refs--
			if w.refs == 0 && h.keys[key] == w {
				delete(h.keys, key)
			}
		})
	}
}

// Notify wakes every waiter of key.
func (h *Hub) Notify(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.keys[key]; w != nil {
		close(w.ch)
		delete(h.keys, key)
	}
}

// NotifyAll wakes every waiter of every key, who may have missed a change.
func (h *Hub) NotifyAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notifyAll()
}

func (h *Hub) notifyAll() {
	for key, w := range h.keys {
		close(w.ch)
		delete(h.keys, key)
	}
}

// Close wakes every waiter, and makes every later Wait return at once.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	h.notifyAll()
}

// Len returns the number of keys being waited on (for tests: nothing
// leaks).
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.keys)
}
