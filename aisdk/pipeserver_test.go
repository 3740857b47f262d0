package aisdk

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
)

// pipeListener is a net.Listener whose connections are in-memory
// net.Pipes. A server on it can run in a testing/synctest bubble, where
// its reads and deadlines block durably and follow the bubble's fake
// clock, which a loopback socket does not.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// Dial returns the client's end of a new connection to the server.
func (l *pipeListener) Dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// newPipeServer serves h on a pipeListener until t ends and returns the
// listener and a client whose connections go to it. Call it inside the
// bubble of synctest.Test: the cleanup closes the server and the client's
// idle connections there, so every goroutine of the bubble ends.
func newPipeServer(t *testing.T, h http.Handler) (*pipeListener, *http.Client) {
	l := newPipeListener()
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
