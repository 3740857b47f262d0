package pgstore

import (
	"context"
	"testing"

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

	// Hold every pooled connection at once, so that each is made, and note
	// its backend.
	var pids []uint32
	var held []interface{ Release() }
	for range 3 {
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
		_, err := killer.Exec(ctx, `SELECT pg_terminate_backend($1)`, int32(pid))
		require.NoError(t, err)
	}

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
