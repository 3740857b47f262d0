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
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = n > 0 || (n == 0 && err == nil) || (err != nil && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EINTR))
		return true
	})
	return gone || err != nil
}
