package openai_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixtureBody returns a recorded response body as SSE. A vercel
// .chunks.jsonl file is framed as its sidecar says: "data: L\n\n" per line,
// then "data: [DONE]\n\n".
func fixtureBody(t testing.TB, name string) []byte {
	t.Helper()
	if strings.HasSuffix(name, ".chunks.jsonl") {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		var b bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				b.WriteString("data: " + line + "\n\n")
			}
		}
		require.NoError(t, sc.Err())
		b.WriteString("data: [DONE]\n\n")
		return b.Bytes()
	}
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return raw
}

// server serves bodies in turn (the last one again when they run out) and
// records each request body.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests [][]byte
	headers  []http.Header
}

func newServer(t testing.TB, bodies ...[]byte) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, b)
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(bodies[min(n, len(bodies)-1)])
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) request(i int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i]
}

func newModel(t testing.TB, baseURL string) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: baseURL, APIKey: "sk-test"})
	require.NoError(t, err)
	return m
}

// collect runs one Stream and returns its chunks and final error.
func collect(m agentloop.Model, req *agentloop.Request) ([]agentloop.Chunk, error) {
	var out []agentloop.Chunk
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// summary is what a stream amounts to.
type summary struct {
	Text, Reasoning string
	TextDeltas      int
	ReasoningDeltas int
	Calls           []agentloop.ToolCall
	ArgFragments    map[int]int // non-empty fragments per call index
	Usage           []agentloop.Usage
	Finish          []agentloop.FinishReason
	LastIsFinish    bool
}

func summarize(chunks []agentloop.Chunk) summary {
	s := summary{ArgFragments: map[int]int{}}
	for _, c := range chunks {
		switch c := c.(type) {
		case agentloop.TextDelta:
			s.Text += c.Text
			s.TextDeltas++
		case agentloop.ReasoningDelta:
			s.Reasoning += c.Text
			s.ReasoningDeltas++
		case agentloop.ToolCallDelta:
			if c.Args != "" {
				s.ArgFragments[c.Index]++
			}
		case agentloop.ToolCall:
			s.Calls = append(s.Calls, c)
		case agentloop.Usage:
			s.Usage = append(s.Usage, c)
		case agentloop.Finish:
			s.Finish = append(s.Finish, c.Reason)
		}
	}
	if len(chunks) > 0 {
		_, s.LastIsFinish = chunks[len(chunks)-1].(agentloop.Finish)
	}
	return s
}
