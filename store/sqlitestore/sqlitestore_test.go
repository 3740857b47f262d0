package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testPoll is how often the tests' stores poll for other handles' writes.
const testPoll = 5 * time.Millisecond

func open(tb testing.TB, path string, now func() time.Time) (*Store, error) {
	s, err := Open(context.Background(), path, Options{Now: now, PollInterval: testPoll})
	if err == nil {
		tb.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

func newStore(tb testing.TB, now func() time.Time) store.Store {
	s, err := open(tb, filepath.Join(tb.TempDir(), "chats.db"), now)
	require.NoError(tb, err)
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, newStore, storetest.Options{
		Corrupt: func(tb testing.TB, s store.Store, chatID string) {
			_, err := s.(*Store).w.Exec(`UPDATE agentloop_chats SET history = ? WHERE id = ?`, []byte(`{"version":1,"messages":[`), chatID)
			require.NoError(tb, err)
		},
		Reopen: func(tb testing.TB, s store.Store, now func() time.Time) (store.Store, error) {
			return open(tb, s.(*Store).Path(), now)
		},
		BumpSchema: func(tb testing.TB, s store.Store) {
			_, err := s.(*Store).w.Exec(`UPDATE agentloop_schema SET version = version + 1`)
			require.NoError(tb, err)
		},
	})
}

func BenchmarkStore(b *testing.B) {
	storetest.Benchmark(b, func(tb testing.TB, now func() time.Time) store.Store { return newStore(tb, now) })
}
