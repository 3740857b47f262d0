// Package pgstore is a [store.Store] in PostgreSQL, for several replicas
// of a server sharing their conversations. It uses pgx (a pgxpool.Pool),
// is tested with PostgreSQL 15 and uses nothing newer than 12.
//
// Every write is one statement or one short transaction; versions are
// checked in the statement's WHERE clause, so concurrent writers on any
// replica get a [store.ConflictError], never a lost update. Stream logs
// are rows; a change to a stream (a chunk, its end, a stop request) sends
// a NOTIFY on the channel agentloop_streams with the stream's id, which
// each Store LISTENs to on a connection of its own and relays to its
// followers and stop waiters. Should a notification be lost (the listening
// connection dropped), they re-read every [Options.PollInterval] anyway.
//
// Leases and timestamps use the database's clock by default, so replicas
// agree on when a lease expires whatever their own clocks say.
//
// The tables are prefixed agentloop_ and live in the schema named by
// [Options.Schema] (or the connection's search_path); agentloop_schema
// records the schema version, and [Open] migrates to the current one.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/internal/backend"
)

// channel is the NOTIFY channel that carries the ids of changed streams.
const channel = "agentloop_streams"

// Options configure a [Store]. The zero value is ready to use.
type Options struct {
	// Schema is the PostgreSQL schema that holds the tables, made if
	// missing; "" uses the connection's search_path (usually public).
	Schema string
	// Now is the store's clock, for timestamps and leases; nil means the
	// database's clock (now()), which replicas share. Tests pass a
	// settable clock to expire leases.
	Now func() time.Time
	// PollInterval is how often followers and stop waiters re-read a
	// stream in case a notification was lost; 0 means 2s.
	PollInterval time.Duration

	// noListen turns notifications off, for tests of the poll.
	noListen bool
}

// Store is a [store.Store] in PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	now    func() time.Time // nil: the database's clock
	hub    backend.Hub
	waiter backend.Waiter
	closed atomic.Bool

	stopListening context.CancelFunc
	listening     sync.WaitGroup
	listenPID     atomic.Uint32 // the listening connection's backend, for tests
}

var _ store.Store = (*Store)(nil)

// Open connects to the database (a pgx connection string: a URL such as
// postgres://user@host/db or key=value pairs; pool settings such as
// pool_max_conns go there too), migrates its schema and starts listening
// for stream notifications on a connection of its own.
func Open(ctx context.Context, connString string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if opts.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{opts.Schema}.Sanitize()
	}
	// A connection the server has ended is dropped, not handed out
	// (reconnect.go).
	cfg.PrepareConn = func(_ context.Context, c *pgx.Conn) (bool, error) {
		return !c.IsClosed() && !peerGone(c.PgConn().Conn()), nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if err := migrate(ctx, pool, opts.Schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	poll := opts.PollInterval
	if poll <= 0 {
		poll = 2 * time.Second
	}
	s := &Store{pool: pool, now: opts.Now}
	clock := opts.Now
	if clock == nil {
		clock = time.Now
	}
	s.waiter = backend.Waiter{Hub: &s.hub, Poll: poll, Now: clock}

	listenCtx, stop := context.WithCancel(context.Background())
	s.stopListening = stop
	if !opts.noListen {
		conn, err := s.listen(ctx)
		if err != nil {
			stop()
			pool.Close()
			return nil, fmt.Errorf("pgstore: %w", err)
		}
		s.listening.Go(func() { s.relay(listenCtx, conn) })
	}
	return s, nil
}

// listen opens a connection of its own (not the pool's) that LISTENs to the
// stream channel.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("listening for stream changes: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("listening for stream changes: %w", err)
	}
	s.listenPID.Store(conn.PgConn().PID())
	return conn, nil
}

// relay hands each notification to the hub until ctx ends. When the
// connection fails it reconnects, backing off up to the poll interval, and
// wakes every waiter, who may have missed a notification meanwhile.
func (s *Store) relay(ctx context.Context, conn *pgx.Conn) {
	backoff := 10 * time.Millisecond
	for {
		if conn != nil {
			for {
				n, err := conn.WaitForNotification(ctx)
				if err != nil {
					break
				}
				backoff = 10 * time.Millisecond
				s.hub.Notify(n.Payload)
			}
			_ = conn.Close(context.Background())
			conn = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, s.waiter.Poll)
		var err error
		if conn, err = s.listen(ctx); err == nil {
			s.hub.NotifyAll()
		}
	}
}

// Pool returns the store's connection pool, for an application that
// wants to share it. Closing the store closes it.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close stops listening and closes the pool. Calls made after it fail with
// [store.ErrClosed], and streams being followed end with it. Closing twice
// is not an error.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stopListening()
	s.listening.Wait()
	s.hub.Close()
	s.pool.Close()
	return nil
}

// clockArg is the $n that SQL turns into the store's time with
// coalesce($n::timestamptz, now()): the store's clock, or NULL for the
// database's.
func (s *Store) clockArg() any {
	if s.now == nil {
		return nil
	}
	return backend.Micro(s.now())
}

// check returns the error of a call made with ctx now.
func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return ctx.Err()
}

// fail wraps a database error of the operation op; once the store is
// closed, every failure is ErrClosed. A lost connection (connLost) empties
// the pool: the others broke too, as a rule (reconnect.go).
func (s *Store) fail(op string, err error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if connLost(err) {
		s.pool.Reset()
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}

// pgCode returns the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// SQLSTATEs the store tells apart.
const (
	foreignKeyViolation = "23503"
	uniqueViolation     = "23505"
)

func utc(t time.Time) time.Time { return t.UTC() }

func notFound(what, id string) error {
	return fmt.Errorf("%w: %s %q", store.ErrNotFound, what, id)
}
