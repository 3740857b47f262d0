package sqlitestore

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/internal/backend"
)

// schemaState returns the schema table's rows and the version sequence.
func schemaState(t *testing.T, s *Store) (versions []int, seq int64) {
	t.Helper()
	rows, err := s.r.Query(`SELECT version FROM agentloop_schema`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		versions = append(versions, v)
	}
	require.NoError(t, s.r.QueryRow(`SELECT n FROM agentloop_seq`).Scan(&seq))
	return versions, seq
}

func TestOpenMigratesAnEmptyFileOnceAndReopeningChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chats.db")
	s, err := open(t, path, nil)
	require.NoError(t, err)
	versions, seq := schemaState(t, s)
	require.Equal(t, []int{SchemaVersion()}, versions)
	require.Zero(t, seq)
	require.NoError(t, s.PutChat(t.Context(), &store.Chat{ID: "c"}))
	require.NoError(t, s.Close())

	info, err := os.Stat(path)
	require.NoError(t, err)
	for range 2 {
		s, err = open(t, path, nil)
		require.NoError(t, err)
		versions, seq = schemaState(t, s)
		require.Equal(t, []int{SchemaVersion()}, versions)
		require.EqualValues(t, 1, seq)
		require.NoError(t, s.Close())
	}
	after, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, info.Size(), after.Size())
}

// Every connection, the writer's and each reader's, runs with the settings
// the store relies on: foreign keys enforced (deleting a chat cascades to
// its streams), the busy timeout of the options, WAL, synchronous=NORMAL;
// readers cannot write. Asked of SQLite itself, so a connection-string key
// the driver ignores would fail here.
func TestEveryConnectionHasTheStoresPragmas(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "chats.db"), Options{BusyTimeout: 1234 * time.Millisecond, PollInterval: -1})
	require.NoError(t, err)
	defer s.Close()
	pragma := func(c *sql.Conn, name string) string {
		t.Helper()
		var v string
		require.NoError(t, c.QueryRowContext(t.Context(), "PRAGMA "+name).Scan(&v), name)
		return v
	}
	check := func(c *sql.Conn, queryOnly string) {
		t.Helper()
		require.Equal(t, "1", pragma(c, "foreign_keys"))
		require.Equal(t, "1234", pragma(c, "busy_timeout"))
		require.Equal(t, "wal", pragma(c, "journal_mode"))
		require.Equal(t, "1", pragma(c, "synchronous")) // NORMAL
		require.Equal(t, queryOnly, pragma(c, "query_only"))
	}
	w, err := s.w.Conn(t.Context())
	require.NoError(t, err)
	defer w.Close()
	check(w, "0")
	// Held at once, so that each is a connection of its own.
	for range readers {
		r, err := s.r.Conn(t.Context())
		require.NoError(t, err)
		defer r.Close()
		check(r, "1")
	}
}

func TestConcurrentOpensOfANewFileMigrateOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chats.db")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = open(t, path, nil) })
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	s, err := open(t, path, nil)
	require.NoError(t, err)
	versions, _ := schemaState(t, s)
	require.Equal(t, []int{SchemaVersion()}, versions)
}

func TestTheFileIsPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix file modes")
	}
	path := filepath.Join(t.TempDir(), "chats.db")
	s, err := open(t, path, nil)
	require.NoError(t, err)
	require.NoError(t, s.PutChat(t.Context(), &store.Chat{ID: "c"}))
	for _, p := range []string{path, path + "-wal"} {
		info, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), p)
	}
}

func TestPathsAreTakenLiterally(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%20chars&_txlock=x")
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := filepath.Join(dir, "chats?.db")
	s, err := open(t, path, nil)
	require.NoError(t, err)
	require.NoError(t, s.PutChat(t.Context(), &store.Chat{ID: "c"}))
	require.NoError(t, s.Close())
	_, err = os.Stat(path)
	require.NoError(t, err, "the file is where the path says")
	s, err = open(t, path, nil)
	require.NoError(t, err)
	_, err = s.GetChat(t.Context(), "c")
	require.NoError(t, err)
}

func TestOpenFailsClearly(t *testing.T) {
	_, err := Open(t.Context(), "", Options{})
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = Open(t.Context(), filepath.Join(t.TempDir(), "no-such-dir", "chats.db"), Options{})
	require.ErrorContains(t, err, "no-such-dir")
	notDB := filepath.Join(t.TempDir(), "text")
	require.NoError(t, os.WriteFile(notDB, []byte("this is not a database, it is text long enough to be read as a header"), 0o600))
	_, err = Open(t.Context(), notDB, Options{})
	require.ErrorContains(t, err, notDB)
}

func TestStopWakesAWaitingHolderAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s, err := Open(ctx, filepath.Join(t.TempDir(), "chats.db"), Options{PollInterval: -1})
		require.NoError(t, err)
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
		// No polling, an hour's lease on the bubble's fake clock: only the stop
		// can have woken the holder without the clock moving.
		require.Equal(t, start, time.Now(), "the holder was woken by the lease's end, not by the stop")
	})
}

func TestFollowersOfTheSameStoreAreWokenAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s, err := Open(ctx, filepath.Join(t.TempDir(), "chats.db"), Options{PollInterval: -1})
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, s.PutChat(ctx, &store.Chat{ID: "c"}))
		l, err := s.StartStream(ctx, "c", time.Hour)
		require.NoError(t, err)
		got := make(chan string)
		go func() {
			defer close(got)
			for c, err := range s.ReadStream(ctx, l.StreamID, 0) {
				if err != nil {
					return
				}
				got <- string(c.Data)
			}
		}()
		for i := range 3 {
			waiting(t, &s.hub)
			_, err := s.AppendChunks(ctx, l, []byte(strconv.Itoa(i)))
			require.NoError(t, err)
			start := time.Now()
			require.Equal(t, strconv.Itoa(i), <-got)
			// No polling, an hour's lease on the fake clock: only the append can
			// have woken the follower without the clock moving.
			require.Equal(t, start, time.Now(), "the follower was not woken by the append")
		}
		require.NoError(t, s.EndStream(ctx, l, store.StreamDone))
		for range got {
		}
	})
}

// waiting returns once every other goroutine of the test's synctest bubble
// is blocked, and checks that someone waits on the hub for a stream, so that
// what the test does next must wake them.
func waiting(t *testing.T, h *backend.Hub) {
	t.Helper()
	synctest.Wait()
	require.NotZero(t, h.Len(), "nobody waits")
}

// increment adds one to the counter document "n" of chat "c", retrying on
// conflicts.
func increment(ctx context.Context, s *Store) error {
	for {
		d, err := s.GetDoc(ctx, "c", "n")
		if errors.Is(err, store.ErrNotFound) {
			d, err = &store.Doc{ChatID: "c", Name: "n"}, nil
		}
		if err != nil {
			return err
		}
		n, _ := strconv.Atoi(string(d.Data))
		d.Data = []byte(strconv.Itoa(n + 1))
		if err := s.PutDoc(ctx, d); !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
}

// hammer increments the counter from goroutines × times, at once.
func hammer(ctx context.Context, s *Store, goroutines, times int) error {
	errs := make(chan error, goroutines)
	for range goroutines {
		go func() {
			for range times {
				if err := increment(ctx, s); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var all []error
	for range goroutines {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// helperEnv names the file a helper process writes (see
// TestHelperProcess).
const helperEnv = "AGENTLOOP_SQLITESTORE_HELPER_DB"

// TestHelperProcess is the other process of TestTwoProcessesShareOneFile:
// it opens the file, says "ready", waits for "go" and increments.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("run by TestTwoProcessesShareOneFile")
	}
	s, err := Open(context.Background(), path, Options{})
	require.NoError(t, err)
	defer s.Close()
	fmt.Println("ready")
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "go\n", line)
	require.NoError(t, hammer(context.Background(), s, 4, 50))
}

func TestTwoProcessesShareOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "chats.db")
	s, err := open(t, path, nil)
	require.NoError(t, err)
	require.NoError(t, s.PutChat(ctx, &store.Chat{ID: "c"}))

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)

	// Both processes write at once from here.
	_, err = stdin.Write([]byte("go\n"))
	require.NoError(t, err)
	require.NoError(t, hammer(ctx, s, 4, 50))
	require.NoError(t, cmd.Wait(), "the other process failed")

	d, err := s.GetDoc(ctx, "c", "n")
	require.NoError(t, err)
	require.Equal(t, "400", string(d.Data), "no increment of either process was lost")
}
