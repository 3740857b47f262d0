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
	"github.com/agentloop/agentloop/toolstate/toolstatetest"
)

// The tool states of package toolstate kept in an SQLite file, through a
// DocStore: the same contract as every toolstate.Store.
func TestToolstateDocStore(t *testing.T) {
	toolstatetest.Run(t, func(t testing.TB) toolstate.Store {
		return toolstate.NewDocStore(chatStore(t, openSQLite(t, filepath.Join(t.TempDir(), "chats.db"))))
	})
}

// chatStore returns s with a chat for each of the conversations
// toolstatetest uses, for a DocStore keeps tool states only for chats
// that exist.
func chatStore(t testing.TB, s store.Store) store.Store {
	t.Helper()
	for _, id := range toolstatetest.Conversations {
		require.NoError(t, s.PutChat(context.Background(), &store.Chat{ID: id}))
	}
	return s
}

func openSQLite(t testing.TB, path string) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Two replicas, each with its own store on one database, update one
// conversation at once: optimistic retries lose no update.
func TestToolstateDocStore_ReplicasOnOneDatabaseLoseNoUpdate(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "chats.db")
	a := chatStore(t, openSQLite(t, path))
	b := openSQLite(t, path)
	replicas := []toolstate.Store{toolstate.NewDocStore(a), toolstate.NewDocStore(b)}
	const perReplica = 25
	var wg sync.WaitGroup
	errs := make(chan error, 2*perReplica)
	for i, r := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perReplica {
				errs <- r.Update(ctx, "chat", func(st *toolstate.State) error {
					st.RecordSuccess("shared", now)
					st.RecordSuccess(fmt.Sprintf("replica_%d", i), now)
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
	st, err := replicas[1].Load(ctx, "chat")
	require.NoError(t, err)
	assert.Equal(t, 2*perReplica, st.Tools["shared"].Successes)
	assert.Equal(t, perReplica, st.Tools["replica_0"].Successes)
	assert.Equal(t, perReplica, st.Tools["replica_1"].Successes)
}
