package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/syncbuf"
)

// The server bounds what a slow client can hold (headers, idle
// connections) but not a streamed answer (no read or write timeout).
func TestHTTPServer_TimeoutsSuitStreamedAnswers(t *testing.T) {
	srv := httpServer(http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("ReadHeaderTimeout %v, IdleTimeout %v: both must be set", srv.ReadHeaderTimeout, srv.IdleTimeout)
	}
	if srv.ReadTimeout != 0 || srv.WriteTimeout != 0 {
		t.Errorf("ReadTimeout %v, WriteTimeout %v: either would cut a streamed answer", srv.ReadTimeout, srv.WriteTimeout)
	}
}

// The chats have no owners: a server on an address other than loopback
// would open them to anyone, so it refuses to start without -public.
func TestRun_RefusesANonLoopbackAddressWithoutPublic(t *testing.T) {
	err := run(context.Background(), []string{"-addr", "0.0.0.0:0", "-db", memoryDB}, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "-public") {
		t.Errorf("run: %v, want an error that names -public", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"-addr", "0.0.0.0:0", "-db", memoryDB, "-public"}, io.Discard, ready)
	}()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("with -public: %v", err)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Error(err)
	}
}

// The chat API refuses what a page of another origin could send, and logs
// the failures it hides from the page.
func TestChat_RefusesCrossOriginAndNonJSONBodies(t *testing.T) {
	var logs syncbuf.Buffer
	h := newTestServer(t, config{script: writeScript(t, `{"turns":[{"reply":[{"error":"db at /srv/app.db is locked"}]}]}`)}, &logs)
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := `{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}]}`
	post := func(contentType, origin string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/chat", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := post("text/plain", ""); code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: status %d, want 415", code)
	}
	if code, _ := post("application/json", "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("another origin: status %d, want 403", code)
	}
	code, stream := post("application/json", srv.URL)
	if code != http.StatusOK || !strings.Contains(stream, "The simulated model failed: db at /srv/app.db is locked") {
		t.Errorf("same origin: status %d, stream %s", code, stream)
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "app.db is locked") {
		t.Errorf("the server log lacks the run's error: %s", logs.String())
	}
}

// writeScript writes a simtest script to a temporary file.
func writeScript(t *testing.T, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
