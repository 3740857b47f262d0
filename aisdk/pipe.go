package aisdk

import "sync"

// This file hands a run's items from the goroutine that ranges over the
// run to the goroutine that writes the response, a batch at a time.

// pipeLimit is how many items the run may get ahead of the response
// before it waits. 256 made one stream 7% faster in
// BenchmarkHandler_TextRun, but 1,000 concurrent streams over HTTP no
// faster and their server's peak memory 10 MB higher.
const pipeLimit = 32

// itemPipe is a bounded queue of a run's items between one putter (the
// goroutine ranging over the run) and one taker (the response's writer).
// The taker takes every item queued at once, so that a run that is ahead
// of its response costs one handoff per batch, not per item, and the
// response is flushed once per batch.
type itemPipe struct {
	mu     sync.Mutex
	queued []runPair
	closed bool
	ready  chan struct{} // holds a token when queued went non-empty or the pipe closed
	room   chan struct{} // holds a token when a full queue was taken
}

func newItemPipe() *itemPipe {
	return &itemPipe{
		queued: make([]runPair, 0, pipeLimit), // never grows: put waits at pipeLimit
		ready:  make(chan struct{}, 1),
		room:   make(chan struct{}, 1),
	}
}

// put queues p, waiting while the queue is full; it reports false, with p
// not queued, when stop is closed first.
func (q *itemPipe) put(p runPair, stop <-chan struct{}) bool {
	q.mu.Lock()
	for len(q.queued) >= pipeLimit {
		q.mu.Unlock()
		select {
		case <-q.room:
		case <-stop:
			return false
		}
		q.mu.Lock()
	}
	q.queued = append(q.queued, p)
	first := len(q.queued) == 1
	q.mu.Unlock()
	if first {
		q.signal(q.ready)
	}
	return true
}

// close tells the taker that no more items come.
func (q *itemPipe) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal(q.ready)
}

// take returns every queued item, giving the pipe dst[:0] to queue the
// next ones in, and whether the pipe is closed: then the batch holds the
// last items. Call it once ready has a token.
func (q *itemPipe) take(dst []runPair) (batch []runPair, closed bool) {
	q.mu.Lock()
	full := len(q.queued) >= pipeLimit
	batch, q.queued = q.queued, dst[:0]
	closed = q.closed
	q.mu.Unlock()
	if full {
		q.signal(q.room)
	}
	return batch, closed
}

// pending reports whether items are queued.
func (q *itemPipe) pending() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queued) > 0 || q.closed
}

func (q *itemPipe) signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
