package openairesponses_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/openairesponses"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// vercelResponses frames the vercel .chunks.jsonl fixture as its sidecar
// says ("event: <type>\ndata: L\n\n" per line) and splits it into one body
// per response (each starts with response.created).
func vercelResponses(t testing.TB) [][]byte {
	t.Helper()
	raw := fixture(t, "vercel-reasoning-encrypted-four-responses.chunks.jsonl")
	var bodies [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &head))
		if head.Type == "response.created" && cur.Len() > 0 {
			bodies = append(bodies, bytes.Clone(cur.Bytes()))
			cur.Reset()
		}
		cur.WriteString("event: " + head.Type + "\ndata: " + line + "\n\n")
	}
	require.NoError(t, sc.Err())
	return append(bodies, cur.Bytes())
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

func (s *server) request(t testing.TB, i int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Less(t, i, len(s.requests))
	var v map[string]any
	require.NoError(t, json.Unmarshal(s.requests[i], &v))
	return v
}

func newModel(t testing.TB, baseURL string) *openairesponses.Model {
	t.Helper()
	m, err := openairesponses.New(openairesponses.Config{Model: "gpt-test", BaseURL: baseURL, APIKey: "sk-test"})
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

func userReq() *agentloop.Request {
	return &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("hi")}}
}

// summary is what a stream amounts to.
type summary struct {
	Text, Reasoning string
	TextDeltas      int
	ReasoningDeltas int
	ReasoningEnds   []agentloop.ReasoningEnd
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
		case agentloop.ReasoningEnd:
			s.ReasoningEnds = append(s.ReasoningEnds, c)
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

// textBody is a small valid stream: "Hello", usage 3/2, completed.
const textBody = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n" +
	"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"msg_1\"}}\n\n" +
	"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hel\"}\n\n" +
	"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"lo\"}\n\n" +
	"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"msg_1\"}}\n\n" +
	completed

const completed = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":3,\"output_tokens\":2}}}\n\n"
