package mcptools_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop/mcptools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// authServer serves the fake over streamable HTTP behind a bearer token,
// and can "restart": forget every session, as a new process would.
type authServer struct {
	f        *fake
	handler  atomic.Pointer[mcp.StreamableHTTPHandler]
	mu       sync.Mutex
	requests int
	refused  []string // METHOD of each request without the token
}

func newAuthServer(t *testing.T, f *fake) (*authServer, *httptest.Server) {
	a := &authServer{f: f}
	a.restart()
	ts := httptest.NewServer(a)
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if len(a.refused) > 0 {
			t.Errorf("requests without the header: %v", a.refused)
		}
		if a.requests == 0 {
			t.Error("no request reached the server")
		}
	})
	return a, ts
}

func (a *authServer) restart() {
	for ss := range a.f.srv.Sessions() {
		ss.Close()
	}
	a.handler.Store(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return a.f.srv }, nil))
}

func (a *authServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.requests++
	ok := r.Header.Get("Authorization") == "Bearer s3cret"
	if !ok {
		a.refused = append(a.refused, r.Method)
	}
	a.mu.Unlock()
	if !ok {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	a.handler.Load().ServeHTTP(w, r)
}

func TestHTTPHeaderHookSetsEveryRequestsHeaders(t *testing.T) {
	f := newFake(t, nil)
	_, ts := newAuthServer(t, f)
	var hooked atomic.Int32
	dial := mcptools.HTTP(ts.URL, mcptools.HTTPOptions{Header: func(r *http.Request) error {
		hooked.Add(1)
		r.Header.Set("Authorization", "Bearer s3cret")
		return nil
	}})
	s, err := mcptools.NewServer(dial, mcptools.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res := resultOf(t, run(t, context.Background(), tools, "echo", map[string]any{"text": "over http"}))
	if res.IsError || res.Content != "over http" {
		t.Fatalf("result = %+v", res)
	}
	if hooked.Load() < 3 {
		t.Errorf("the hook ran %d times; want it on every request", hooked.Load())
	}
}

func TestHTTPHeaderHookErrorFailsTheConnection(t *testing.T) {
	f := newFake(t, nil)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.srv }, nil))
	defer ts.Close()
	dial := mcptools.HTTP(ts.URL, mcptools.HTTPOptions{Header: func(*http.Request) error {
		return errors.New("token expired")
	}})
	s, err := mcptools.NewServer(dial, mcptools.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "token expired") {
		t.Fatalf("Tools: %v; want the hook's error", err)
	}
}

func TestHTTPServerThatForgotTheSessionGetsTheCallOnANewOne(t *testing.T) {
	f := newFake(t, nil)
	a, ts := newAuthServer(t, f)
	dial := mcptools.HTTP(ts.URL, mcptools.HTTPOptions{Header: func(r *http.Request) error {
		r.Header.Set("Authorization", "Bearer s3cret")
		return nil
	}})
	s, err := mcptools.NewServer(dial, mcptools.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.restart()
	res := resultOf(t, run(t, context.Background(), tools, "echo", map[string]any{"text": "still here"}))
	if res.IsError || res.Content != "still here" {
		t.Fatalf("call after the server forgot the session: %+v; want it made on a new session", res)
	}
}
