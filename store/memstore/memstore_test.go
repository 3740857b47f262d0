package memstore

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/store"
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
