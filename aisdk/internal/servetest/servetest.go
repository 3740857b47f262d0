// Package servetest has the test helpers that aisdk's stored-mode tests and
// its load tests (aisdk/internal/loadtest, a module of its own) share: a
// server tool that waits at a gate, and a ChatServer served over httptest.
//
// It is for tests only; every helper fails the test it is given instead of
// returning an error.
package servetest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/store"
)

// Gate is a server tool whose calls wait until the gate opens (or the call
// is cancelled, which ends it with the context's error). Its methods and
// fields are safe for concurrent use.
type Gate struct {
	// Tool is the tool, named wait_for_it; an opened gate answers each call
	// with {"waited":true}.
	Tool *agentloop.Tool
	// Started gets a value as each call begins; it holds 16 values, and a
	// call blocks until there is room for its own.
	Started chan struct{}

	open chan struct{}
	once sync.Once
}

// NewGate returns a closed gate.
func NewGate(t testing.TB) *Gate {
	t.Helper()
	g := &Gate{open: make(chan struct{}), Started: make(chan struct{}, 16)}
	tool, err := agentloop.NewRawTool("wait_for_it", "Waits.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		g.Started <- struct{}{}
		select {
		case <-g.open:
			return `{"waited":true}`, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Tool = tool
	return g
}

// Open opens the gate for the calls waiting and all later ones; it may be
// called more than once.
func (g *Gate) Open() { g.once.Do(func() { close(g.open) }) }

// Replica is one server of a chat store.
type Replica struct {
	// Server is the chat server.
	Server *aisdk.ChatServer
	// HTTP serves Server.Routes("/api").
	HTTP *httptest.Server
}

// ChatURL is the URL of the replica's chat route.
func (r Replica) ChatURL() string { return r.HTTP.URL + "/api/chat" }

// NewReplica serves model and tools on st, with Routes("/api"), a logger
// that discards and no keep-alive comments. When the test ends, the server
// shuts down (its runs in progress end; an error of Shutdown fails the
// test), then the HTTP server closes.
func NewReplica(t testing.TB, st aisdk.ChatStore, model agentloop.Model, tools ...*agentloop.Tool) Replica {
	t.Helper()
	h := &aisdk.ChatServer{
		Agent:     &agentloop.Agent{Model: model, Tools: tools},
		Store:     st,
		Logger:    slog.New(slog.DiscardHandler),
		KeepAlive: -1,
	}
	srv := httptest.NewServer(h.Routes("/api"))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { // first: the runs in progress end, so Close need not wait for them
		if err := h.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return Replica{Server: h, HTTP: srv}
}

// History returns the stored history of chat id; it fails the test if the
// chat cannot be read.
func History(t testing.TB, st store.Chats, id string) agentloop.History {
	t.Helper()
	c, err := st.GetChat(context.Background(), id)
	if err != nil {
		t.Fatalf("chat %q: %v", id, err)
	}
	return c.History
}
