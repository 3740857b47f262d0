package ollama

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// ndjsonReply is a 200 NDJSON stream of body, written line by line and
// flushed after each, as Ollama does.
func ndjsonReply(body []byte) providertest.Reply {
	return providertest.Reply{Header: http.Header{"Content-Type": {"application/x-ndjson"}}, Body: body, Lines: true}
}

// newNDJSONServer serves the given bodies as NDJSON, one per request in
// order, and records the requests; a request more gets a 418.
func newNDJSONServer(t testing.TB, bodies ...[]byte) *providertest.Server {
	t.Helper()
	replies := make([]providertest.Reply, 0, len(bodies)+1)
	for _, b := range bodies {
		replies = append(replies, ndjsonReply(b))
	}
	replies = append(replies, providertest.Reply{Status: http.StatusTeapot, Body: []byte(`{"error":"unexpected request"}`)})
	return providertest.NewServer(t, replies...)
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
