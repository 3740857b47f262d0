package storetest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
)

const minute = time.Minute

// guard bounds how long a test waits for something that must happen; it
// fails the test instead of hanging it. Nothing waits for it to pass.
const guard = 30 * time.Second

// collect ranges over a stream that must end by itself, and returns its
// chunks; an error fails the test.
func collect(t *testing.T, seq iter.Seq2[store.Chunk, error]) []store.Chunk {
	t.Helper()
	var out []store.Chunk
	for c, err := range seq {
		require.NoError(t, err)
		out = append(out, c)
	}
	return out
}

type followed struct {
	chunk store.Chunk
	err   error
}

// follow ranges over the stream in a goroutine, sending what it yields
// and closing the channel when the stream ends.
func follow(t *testing.T, ctx context.Context, s store.StreamReader, streamID string, from int64) <-chan followed {
	ch := make(chan followed)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		for c, err := range s.ReadStream(ctx, streamID, from) {
			select {
			case ch <- followed{c, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() { <-done })
	return ch
}

// next receives the follower's next chunk, which must come.
func next(t *testing.T, ch <-chan followed) store.Chunk {
	t.Helper()
	select {
	case f, ok := <-ch:
		require.True(t, ok, "the stream ended early")
		require.NoError(t, f.err)
		return f.chunk
	case <-time.After(guard):
		t.Fatal("no chunk came")
	}
	panic("unreachable")
}

// ends asserts that the follower ends with no more chunks, and with no
// error unless want is set.
func ends(t *testing.T, ch <-chan followed, want error) {
	t.Helper()
	var last error
	for {
		select {
		case f, ok := <-ch:
			if !ok {
				if want == nil {
					require.NoError(t, last)
				} else {
					require.ErrorIs(t, last, want)
				}
				return
			}
			require.NoError(t, last, "nothing comes after an error")
			if f.err == nil {
				t.Fatalf("unexpected chunk %d %q", f.chunk.Seq, f.chunk.Data)
			}
			last = f.err
		case <-time.After(guard):
			t.Fatal("the stream did not end")
		}
	}
}

// waitStop runs WaitStop in a goroutine and returns its result channel.
func waitStop(t *testing.T, ctx context.Context, s store.StreamWriter, l store.Lease) <-chan error {
	ch := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ch <- s.WaitStop(ctx, l)
	}()
	t.Cleanup(func() { <-done }) // the test's ctx is done by now
	return ch
}

// result receives one error from ch, which must come.
func result(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(guard):
		t.Fatal("WaitStop did not return")
	}
	return nil
}

func chunks(data ...string) [][]byte {
	out := make([][]byte, len(data))
	for i, d := range data {
		out[i] = []byte(d)
	}
	return out
}

var streamTests = []test{
	{"StartNeedsAChatAndAPositiveLease", func(t *testing.T, su *suite) {
		e := su.env(t)
		_, err := e.s.StartStream(e.ctx, "no-chat", minute)
		require.ErrorIs(t, err, store.ErrNotFound)
		e.create(e.s, "chat-1", "", nil)
		_, err = e.s.StartStream(e.ctx, "chat-1", 0)
		require.ErrorIs(t, err, store.ErrInvalid)
	}},
	{"StartedStreamIsTheActiveOne", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		_, err := e.s.ActiveStream(e.ctx, "chat-1")
		require.ErrorIs(t, err, store.ErrNotFound, "no stream yet")
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		require.Equal(t, "chat-1", l.ChatID)
		require.NotEmpty(t, l.StreamID)
		require.NotEmpty(t, l.Token)
		require.Equal(t, e.clock.Now().Add(minute), l.Expires)
		_, err = e.s.AppendChunks(e.ctx, l, chunks("a", "b")...)
		require.NoError(t, err)

		got, err := e.s.ActiveStream(e.ctx, "chat-1")
		require.NoError(t, err)
		want := &store.Stream{ID: l.StreamID, ChatID: "chat-1", State: store.StreamActive, Started: e.clock.Now(), LeaseExpires: l.Expires, Len: 2}
		require.Equal(t, want, got)
		byID, err := e.s.GetStream(e.ctx, l.StreamID)
		require.NoError(t, err)
		require.Equal(t, want, byID)

		e.clock.Advance(time.Second)
		require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamDone))
		_, err = e.s.ActiveStream(e.ctx, "chat-1")
		require.ErrorIs(t, err, store.ErrNotFound, "an ended stream is not active")
		byID, err = e.s.GetStream(e.ctx, l.StreamID)
		require.NoError(t, err)
		require.Equal(t, store.StreamDone, byID.State)
		require.Equal(t, e.clock.Now(), byID.Ended)
	}},
	{"OneActiveStreamPerChat", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		e.create(e.s, "chat-2", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		_, err = e.s.StartStream(e.ctx, "chat-1", minute)
		require.ErrorIs(t, err, store.ErrStreamActive)
		var ae *store.ActiveStreamError
		require.ErrorAs(t, err, &ae)
		require.Equal(t, store.ActiveStreamError{ChatID: "chat-1", StreamID: l.StreamID, LeaseExpires: l.Expires}, *ae)
		_, err = e.s.StartStream(e.ctx, "chat-2", minute)
		require.NoError(t, err, "another chat has its own stream")

		require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamDone))
		l2, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err, "a new stream starts once the last one ended")
		require.NotEqual(t, l.StreamID, l2.StreamID)
	}},
	{"OneActiveStreamPerChatAcrossHandles", func(t *testing.T, su *suite) {
		e := su.env(t)
		s2 := su.reopen(e)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		_, err = s2.StartStream(e.ctx, "chat-1", minute)
		require.ErrorIs(t, err, store.ErrStreamActive)
		active, err := s2.ActiveStream(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, l.StreamID, active.ID)
	}},
	{"ConcurrentStartsLetOneWin", func(t *testing.T, su *suite) {
		e := su.env(t)
		handles := []store.Store{e.s}
		if su.opts.Reopen != nil {
			handles = append(handles, su.reopen(e))
		}
		e.create(e.s, "chat-1", "", nil)
		errs := make(chan error, writers)
		start := make(chan struct{})
		for i := range writers {
			go func() {
				<-start
				_, err := handles[i%len(handles)].StartStream(e.ctx, "chat-1", minute)
				errs <- err
			}()
		}
		close(start)
		won := 0
		for range writers {
			err := <-errs
			if err == nil {
				won++
				continue
			}
			require.ErrorIs(t, err, store.ErrStreamActive)
		}
		require.Equal(t, 1, won)
	}},
	{"StartsRacingAnEndingStreamGetTheStreamOrItsError", func(t *testing.T, su *suite) {
		// Starts that race a stream ending (a queue of requests for one
		// chat) get the lease or an *ActiveStreamError naming the
		// stream in the way, never an error saying the chat is gone.
		e := su.env(t)
		handles := []store.Store{e.s}
		if su.opts.Reopen != nil {
			handles = append(handles, su.reopen(e))
		}
		e.create(e.s, "chat-1", "", nil)
		const tries = 25
		errs := make(chan error, writers)
		start := make(chan struct{})
		for i := range writers {
			go func() {
				<-start
				s := handles[i%len(handles)]
				for range tries {
					l, err := s.StartStream(e.ctx, "chat-1", minute)
					var active *store.ActiveStreamError
					switch {
					case err == nil:
						if err := s.EndStream(e.ctx, l, store.StreamDone); err != nil {
							errs <- err
							return
						}
					case errors.As(err, &active):
					default:
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		close(start)
		for range writers {
			require.NoError(t, <-errs)
		}
	}},
	{"ChunksReadBackInOrderFromAnySequenceNumber", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		n, err := e.s.AppendChunks(e.ctx, l)
		require.NoError(t, err)
		require.Zero(t, n, "appending nothing is allowed")
		n, err = e.s.AppendChunks(e.ctx, l, chunks("data: a\n\n", "data: b\n\n")...)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		n, err = e.s.AppendChunks(e.ctx, l, chunks("data: c\n\n", "", "data: [DONE]\n\n")...)
		require.NoError(t, err)
		require.EqualValues(t, 5, n)
		require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamDone))

		all := collect(t, e.s.ReadStream(e.ctx, l.StreamID, 0))
		require.Len(t, all, 5)
		for i, c := range all {
			require.EqualValues(t, i, c.Seq)
		}
		require.Equal(t, "data: [DONE]\n\n", string(all[4].Data))
		require.Empty(t, all[3].Data)
		require.Equal(t, all[2:], collect(t, e.s.ReadStream(e.ctx, l.StreamID, 2)))
		require.Empty(t, collect(t, e.s.ReadStream(e.ctx, l.StreamID, 5)))
		require.Empty(t, collect(t, e.s.ReadStream(e.ctx, l.StreamID, 99)), "reading past the end of an ended stream ends")
	}},
	{"LongLogsReadBackWhole", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		const n = 1500 // more than one read batch of any sane backend
		batch := make([][]byte, 0, 100)
		for i := range n {
			batch = append(batch, fmt.Appendf(nil, "chunk %d", i))
			if len(batch) == cap(batch) {
				_, err := e.s.AppendChunks(e.ctx, l, batch...)
				require.NoError(t, err)
				batch = batch[:0]
			}
		}
		require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamDone))
		all := collect(t, e.s.ReadStream(e.ctx, l.StreamID, 0))
		require.Len(t, all, n)
		for i, c := range all {
			require.EqualValues(t, i, c.Seq)
			require.Equal(t, fmt.Sprintf("chunk %d", i), string(c.Data))
		}
	}},
	{"ReadingUnknownStreamsAndBadOffsetsFails", func(t *testing.T, su *suite) {
		e := su.env(t)
		for _, err := range e.s.ReadStream(e.ctx, "no-such-stream", 0) {
			require.ErrorIs(t, err, store.ErrNotFound)
		}
		_, err := e.s.GetStream(e.ctx, "no-such-stream")
		require.ErrorIs(t, err, store.ErrNotFound)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		n := 0
		for _, err := range e.s.ReadStream(e.ctx, l.StreamID, -1) {
			require.ErrorIs(t, err, store.ErrInvalid)
			n++
		}
		require.Equal(t, 1, n)
	}},
	{"FollowSeesLiveAppendsInOrderAndEndsAtTheEnd", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		_, err = e.s.AppendChunks(e.ctx, l, []byte("before"))
		require.NoError(t, err)

		f1 := follow(t, e.ctx, e.s, l.StreamID, 0)
		f2 := follow(t, e.ctx, e.s, l.StreamID, 1)
		require.Equal(t, "before", string(next(t, f1).Data), "the log so far is replayed")
		for i := range 20 {
			_, err := e.s.AppendChunks(e.ctx, l, fmt.Appendf(nil, "live %d", i))
			require.NoError(t, err)
			require.Equal(t, store.Chunk{Seq: int64(i + 1), Data: fmt.Appendf(nil, "live %d", i)}, next(t, f1))
		}
		for i := range 20 {
			require.Equal(t, fmt.Sprintf("live %d", i), string(next(t, f2).Data))
		}
		require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamDone))
		ends(t, f1, nil)
		ends(t, f2, nil)
	}},
	{"FollowAcrossHandles", func(t *testing.T, su *suite) {
		e := su.env(t)
		s2 := su.reopen(e)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		f := follow(t, e.ctx, s2, l.StreamID, 0)
		for i := range 5 {
			_, err := e.s.AppendChunks(e.ctx, l, fmt.Appendf(nil, "%d", i))
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint(i), string(next(t, f).Data))
		}
		_, err = e.s.AppendChunks(e.ctx, l, chunks("last")...)
		require.NoError(t, err)
		require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamDone))
		require.Equal(t, "last", string(next(t, f).Data), "chunks appended just before the end are not lost")
		ends(t, f, nil)
	}},
	{"FollowEndsWhenCtxIsDone", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		_, err = e.s.AppendChunks(e.ctx, l, []byte("x"))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(e.ctx)
		defer cancel()
		var got []followed
		for c, err := range e.s.ReadStream(ctx, l.StreamID, 0) {
			got = append(got, followed{c, err})
			cancel() // after the first chunk, while the stream is live
		}
		require.Len(t, got, 2)
		require.NoError(t, got[0].err)
		require.ErrorIs(t, got[1].err, context.Canceled)
	}},
	{"FollowEndsWhenTheChatIsDeleted", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		_, err = e.s.AppendChunks(e.ctx, l, []byte("x"))
		require.NoError(t, err)
		f := follow(t, e.ctx, e.s, l.StreamID, 0)
		next(t, f)
		require.NoError(t, e.s.DeleteChat(e.ctx, "chat-1", c.Version))
		ends(t, f, store.ErrNotFound)
	}},
	{"LeaseExpiryLetsAnotherHolderTakeOver", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		old, err := e.s.StartStream(e.ctx, "chat-1", 10*time.Second)
		require.NoError(t, err)
		_, err = e.s.AppendChunks(e.ctx, old, []byte("old"))
		require.NoError(t, err)
		f := follow(t, e.ctx, e.s, old.StreamID, 0)
		next(t, f)

		e.clock.Advance(10 * time.Second) // the holder died: no renewal
		_, err = e.s.ActiveStream(e.ctx, "chat-1")
		require.ErrorIs(t, err, store.ErrNotFound, "an expired lease is not active")
		info, err := e.s.GetStream(e.ctx, old.StreamID)
		require.NoError(t, err)
		require.Equal(t, store.StreamInterrupted, info.State)
		require.Equal(t, old.Expires, info.Ended)

		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		ends(t, f, nil)
		_, err = e.s.AppendChunks(e.ctx, old, []byte("zombie"))
		require.ErrorIs(t, err, store.ErrLeaseLost, "the old holder is fenced off")
		_, err = e.s.AppendChunks(e.ctx, l, []byte("new"))
		require.NoError(t, err)
		require.Equal(t, []store.Chunk{{Seq: 0, Data: []byte("old")}}, collect(t, e.s.ReadStream(e.ctx, old.StreamID, 0)))
	}},
	{"LeaseExpiryAcrossHandles", func(t *testing.T, su *suite) {
		e := su.env(t)
		s2 := su.reopen(e)
		e.create(e.s, "chat-1", "", nil)
		old, err := e.s.StartStream(e.ctx, "chat-1", 10*time.Second)
		require.NoError(t, err)
		f := follow(t, e.ctx, s2, old.StreamID, 0)
		e.clock.Advance(11 * time.Second)
		_, err = s2.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		ends(t, f, nil)
		_, err = e.s.AppendChunks(e.ctx, old, []byte("zombie"))
		require.ErrorIs(t, err, store.ErrLeaseLost)
	}},
	{"StaleHoldersAreFenced", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)

		forged := l
		forged.Token = "guessed"
		_, err = e.s.AppendChunks(e.ctx, forged, []byte("x"))
		require.ErrorIs(t, err, store.ErrLeaseLost)
		require.ErrorContains(t, err, l.StreamID)
		_, err = e.s.RenewLease(e.ctx, forged, minute)
		require.ErrorIs(t, err, store.ErrLeaseLost)
		require.ErrorIs(t, e.s.EndStream(e.ctx, forged, store.StreamDone), store.ErrLeaseLost)
		unknown := l
		unknown.StreamID = "no-such-stream"
		_, err = e.s.AppendChunks(e.ctx, unknown, []byte("x"))
		require.ErrorIs(t, err, store.ErrLeaseLost)

		require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamFailed))
		_, err = e.s.AppendChunks(e.ctx, l, []byte("after the end"))
		require.ErrorIs(t, err, store.ErrLeaseLost)
		_, err = e.s.RenewLease(e.ctx, l, minute)
		require.ErrorIs(t, err, store.ErrLeaseLost)
		require.ErrorIs(t, e.s.EndStream(e.ctx, l, store.StreamDone), store.ErrLeaseLost, "a stream ends once")
		info, err := e.s.GetStream(e.ctx, l.StreamID)
		require.NoError(t, err)
		require.Equal(t, store.StreamFailed, info.State)
		require.Zero(t, info.Len, "no fenced chunk got in")
	}},
	{"RenewalKeepsTheLease", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", 10*time.Second)
		require.NoError(t, err)
		for range 3 {
			e.clock.Advance(8 * time.Second)
			l, err = e.s.RenewLease(e.ctx, l, 10*time.Second)
			require.NoError(t, err)
			require.Equal(t, e.clock.Now().Add(10*time.Second), l.Expires)
		}
		_, err = e.s.AppendChunks(e.ctx, l, []byte("still mine"))
		require.NoError(t, err, "24s after a 10s lease began, renewals kept it")
		_, err = e.s.StartStream(e.ctx, "chat-1", minute)
		require.ErrorIs(t, err, store.ErrStreamActive)
		_, err = e.s.RenewLease(e.ctx, l, -time.Second)
		require.ErrorIs(t, err, store.ErrInvalid)

		e.clock.Advance(10 * time.Second)
		_, err = e.s.RenewLease(e.ctx, l, minute)
		require.ErrorIs(t, err, store.ErrLeaseLost, "an expired lease cannot be renewed")
		_, err = e.s.AppendChunks(e.ctx, l, []byte("too late"))
		require.ErrorIs(t, err, store.ErrLeaseLost)
	}},
	{"EndStatesAreChecked", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		for _, state := range []store.StreamState{store.StreamDone, store.StreamCancelled, store.StreamFailed, store.StreamInterrupted} {
			l, err := e.s.StartStream(e.ctx, "chat-1", minute)
			require.NoError(t, err)
			require.ErrorIs(t, e.s.EndStream(e.ctx, l, store.StreamActive), store.ErrInvalid)
			require.ErrorIs(t, e.s.EndStream(e.ctx, l, "finished"), store.ErrInvalid)
			require.NoError(t, e.s.EndStream(e.ctx, l, state))
			info, err := e.s.GetStream(e.ctx, l.StreamID)
			require.NoError(t, err)
			require.Equal(t, state, info.State)
		}
	}},
	{"StopReachesTheHolder", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		require.ErrorIs(t, e.s.StopStream(e.ctx, "chat-1"), store.ErrNotFound, "nothing to stop")
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		stopped := waitStop(t, e.ctx, e.s, l)
		_, err = e.s.AppendChunks(e.ctx, l, []byte("working")) // a change that is no stop
		require.NoError(t, err)
		require.NoError(t, e.s.StopStream(e.ctx, "chat-1"))
		require.NoError(t, result(t, stopped))
		info, err := e.s.GetStream(e.ctx, l.StreamID)
		require.NoError(t, err)
		require.True(t, info.StopRequested)
		require.NoError(t, e.s.WaitStop(e.ctx, l), "a stop asked before the wait is seen at once")
		require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamCancelled))
	}},
	{"StopReachesTheHolderAcrossHandles", func(t *testing.T, su *suite) {
		e := su.env(t)
		s2 := su.reopen(e)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		stopped := waitStop(t, e.ctx, e.s, l)
		require.NoError(t, s2.StopStream(e.ctx, "chat-1"))
		require.NoError(t, result(t, stopped))
	}},
	{"WaitStopEndsWhenTheLeaseIsLost", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		stopped := waitStop(t, e.ctx, e.s, l)
		require.NoError(t, e.s.DeleteChat(e.ctx, "chat-1", c.Version))
		require.ErrorIs(t, result(t, stopped), store.ErrLeaseLost)

		e.create(e.s, "chat-2", "", nil)
		l, err = e.s.StartStream(e.ctx, "chat-2", minute)
		require.NoError(t, err)
		require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamDone))
		require.ErrorIs(t, e.s.WaitStop(e.ctx, l), store.ErrLeaseLost)
	}},
	{"WaitStopEndsWithCtx", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(e.ctx)
		stopped := waitStop(t, ctx, e.s, l)
		cancel()
		require.ErrorIs(t, result(t, stopped), context.Canceled)
	}},
	{"EndedStreamsExpire", func(t *testing.T, su *suite) {
		e := su.env(t)
		for _, id := range []string{"a", "b", "c", "d"} {
			e.create(e.s, id, "", nil)
		}
		start := func(chatID string, ttl time.Duration) store.Lease {
			l, err := e.s.StartStream(e.ctx, chatID, ttl)
			require.NoError(t, err)
			_, err = e.s.AppendChunks(e.ctx, l, []byte("x"))
			require.NoError(t, err)
			return l
		}
		a := start("a", minute)
		require.NoError(t, e.s.EndStream(e.ctx, a, store.StreamDone)) // ends at t0
		crashed := start("b", 5*time.Second)                          // expires at t0+5s
		e.clock.Advance(10 * time.Second)
		c := start("c", minute)
		require.NoError(t, e.s.EndStream(e.ctx, c, store.StreamDone)) // ends at t0+10s
		live := start("d", 2*time.Hour)
		e.clock.Advance(time.Hour)
		live, err := e.s.RenewLease(e.ctx, live, time.Hour)
		require.NoError(t, err)

		n, err := e.s.DeleteEndedStreams(e.ctx, e.clock.Now().Add(-time.Hour-2*time.Second)) // between the crash and c's end
		require.NoError(t, err)
		require.EqualValues(t, 2, n, "the done stream and the crashed one, not the later one nor the live one")
		for _, l := range []store.Lease{a, crashed} {
			_, err := e.s.GetStream(e.ctx, l.StreamID)
			require.ErrorIs(t, err, store.ErrNotFound)
		}
		for _, l := range []store.Lease{c, live} {
			_, err := e.s.GetStream(e.ctx, l.StreamID)
			require.NoError(t, err)
		}
		_, err = e.s.AppendChunks(e.ctx, live, []byte("y"))
		require.NoError(t, err)
		n, err = e.s.DeleteEndedStreams(e.ctx, e.clock.Now().Add(2*time.Hour)) // after the live lease would end
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "an active stream with a running lease never expires")
	}},
}
