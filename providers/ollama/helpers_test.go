package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// recorded is one request the test server received.
type recorded struct {
	Path string
	Body map[string]any
	Raw  []byte
}

// ndjsonServer serves the given bodies, one per request in order, as
// NDJSON written line by line, and records the requests.
type ndjsonServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
}

func newNDJSONServer(t testing.TB, bodies ...[]byte) *ndjsonServer {
	t.Helper()
	s := &ndjsonServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, recorded{Path: r.URL.Path, Body: body, Raw: raw})
		s.mu.Unlock()
		if n >= len(bodies) {
			http.Error(w, `{"error":"unexpected request"}`, http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		writeLines(w, bodies[n])
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *ndjsonServer) Requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.requests...)
}

// writeLines writes body line by line, flushing after each, as Ollama does.
func writeLines(w http.ResponseWriter, body []byte) {
	f, _ := w.(http.Flusher)
	for line := range bytes.Lines(body) {
		_, _ = w.Write(line)
		if f != nil {
			f.Flush()
		}
	}
}

// clientFor returns an official client for a test server, with no retries.
func clientFor(t testing.TB, srvURL string) *api.Client {
	t.Helper()
	u, err := url.Parse(srvURL)
	require.NoError(t, err)
	return api.NewClient(u, &http.Client{})
}

// reader is one of the two ways a Model reads /api/chat: model returns a
// Model for a test server, with no retries.
type reader struct {
	name  string
	model func(t testing.TB, srvURL string, cfg Config) *Model
}

// readers are this package's own reader (the Model New builds for a host)
// and the official client's Chat (a caller's Config.Client).
var readers = []reader{
	{"own reader", func(t testing.TB, srvURL string, cfg Config) *Model {
		t.Helper()
		if cfg.Model == "" {
			cfg.Model = "qwen3:4b"
		}
		cfg.Host = srvURL
		m, err := newModel(cfg, http.DefaultTransport)
		require.NoError(t, err)
		require.False(t, m.useClient())
		return m
	}},
	{"official client", func(t testing.TB, srvURL string, cfg Config) *Model {
		t.Helper()
		cfg.Client = clientFor(t, srvURL)
		return newTestModel(t, cfg)
	}},
}

// forEachReader runs test once with each reader, as a subtest.
func forEachReader(t *testing.T, test func(t *testing.T, rd reader)) {
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) { test(t, rd) })
	}
}

func newTestModel(t testing.TB, cfg Config) *Model {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "qwen3:4b"
	}
	m, err := New(cfg)
	require.NoError(t, err)
	return m
}

// collected is what a model call yielded, in a form tests compare.
type collected struct {
	Text          string
	Reasoning     string
	TextDeltas    int
	ReasoningDels int
	ReasoningEnds int
	Calls         []agentloop.ToolCall
	Usage         []agentloop.Usage
	Finish        []agentloop.FinishReason
	Kinds         []string // chunk kinds in order, runs of the same kind folded
	Err           error
	ErrIndex      int // position of the error among all elements
}

func collect(seq func(func(agentloop.Chunk, error) bool)) collected {
	var c collected
	n := 0
	for chunk, err := range seq {
		if err != nil {
			c.Err, c.ErrIndex = err, n
			n++
			continue
		}
		n++
		var kind string
		switch ch := chunk.(type) {
		case agentloop.TextDelta:
			kind = "text"
			c.Text += ch.Text
			c.TextDeltas++
		case agentloop.ReasoningDelta:
			kind = "reasoning"
			c.Reasoning += ch.Text
			c.ReasoningDels++
		case agentloop.ReasoningEnd:
			kind = "reasoning_end"
			c.ReasoningEnds++
		case agentloop.ToolCall:
			kind = "tool_call"
			c.Calls = append(c.Calls, ch)
		case agentloop.Usage:
			kind = "usage"
			c.Usage = append(c.Usage, ch)
		case agentloop.Finish:
			kind = "finish"
			c.Finish = append(c.Finish, ch.Reason)
		default:
			kind = "unknown"
		}
		if len(c.Kinds) == 0 || c.Kinds[len(c.Kinds)-1] != kind {
			c.Kinds = append(c.Kinds, kind)
		}
	}
	return c
}

func userRequest(text string) *agentloop.Request {
	return &agentloop.Request{Turn: 1, Messages: agentloop.History{agentloop.UserMessage(text)}}
}

func stream(m *Model, req *agentloop.Request) collected {
	return collect(m.Stream(context.Background(), req))
}

func lines(s ...string) []byte {
	return []byte(strings.Join(s, "\n") + "\n")
}
