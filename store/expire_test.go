package store_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
)

// rounds is a Streams whose DeleteEndedStreams reports each call.
type rounds struct {
	store.Streams
	calls chan time.Time
	err   error
}

func (r *rounds) DeleteEndedStreams(ctx context.Context, before time.Time) (int64, error) {
	n, err := r.Streams.DeleteEndedStreams(ctx, before)
	r.calls <- before
	if r.err != nil {
		return 0, r.err
	}
	return n, err
}

// In a synctest bubble the ticker runs on fake time: the rounds come
// exactly one interval apart and nothing waits on the wall clock.
func TestExpireStreams_DeletesEndedLogsEachRoundUntilCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		ms := memstore.New(memstore.Options{})
		defer ms.Close()
		require.NoError(t, ms.PutChat(ctx, &store.Chat{ID: "c"}))
		l, err := ms.StartStream(ctx, "c", time.Minute)
		require.NoError(t, err)
		require.NoError(t, ms.EndStream(ctx, l, store.StreamDone))

		r := &rounds{Streams: ms, calls: make(chan time.Time), err: errors.New("db down")}
		failures := make(chan error, 10)
		done := make(chan error)
		const every, keep = time.Hour, 90 * time.Minute
		start := time.Now()
		go func() {
			done <- store.ExpireStreams(ctx, r, every, keep, func(err error) { failures <- err })
		}()
		before := <-r.calls
		require.Equal(t, start.Add(every), time.Now(), "the first round comes one interval after the start")
		require.Equal(t, time.Now().Add(-keep), before, "a round deletes what ended keep ago")
		require.ErrorIs(t, <-failures, r.err, "a failed round is reported")
		_, err = ms.GetStream(ctx, l.StreamID)
		require.NoError(t, err, "a log younger than keep stays")

		r.err = nil
		<-r.calls // the next round goes on after a failure
		require.Equal(t, start.Add(2*every), time.Now(), "rounds come once every interval")
		_, err = ms.GetStream(ctx, l.StreamID)
		require.ErrorIs(t, err, store.ErrNotFound, "a log that ended more than keep ago is deleted")
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
	})
}

func TestExpireStreams_RefusesABadSchedule(t *testing.T) {
	ms := memstore.New(memstore.Options{})
	defer ms.Close()
	require.ErrorIs(t, store.ExpireStreams(context.Background(), ms, 0, time.Minute, nil), store.ErrInvalid)
	require.ErrorIs(t, store.ExpireStreams(context.Background(), ms, time.Minute, -1, nil), store.ErrInvalid)
}
