// Package pipenet serves HTTP on in-memory connections (net.Pipe) for
// aisdk's tests. A server on it can run in a testing/synctest bubble: its
// reads, writes and deadlines block durably and follow the bubble's fake
// clock, which a loopback socket's do not.
package pipenet

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
)

// Listener is a net.Listener whose connections are net.Pipes made by
// [Listener.Dial]. Its methods are safe for concurrent use.
type Listener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewListener returns a Listener open for connections.
func NewListener() *Listener {
	return &Listener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for the server's end of the next Dial; after Close it
// returns net.ErrClosed.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Dial; it may be called more than once.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr returns 127.0.0.1:80, the address that the server's end of every
// connection reports as its local one.
func (l *Listener) Addr() net.Addr { return serverAddr }

// Dial returns the client's end of a new connection, once Accept took the
// server's end.
func (l *Listener) Dial(ctx context.Context) (net.Conn, error) {
	c, s := net.Pipe()
	client, server := loopbackConn{c, clientAddr}, loopbackConn{s, serverAddr}
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// The connections report loopback TCP addresses, so that a server that
// serves loopback connections only (aisdk.LoopbackOnly) serves them.
var (
	serverAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}
	clientAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}
)

// loopbackConn is one end of a net.Pipe with loopback addresses.
type loopbackConn struct {
	net.Conn
	local net.Addr
}

func (c loopbackConn) LocalAddr() net.Addr { return c.local }

func (c loopbackConn) RemoteAddr() net.Addr {
	if c.local == serverAddr {
		return clientAddr
	}
	return serverAddr
}

// Serve serves h on a new Listener until t ends and returns the listener
// and a client whose connections go to it (any URL's host; a server
// that serves loopback only wants 127.0.0.1 or localhost). Called inside
// the bubble of synctest.Test, its cleanup closes the server and the
// client's idle connections there, so that the bubble's goroutines end.
func Serve(t testing.TB, h http.Handler) (*Listener, *http.Client) {
	l := NewListener()
	srv := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return l.Dial(ctx) },
	}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = srv.Close()
		<-served
	})
	return l, &http.Client{Transport: tr}
}
