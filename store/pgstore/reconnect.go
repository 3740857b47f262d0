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
// once, while the pool hands them out as if they were sound until each
// fails a query. The store tells such a failure apart (connLost), empties
// the pool then (fail calls pool.Reset, so that the next calls connect
// anew), and does again a read that failed so (retryRead), while the
// database comes back: a reader sees a delay, not an error. A write is not
// done again, since it may have been done before the connection broke.

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

// retryRead calls read until it succeeds, fails otherwise than by a lost
// connection (connLost), ctx is done, the store is closed or
// retryAttempts calls failed, waiting longer after each failure; it
// returns read's last error.
func (s *Store) retryRead(ctx context.Context, read func() error) error {
	wait := retryFirst
	for attempt := 1; ; attempt++ {
		err := read()
		if err == nil || !connLost(err) || attempt == retryAttempts || s.closed.Load() {
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
