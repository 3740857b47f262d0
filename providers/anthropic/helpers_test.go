package anthropic_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixtureBody returns a recorded response body as SSE. A vercel
// .chunks.jsonl file is framed as its sidecar says: "event: <L.type>\ndata:
// L\n\n" per line.
var fixtureBody = providertest.Framing{Event: true}.Fixture

func newModel(t testing.TB, baseURL string) *anthropic.Model {
	t.Helper()
	return provider.New(t, baseURL, 0).(*anthropic.Model)
}

// provider is this package to the providertest conformance tests.
var provider = providertest.Provider{
	Name: "anthropic",
	New: func(t testing.TB, baseURL string, maxAttempts int) agentloop.Model {
		t.Helper()
		m, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: baseURL, APIKey: "sk-ant-test", MaxAttempts: maxAttempts})
		require.NoError(t, err)
		return m
	},
	SetRetrySleep: func(m agentloop.Model, sleep func(context.Context, time.Duration) error) {
		anthropic.SetRetrySleep(m.(*anthropic.Model), sleep)
	},
	Path:           "/v1/messages",
	Text:           []byte(textBody),
	Partial:        []byte(firstDelta),
	Malformed:      []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n"),
	EndedEarly:     "anthropic: the server ended the stream before message_stop: unexpected EOF",
	LostConnection: "anthropic: reading the stream failed (connection lost?)",
}
