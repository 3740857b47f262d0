package pgstore

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A database restart (or a network cut) breaks every pooled connection at
// once, while the pool would hand them out as if they were sound until
// each fails a query. Three things keep a caller from seeing it:
//
//   - Before a pooled connection is handed out, one non-blocking peek at
//     its socket (peerGone, in the pool's PrepareConn) finds a connection
//     the server has ended (a restarting server sends an error and closes
//     its end); the pool drops it and takes or makes another, so no query
//     is sent on it.
//   - A failure that tells of a lost connection (connLost) empties the
//     pool (fail calls pool.Reset), so that the next calls connect anew.
//   - A read that failed so is done again (retry), while the database
//     comes back: a reader sees a delay, not an error. A write is done
//     again only when nothing of it was sent (unsent: the connection could
//     not be made, or broke before the query went out); one sent on a
//     connection that then broke may have been done, so its error stays.

// Bounds of retryRead's waits between attempts, and of its attempts.
const (
	retryFirst    = 50 * time.Millisecond
	retryMax      = time.Second
	retryAttempts = 40 // about half a minute with retryMax
)

// connLost reports whether err says that the connection to the database
// broke or could not be made, rather than that the database refused the
// query.
func connLost(err error) bool {
	switch pgCode(err) {
	case "57P01", "57P02", "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
		"08000", "08003", "08006", "08001", "08004": // connection_exception and its kinds
		return true
	case "":
	default:
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) || (errors.As(err, &netErr) && !netErr.Timeout())
}

// unsent reports whether err came before any byte of the query was sent:
// the connection could not be made, or pgconn says so.
func unsent(err error) bool {
	var connectErr *pgconn.ConnectError
	return errors.As(err, &connectErr) || pgconn.SafeToRetry(err)
}

// retryRead calls read until it succeeds, fails otherwise than by a lost
// connection (connLost), ctx is done, the store is closed or
// retryAttempts calls failed, waiting longer after each failure; it
// returns read's last error.
func (s *Store) retryRead(ctx context.Context, read func() error) error {
	return s.retry(ctx, false, read)
}

// retryWrite is retryRead for a write: it calls write again only after a
// failure that sent nothing (unsent).
func (s *Store) retryWrite(ctx context.Context, write func() error) error {
	return s.retry(ctx, true, write)
}

// retry is retryRead, or retryWrite when write is true.
func (s *Store) retry(ctx context.Context, write bool, op func() error) error {
	wait := retryFirst
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !connLost(err) || (write && !unsent(err)) || attempt == retryAttempts || s.closed.Load() {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
	}
}
