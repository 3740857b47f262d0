// Package sqlitestore is a [store.Store] in one SQLite file, the embedded
// default: it needs nothing installed (modernc.org/sqlite is SQLite in pure
// Go) and keeps everything in one file (plus SQLite's -wal and -shm files
// beside it while open).
//
// The database runs in WAL mode, so readers never wait for the writer.
// Within a process all writes go through one connection, one transaction
// at a time; several processes may open the same file, and SQLite's own
// file locking (with a busy timeout) serializes their writes. It is not for
// network file systems.
//
// Followers of a stream and stop waiters are woken at once by writes made
// through the same [Store]; writes made by another process (or another
// Store on the same file) are seen at the next poll, every
// [Options.PollInterval].
//
// The tables are prefixed agentloop_ and can share a file with an
// application's own; agentloop_schema records the schema version, and
// [Open] migrates the file to the current one.
package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // and the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/internal/backend"
)

// Options configure a [Store]. The zero value is ready to use.
type Options struct {
	// Now is the store's clock, for timestamps and leases; nil means
	// time.Now. Processes sharing a file compare leases across their
	// clocks, so keep them synchronized.
	Now func() time.Time
	// PollInterval is how often followers and stop waiters re-read a
	// stream to see writes of other processes; 0 means 200ms, and a
	// negative value never polls (only this Store writes the file).
	PollInterval time.Duration
	// BusyTimeout is how long a write waits for another process's write
	// lock before it fails; 0 means 10s.
	BusyTimeout time.Duration
}

// readers is the most connections that read at once.
const readers = 8

// Store is a [store.Store] in an SQLite file. It is safe for concurrent use.
type Store struct {
	path   string
	now    func() time.Time
	w      *sql.DB // one connection: this process's writes, one at a time
	r      *sql.DB // readers
	hub    backend.Hub
	waiter backend.Waiter
	closed atomic.Bool
}

var _ store.Store = (*Store)(nil)

// Open opens the SQLite database at path, creating it (mode 0600) if it
// does not exist, and migrates its schema. The directory must exist.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlitestore: %w: empty path", store.ErrInvalid)
	}
	// Made here so that the file, and the -wal and -shm files SQLite gives
	// the same mode, are private.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	_ = f.Close()

	busy := opts.BusyTimeout
	if busy == 0 {
		busy = 10 * time.Second
	}
	poll := opts.PollInterval
	switch {
	case poll == 0:
		poll = 200 * time.Millisecond
	case poll < 0:
		poll = 0
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}

	w, err := sql.Open("sqlite", dsn(path, busy, "&_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	w.SetMaxOpenConns(1)
	r, err := sql.Open("sqlite", dsn(path, busy, "&_pragma=query_only(1)"))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	// Readers (followers poll) keep their connections rather than open
	// new ones, each with its pragmas, as they come and go.
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	s := &Store{path: path, now: now, w: w, r: r}
	s.waiter = backend.Waiter{Hub: &s.hub, Poll: poll, Now: now}
	if err := migrateWhenFree(ctx, w, busy); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("sqlitestore: %s: %w", path, err)
	}
	return s, nil
}

// migrateWhenFree migrates the schema, trying again for up to busy while
// the file is locked. The first connections to a new file contend for the
// switch to WAL, and SQLite answers the losers SQLITE_BUSY at once rather
// than after the busy timeout (which it waits out only for ordinary
// locks), so concurrent Opens of a new file need this.
func migrateWhenFree(ctx context.Context, db *sql.DB, busy time.Duration) error {
	deadline := time.Now().Add(busy)
	wait := time.Millisecond
	for {
		err := migrate(ctx, db)
		if !isBusy(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (the primary code,
// whatever the extended one).
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// dsn returns the driver's name for the file, with the settings every
// connection gets. They are _pragma parameters, which every release of the
// driver runs on each new connection; the driver ignores keys it does not
// know, so the shorter keys of its newest releases (_foreign_keys, …) would
// silently leave an older one's connections without them.
func dsn(path string, busy time.Duration, extra string) string {
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath()}
	return u.String() + "?_pragma=busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)" + extra
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database. Calls made after it fail with
// [store.ErrClosed], and streams being followed end with it. Closing twice
// is not an error.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.hub.Close()
	return errors.Join(s.w.Close(), s.r.Close())
}

// clock returns the store's time as kept: Unix microseconds.
func (s *Store) clock() int64 { return s.now().UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// check returns the error of a call made with ctx now.
func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return ctx.Err()
}

// fail wraps a database error of the operation op; once the store is
// closed, every failure is ErrClosed.
func (s *Store) fail(op string, err error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return fmt.Errorf("sqlitestore: %s: %w", op, err)
}

// write runs fn in a write transaction (which holds the file's write lock
// from its start) and commits it if fn returns nil. Errors of fn that are
// the store's own (not found, conflicts…) are returned as they are.
func (s *Store) write(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		var dbErr *dbError
		if errors.As(err, &dbErr) {
			return s.fail(op, dbErr.err)
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.fail(op, err)
	}
	return nil
}

// dbError marks an error of the database, as opposed to the store's own
// errors, inside a transaction's func.
type dbError struct{ err error }

func (e *dbError) Error() string { return e.err.Error() }

func (e *dbError) Unwrap() error { return e.err }

// db marks err, if any, as an error of the database.
func db(err error) error {
	if err == nil {
		return nil
	}
	return &dbError{err}
}

// nextVersion draws the next version from the store-wide sequence.
func nextVersion(ctx context.Context, tx *sql.Tx) (int64, error) {
	var v int64
	err := tx.QueryRowContext(ctx, `UPDATE agentloop_seq SET n = n + 1 RETURNING n`).Scan(&v)
	return v, db(err)
}

func notFound(what, id string) error {
	return fmt.Errorf("%w: %s %q", store.ErrNotFound, what, id)
}
