package pgstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/internal/backend"
)

func TestOpenMigratesAnEmptySchemaOnceAndReopeningChangesNothing(t *testing.T) {
	schema := freshSchema(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs { // replicas starting at once
		wg.Go(func() { _, errs[i] = open(t, schema, Options{}) })
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))

	s, err := open(t, schema, Options{})
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, s.PutChat(ctx, &store.Chat{ID: "c"}))
	for range 2 {
		s, err = open(t, schema, Options{})
		require.NoError(t, err)
		var versions []int
		rows, err := s.pool.Query(ctx, `SELECT version FROM agentloop_schema`)
		require.NoError(t, err)
		for rows.Next() {
			var v int
			require.NoError(t, rows.Scan(&v))
			versions = append(versions, v)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []int{SchemaVersion()}, versions)
		_, err = s.GetChat(ctx, "c")
		require.NoError(t, err)
	}
}

func TestOpenFailsClearly(t *testing.T) {
	_, err := Open(t.Context(), "postgres://%zz", Options{})
	require.Error(t, err)
	require.ErrorContains(t, err, "pgstore")
	// A closed port on loopback: refused at once.
	_, err = Open(t.Context(), "postgres://nobody@127.0.0.1:1/db?sslmode=disable&connect_timeout=5", Options{})
	require.Error(t, err)
}

func TestTheDatabaseClockIsTheDefault(t *testing.T) {
	s, err := open(t, freshSchema(t), Options{})
	require.NoError(t, err)
	ctx := t.Context()
	before := time.Now().Add(-time.Minute) // one machine, one clock; a margin all the same
	c := &store.Chat{ID: "c"}
	require.NoError(t, s.PutChat(ctx, c))
	l, err := s.StartStream(ctx, "c", time.Hour)
	require.NoError(t, err)
	after := time.Now().Add(time.Minute)
	require.True(t, c.Created.After(before) && c.Created.Before(after), "created %v", c.Created)
	require.WithinDuration(t, c.Created.Add(time.Hour), l.Expires, time.Minute)
	active, err := s.ActiveStream(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, l.Expires, active.LeaseExpires)
}

// waiting returns once someone waits on the hub for a stream.
func waiting(t *testing.T, h *backend.Hub) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for h.Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nobody waits")
		}
		runtime.Gosched()
	}
}

// within returns what ch sends, failing the test if it takes long.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatal(what)
	}
	panic("unreachable")
}

// twoReplicas opens two stores on one schema. The first polls every hour,
// so it hears of the second's writes only by notification.
func twoReplicas(t *testing.T, second Options) (a, b *Store) {
	schema := freshSchema(t)
	a, err := open(t, schema, Options{PollInterval: time.Hour})
	require.NoError(t, err)
	b, err = open(t, schema, second)
	require.NoError(t, err)
	require.NoError(t, a.PutChat(t.Context(), &store.Chat{ID: "c"}))
	return a, b
}

func TestAStopOnOneReplicaReachesTheHolderOnAnother(t *testing.T) {
	a, b := twoReplicas(t, Options{})
	ctx := t.Context()
	l, err := a.StartStream(ctx, "c", time.Hour)
	require.NoError(t, err)
	stopped := make(chan error, 1)
	go func() { stopped <- a.WaitStop(ctx, l) }()
	waiting(t, &a.hub)
	require.NoError(t, b.StopStream(ctx, "c"))
	require.NoError(t, within(t, stopped, "the stop did not reach the holder"))
}

// follow ranges over the stream in a goroutine, sending each chunk's data.
func follow(t *testing.T, s *Store, streamID string) <-chan string {
	ch := make(chan string)
	done := make(chan struct{})
	ctx := t.Context()
	go func() {
		defer close(done)
		defer close(ch)
		for c, err := range s.ReadStream(ctx, streamID, 0) {
			v := string(c.Data)
			if err != nil {
				v = "error: " + err.Error()
			}
			select {
			case ch <- v:
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() { <-done })
	return ch
}

func TestFollowersHearOfChangesWhenNotificationsAreLost(t *testing.T) {
	// b never listens: it re-reads every 10ms.
	a, b := twoReplicas(t, Options{PollInterval: 10 * time.Millisecond, noListen: true})
	ctx := t.Context()
	l, err := a.StartStream(ctx, "c", time.Hour)
	require.NoError(t, err)
	got := follow(t, b, l.StreamID)
	for i := range 3 {
		_, err := a.AppendChunks(ctx, l, fmt.Appendf(nil, "%d", i))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(i), within(t, got, "the follower did not poll"))
	}
	stopped := make(chan error, 1)
	go func() { stopped <- b.WaitStop(ctx, l) }()
	require.NoError(t, a.StopStream(ctx, "c"))
	require.NoError(t, within(t, stopped, "the stop waiter did not poll"))
	require.NoError(t, a.EndStream(ctx, l, store.StreamCancelled))
	_, open := <-got
	require.False(t, open, "the follower ended with the stream")
}

func TestAReplicaThatLosesItsListeningConnectionReconnects(t *testing.T) {
	a, b := twoReplicas(t, Options{})
	ctx := t.Context()
	l, err := b.StartStream(ctx, "c", time.Hour)
	require.NoError(t, err)
	got := follow(t, a, l.StreamID) // a polls every hour
	_, err = b.AppendChunks(ctx, l, []byte("before"))
	require.NoError(t, err)
	require.Equal(t, "before", within(t, got, "no chunk before the cut"))

	old := a.listenPID.Load()
	var killed bool
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, int32(old)).Scan(&killed))
	require.True(t, killed)
	_, err = b.AppendChunks(ctx, l, []byte("during"))
	require.NoError(t, err)
	require.Equal(t, "during", within(t, got, "the follower missed a chunk sent while its replica reconnected"))
	deadline := time.Now().Add(20 * time.Second)
	for a.listenPID.Load() == old { // a listens on a new connection
		if time.Now().After(deadline) {
			t.Fatal("a did not reconnect")
		}
		runtime.Gosched()
	}
	_, err = b.AppendChunks(ctx, l, []byte("after"))
	require.NoError(t, err)
	require.Equal(t, "after", within(t, got, "no chunk after the reconnection"))
}

func TestAppendsOfOneHolderKeepTheirOrderUnderLoad(t *testing.T) {
	a, b := twoReplicas(t, Options{})
	ctx := t.Context()
	l, err := a.StartStream(ctx, "c", time.Hour)
	require.NoError(t, err)
	followers := []<-chan string{follow(t, a, l.StreamID), follow(t, b, l.StreamID)}
	const n = 300
	go func() {
		for i := range n {
			if _, err := a.AppendChunks(context.WithoutCancel(ctx), l, fmt.Appendf(nil, "%d", i)); err != nil {
				return
			}
		}
		_ = a.EndStream(context.WithoutCancel(ctx), l, store.StreamDone)
	}()
	for _, f := range followers {
		for i := range n {
			require.Equal(t, fmt.Sprint(i), within(t, f, "a chunk is missing"))
		}
		_, open := <-f
		require.False(t, open)
	}
}
