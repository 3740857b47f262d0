//go:build unix

package pgstore

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// loopbackPair returns the two ends of a TCP connection on loopback.
func loopbackPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server, ok := <-accepted
	require.True(t, ok, "accept failed")
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// An idle connection is sound; one whose server sent something unasked or
// closed its end is gone.
func TestPeerGone_TellsAnIdleConnectionFromAnEndedOne(t *testing.T) {
	c, s := loopbackPair(t)
	require.False(t, peerGone(c), "an idle connection")

	_, err := s.Write([]byte("E")) // a server's farewell: an error message
	require.NoError(t, err)
	for !peerGone(c) { // loopback delivers it at once
	}

	c2, s2 := loopbackPair(t)
	require.NoError(t, s2.Close())
	for !peerGone(c2) {
	}
}

// pgconn may leave a background read pending on an idle pooled
// connection; the look does not wait for it (it did, with the socket's
// read lock, and a query waited forever under load).
func TestPeerGone_DoesNotWaitForAPendingRead(t *testing.T) {
	c, s := loopbackPair(t)
	reading := make(chan struct{})
	read := make(chan error, 1)
	go func() {
		close(reading)
		_, err := c.Read(make([]byte, 1))
		read <- err
	}()
	<-reading
	require.False(t, peerGone(c), "an idle connection with a read pending")
	_, err := s.Write([]byte("x")) // ends the pending read
	require.NoError(t, err)
	require.NoError(t, <-read)
}
