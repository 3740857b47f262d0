package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
)

// The connections of the store's pool are cut, as a database restart cuts
// them: the next reads succeed (on new connections) instead of failing
// with the broken ones, and so do the writes after them.
func TestReconnect_ReadsGoOnAfterThePoolsConnectionsWereCut(t *testing.T) {
	s, err := open(t, freshSchema(t), Options{})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.PutChat(ctx, &store.Chat{ID: "c", Owner: "o"}))

	cutPoolConnections(t, s)

	for range 3 { // one read per broken connection, at most
		_, err := s.GetChat(ctx, "c")
		require.NoError(t, err)
		_, err = s.GetDoc(ctx, "c", "d")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.ActiveStream(ctx, "c")
		require.ErrorIs(t, err, store.ErrNotFound)
	}
	_, err = store.UpdateChat(ctx, s, "c", func(c *store.Chat) error { c.Title = "After"; return nil })
	require.NoError(t, err)
}

// A write that is the first call on a connection the server has ended
// succeeds: the pool drops such a connection before sending anything on
// it (a write that went out on a broken connection could not be done
// again, since it may have been done).
func TestReconnect_WritesGoOnAfterThePoolsConnectionsWereCut(t *testing.T) {
	s, err := open(t, freshSchema(t), Options{})
	require.NoError(t, err)
	ctx := context.Background()
	c := &store.Chat{ID: "c", Owner: "o"}
	require.NoError(t, s.PutChat(ctx, c))
	l, err := s.StartStream(ctx, "c", time.Minute)
	require.NoError(t, err)

	cutPoolConnections(t, s)
	_, err = s.AppendChunks(ctx, l, []byte("a"))
	require.NoError(t, err)

	cutPoolConnections(t, s)
	c.Title = "After"
	require.NoError(t, s.PutChat(ctx, c))

	cutPoolConnections(t, s)
	require.NoError(t, s.PutDoc(ctx, &store.Doc{ChatID: "c", Name: "d", Data: []byte("{}")}))

	cutPoolConnections(t, s)
	l, err = s.RenewLease(ctx, l, time.Minute)
	require.NoError(t, err)

	cutPoolConnections(t, s)
	require.NoError(t, s.EndStream(ctx, l, store.StreamDone))

	got, err := s.GetChat(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, "After", got.Title)
}

// cutPoolConnections makes every connection the store's pool may hold and
// has the server end each one (pg_terminate_backend, waiting until the
// backend is gone), as a database restart ends them.
func cutPoolConnections(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	var pids []uint32
	var held []interface{ Release() }
	for range s.pool.Config().MaxConns {
		c, err := s.pool.Acquire(ctx)
		require.NoError(t, err)
		require.NoError(t, c.Ping(ctx))
		pids = append(pids, c.Conn().PgConn().PID())
		held = append(held, c)
	}
	for _, c := range held {
		c.Release()
	}
	killer, err := pgx.Connect(ctx, server(t))
	require.NoError(t, err)
	defer killer.Close(ctx)
	for _, pid := range pids {
		var gone bool
		require.NoError(t, killer.QueryRow(ctx, `SELECT pg_terminate_backend($1, 10000)`, int32(pid)).Scan(&gone))
		require.True(t, gone, "backend %d still runs", pid)
	}
}
