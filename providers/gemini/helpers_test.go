package gemini_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/gemini"
)

// reply is one answer of the fake server.
type reply struct {
	status int
	header http.Header
	body   string
	cut    bool // abort the connection after the body, mid-stream
}

// server is a fake Gemini API: it answers streamGenerateContent?alt=sse
// with the queued replies in order (the last one repeats) and records what
// it was sent.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	bodies  []string
	urls    []string
	keys    []string
}

func newServer(t testing.TB, replies ...reply) *server {
	s := &server{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, string(body))
		s.urls = append(s.urls, r.URL.String())
		s.keys = append(s.keys, r.Header.Get("x-goog-api-key"))
		rep := s.replies[min(len(s.bodies), len(s.replies))-1]
		s.mu.Unlock()
		for k, v := range rep.header {
			w.Header()[k] = v
		}
		if rep.status != 0 && rep.status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.status)
			io.WriteString(w, rep.body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, rep.body)
		w.(http.Flusher).Flush()
		if rep.cut {
			panic(http.ErrAbortHandler)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) request(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

// sse frames JSON payloads as the API streams them.
func sse(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\r\n\r\n")
	}
	return b.String()
}

// fixture reads a recorded stream (one payload a line) and frames it as SSE.
func fixture(t testing.TB, name string) string {
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return sse(strings.Split(strings.TrimSpace(string(raw)), "\n")...)
}

func newModel(t testing.TB, url string, edit ...func(*gemini.Config)) *gemini.Model {
	cfg := gemini.Config{Model: "gemini-test", APIKey: "test-key", BaseURL: url}
	for _, e := range edit {
		e(&cfg)
	}
	m, err := gemini.New(context.Background(), cfg)
	require.NoError(t, err)
	gemini.SetRetrySleep(m, func(ctx context.Context, d time.Duration) error { return ctx.Err() })
	return m
}

func collect(m agentloop.Model, req *agentloop.Request) ([]agentloop.Chunk, error) {
	var chunks []agentloop.Chunk
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, c)
	}
	return chunks, nil
}

func hi() *agentloop.Request {
	return &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("hi")}}
}
