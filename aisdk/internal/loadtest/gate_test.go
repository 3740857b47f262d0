package loadtest_test

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

// gate is a server tool whose calls wait until the gate opens (or the call
// is cancelled); started gets a value as each call begins. (aisdk's own
// tests have the same helper; a test package cannot share it across
// modules.)
type gate struct {
	tool    *agentloop.Tool
	open    chan struct{}
	once    sync.Once
	started chan struct{}
}

func newGate(t *testing.T) *gate {
	t.Helper()
	g := &gate{open: make(chan struct{}), started: make(chan struct{}, 16)}
	tool, err := agentloop.NewRawTool("wait_for_it", "Waits.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		g.started <- struct{}{}
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
	g.tool = tool
	return g
}

// Open opens the gate; it may be called more than once.
func (g *gate) Open() { g.once.Do(func() { close(g.open) }) }

// replica is one server of a chat store.
type replica struct {
	h   *aisdk.Handler
	srv *httptest.Server
}

func (r replica) chatURL() string { return r.srv.URL + "/api/chat" }

// newReplica serves model and tools on st, with Routes("/api").
func newReplica(t *testing.T, st aisdk.ChatStore, model agentloop.Model, tools ...*agentloop.Tool) replica {
	t.Helper()
	h := &aisdk.Handler{
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
	return replica{h: h, srv: srv}
}

// history returns the stored history of chat id.
func history(t *testing.T, st store.Chats, id string) agentloop.History {
	t.Helper()
	c, err := st.GetChat(context.Background(), id)
	if err != nil {
		t.Fatalf("chat %q: %v", id, err)
	}
	return c.History
}

func chunkType(data json.RawMessage) string {
	var c struct{ Type string }
	_ = json.Unmarshal(data, &c)
	return c.Type
}
