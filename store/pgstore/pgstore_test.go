package pgstore

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/internal/backend"
	"github.com/agentloop/agentloop/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serverEnv names the variable that points the tests at a PostgreSQL
// server. Each test works in a schema of its own, dropped at its end.
const serverEnv = "AGENTLOOP_TEST_POSTGRES"

// server returns the test server's connection string. Without one the
// test skips, except in CI (CI=true), where it fails.
func server(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv(serverEnv)
	if url == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not set: CI must start a PostgreSQL server for these tests (.ci/run's PostgreSQL step does)", serverEnv)
		}
		tb.Skipf("no PostgreSQL server: set %s=postgres://user@127.0.0.1:5432/db?sslmode=disable to run these tests (.ci/run starts a throwaway server and sets it)", serverEnv)
	}
	return url
}

// freshSchema returns the name of a new schema, which is dropped with
// everything in it when tb ends.
func freshSchema(tb testing.TB) string {
	url := server(tb)
	name := "agentloop_test_" + backend.RandomID()[:16]
	tb.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			tb.Errorf("dropping schema %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("dropping schema %s: %v", name, err)
		}
	})
	return name
}

// open opens a store on the test server's schema, closed when tb ends.
func open(tb testing.TB, schema string, opts Options) (*Store, error) {
	opts.Schema = schema
	if opts.PollInterval == 0 {
		opts.PollInterval = time.Hour // the tests see notifications, or hang
	}
	s, err := Open(context.Background(), server(tb), opts)
	if err == nil {
		tb.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

func newStore(tb testing.TB, now func() time.Time) store.Store {
	s, err := open(tb, freshSchema(tb), Options{Now: now})
	require.NoError(tb, err)
	return s
}

func TestConformance(t *testing.T) {
	server(t) // skip (or fail, in CI) once, not in every subtest
	storetest.Run(t, newStore, storetest.Options{
		Corrupt: func(tb testing.TB, s store.Store, chatID string) {
			_, err := s.(*Store).pool.Exec(context.Background(), `UPDATE agentloop_chats SET history = $1 WHERE id = $2`, []byte(`{"version":1,"messages":[`), chatID)
			require.NoError(tb, err)
		},
		Reopen: func(tb testing.TB, s store.Store, now func() time.Time) (store.Store, error) {
			return open(tb, schemaOf(tb, s.(*Store)), Options{Now: now})
		},
		BumpSchema: func(tb testing.TB, s store.Store) {
			_, err := s.(*Store).pool.Exec(context.Background(), `UPDATE agentloop_schema SET version = version + 1`)
			require.NoError(tb, err)
		},
	})
}

// schemaOf returns the schema the store works in.
func schemaOf(tb testing.TB, s *Store) string {
	var schema string
	require.NoError(tb, s.pool.QueryRow(context.Background(), `SELECT current_schema()`).Scan(&schema))
	return schema
}

func BenchmarkStore(b *testing.B) {
	server(b)
	storetest.Benchmark(b, newStore)
}
