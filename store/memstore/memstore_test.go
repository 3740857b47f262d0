package memstore

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/internal/backend"
	"github.com/agentloop/agentloop/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newStore(tb testing.TB, now func() time.Time) store.Store {
	s := New(Options{Now: now})
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, newStore, storetest.Options{
		Corrupt: func(tb testing.TB, s store.Store, chatID string) {
			m := s.(*Store)
			m.mu.Lock()
			defer m.mu.Unlock()
			m.chats[chatID].history = []byte(`{"version":1,"messages":[{"role":`)
		},
	})
}

func BenchmarkStore(b *testing.B) { storetest.Benchmark(b, newStore) }

// waiting returns once every other goroutine of the test's synctest bubble
// is blocked, and checks that someone waits on the hub for a stream, so that
// what the test does next must wake them.
func waiting(t *testing.T, h *backend.Hub) {
	t.Helper()
	synctest.Wait()
	require.NotZero(t, h.Len(), "nobody waits")
}

func TestStopWakesAWaitingHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := New(Options{})
		defer s.Close()
		require.NoError(t, s.PutChat(ctx, &store.Chat{ID: "c"}))
		l, err := s.StartStream(ctx, "c", time.Hour)
		require.NoError(t, err)
		stopped := make(chan error, 1)
		go func() { stopped <- s.WaitStop(ctx, l) }()
		waiting(t, &s.hub)
		require.NoError(t, s.StopStream(ctx, "c"))
		start := time.Now()
		require.NoError(t, <-stopped)
		// The lease runs an hour of the bubble's fake time: only the stop can
		// have woken the holder without the clock moving.
		require.Equal(t, start, time.Now(), "the holder was woken by the lease's end, not by the stop")
	})
}

func TestWaitersLeaveNothingBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := New(Options{})
		defer s.Close()
		require.NoError(t, s.PutChat(ctx, &store.Chat{ID: "c"}))
		l, err := s.StartStream(ctx, "c", time.Hour)
		require.NoError(t, err)
		followCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range s.ReadStream(followCtx, l.StreamID, 0) {
			}
		}()
		waiting(t, &s.hub)
		cancel()
		<-done
		require.Zero(t, s.hub.Len(), "a follower that left is forgotten")
	})
}
