//go:build !unix

package pgstore

import "net"

// peerGone reports false: without a way to peek at the socket, a broken
// connection is found by the query that uses it (reconnect.go).
func peerGone(net.Conn) bool { return false }
