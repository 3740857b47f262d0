package backend

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/agentloop/agentloop/store"
)

// ReadBatch is the most chunks a follower reads at once.
const ReadBatch = 256

// minSleep bounds how often a waiter re-reads when the clocks disagree
// about a deadline that has passed.
const minSleep = 10 * time.Millisecond

// Waiter runs the loops that wait for a stream to change: it wakes on the
// hub's notifications for the stream, every Poll (if not 0: for changes
// made by other processes that the hub cannot see), and when the lease it
// last read expires.
type Waiter struct {
	Hub  *Hub
	Poll time.Duration
	// Now is the clock that lease expiries are compared with.
	Now func() time.Time
}

// ReadFunc reads a stream: its description, with the state it effectively
// has now (see [EffectiveState]), then up to max of its chunks from
// sequence number from on, all with a sequence number below the returned
// Len.
type ReadFunc func(ctx context.Context, streamID string, from int64, max int) (*store.Stream, []store.Chunk, error)

// Follow implements [store.StreamReader.ReadStream] over read.
func (w Waiter) Follow(ctx context.Context, streamID string, from int64, read ReadFunc) iter.Seq2[store.Chunk, error] {
	return func(yield func(store.Chunk, error) bool) {
		if from < 0 {
			yield(store.Chunk{}, fmt.Errorf("%w: negative sequence number %d", store.ErrInvalid, from))
			return
		}
		next := from
		for {
			wake, release := w.Hub.Wait(streamID)
			s, chunks, err := read(ctx, streamID, next, ReadBatch)
			if err != nil {
				release()
				yield(store.Chunk{}, err)
				return
			}
			for _, c := range chunks {
				if !yield(c, nil) {
					release()
					return
				}
				next = c.Seq + 1
			}
			switch {
			case next < s.Len:
				release() // more to read at once
				continue
			case s.State != store.StreamActive:
				release()
				return
			}
			err = w.sleep(ctx, wake, s.LeaseExpires)
			release()
			if err != nil {
				yield(store.Chunk{}, err)
				return
			}
		}
	}
}

// StopFunc reads whether a stop was asked of the lease's stream. An error
// wrapping [store.ErrLeaseLost] means the lease is lost; expires is the
// lease's expiry.
type StopFunc func(ctx context.Context, l store.Lease) (stop bool, expires time.Time, err error)

// WaitStop implements [store.StreamWriter.WaitStop] over check.
func (w Waiter) WaitStop(ctx context.Context, l store.Lease, check StopFunc) error {
	for {
		wake, release := w.Hub.Wait(l.StreamID)
		stop, expires, err := check(ctx, l)
		if err != nil || stop {
			release()
			return err
		}
		err = w.sleep(ctx, wake, expires)
		release()
		if err != nil {
			return err
		}
	}
}

// sleep waits for wake, the poll interval or the deadline, whichever comes
// first, and returns ctx.Err() if ctx ends before.
func (w Waiter) sleep(ctx context.Context, wake <-chan struct{}, deadline time.Time) error {
	d := w.Poll
	if !deadline.IsZero() {
		if until := deadline.Sub(w.Now()); d == 0 || until < d {
			d = max(until, minSleep)
		}
	}
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-wake:
	case <-timeout:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// EffectiveState sets s.State to what it is at now: a stream whose lease
// expired without an end is interrupted, ended at the expiry.
func EffectiveState(s *store.Stream, now time.Time) {
	if s.State == store.StreamActive && !now.Before(s.LeaseExpires) {
		s.State = store.StreamInterrupted
		s.Ended = s.LeaseExpires
	}
}

// LeaseLost returns the error of a writer whose lease on the stream is
// lost, saying why.
func LeaseLost(streamID, why string) error {
	return fmt.Errorf("%w: stream %q %s", store.ErrLeaseLost, streamID, why)
}

// WhyLost says why a lease on s (nil: the stream does not exist) with the
// given token is lost at now, or returns "" if it is not.
func WhyLost(s *store.Stream, token, wantToken string, now time.Time) string {
	switch {
	case s == nil:
		return "no longer exists (its chat was deleted, or its log expired)"
	case token != wantToken:
		return "is held with another token"
	case s.State != store.StreamActive:
		return "has ended (" + string(s.State) + ")"
	case !now.Before(s.LeaseExpires):
		return "lease expired at " + s.LeaseExpires.Format(time.RFC3339Nano)
	}
	return ""
}
