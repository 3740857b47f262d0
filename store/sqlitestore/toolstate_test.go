package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/sqlitestore"
	"github.com/agentloop/agentloop/toolstate"
)

// Package toolstate keeps its states as documents of a store; these tests
// run it on SQLite, where replicas are handles on one database file.

// chatStore returns s with the chat "chat" in it.
func chatStore(t testing.TB, s *sqlitestore.Store) *sqlitestore.Store {
	t.Helper()
	require.NoError(t, s.PutChat(context.Background(), &store.Chat{ID: "chat"}))
	return s
}

func openSQLite(t testing.TB, path string) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Two replicas, each with its own handle on one database, update one
// conversation at once: optimistic retries lose no update (this replaces
// the file store's processes sharing a directory).
func TestUpdate_ReplicasOnOneDatabaseLoseNoUpdate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chats.db")
	replicas := []store.Docs{chatStore(t, openSQLite(t, path)), openSQLite(t, path)}
	const perReplica = 25
	var wg sync.WaitGroup
	errs := make(chan error, 2*perReplica)
	for i, r := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perReplica {
				errs <- toolstate.Update(ctx, r, "chat", func(st *toolstate.State) error {
					st.RecordSuccess("shared", time.Now())
					st.RecordSuccess(fmt.Sprintf("replica_%d", i), time.Now())
					return nil
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	st, err := toolstate.Load(ctx, replicas[1], "chat")
	require.NoError(t, err)
	assert.Equal(t, 2*perReplica, st.Tools["shared"].Successes)
	assert.Equal(t, perReplica, st.Tools["replica_0"].Successes)
	assert.Equal(t, perReplica, st.Tools["replica_1"].Successes)
}
