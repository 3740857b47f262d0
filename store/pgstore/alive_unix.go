//go:build unix

package pgstore

import (
	"errors"
	"net"
	"syscall"
)

// peerGone reports whether the server's end of c has closed or has
// something to say although no query is in flight: an idle connection of
// the pool has nothing to read, and a server that ends a connection (a
// restart, pg_terminate_backend) sends an error and closes it. The check
// is one non-blocking peek at the socket, not a round trip; a connection
// it cannot look into (not a socket) counts as sound.
//
// The peek runs under RawConn.Control, not RawConn.Read: pgconn may leave
// a background read pending on an idle connection (it holds the socket's
// read lock until data comes), and Read would wait for that lock. A peek
// does not take the bytes, so it does not disturb that read; should the
// background read have taken the server's farewell first, the peek sees
// the end of the stream that follows it, or nothing yet (then the query
// that uses the connection finds out, as before this check).
func peerGone(c net.Conn) bool {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok { // TLS
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	gone := false
	err = raw.Control(func(fd uintptr) {
		var b [1]byte
		for {
			n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			gone = n > 0 || (n == 0 && err == nil) || (err != nil && !errors.Is(err, syscall.EAGAIN))
			return
		}
	})
	return gone || err != nil
}
