package openai_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixtureBody returns a recorded response body as SSE. A vercel
// .chunks.jsonl file is framed as its sidecar says: "data: L\n\n" per line,
// then "data: [DONE]\n\n".
var fixtureBody = providertest.Framing{Done: true}.Fixture

func newModel(t testing.TB, baseURL string) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: baseURL, APIKey: "sk-test"})
	require.NoError(t, err)
	return m
}

// provider is this package to the providertest conformance tests.
var provider = providertest.Provider{
	Name: "openai",
	New: func(t testing.TB, baseURL string, maxAttempts int) agentloop.Model {
		t.Helper()
		m, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: baseURL, APIKey: "sk-test", MaxAttempts: maxAttempts})
		require.NoError(t, err)
		return m
	},
	SetRetrySleep: func(m agentloop.Model, sleep func(context.Context, time.Duration) error) {
		openai.SetRetrySleep(m.(*openai.Model), sleep)
	},
	Path:           "/chat/completions",
	Text:           []byte(textBody),
	Partial:        []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"),
	Malformed:      []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\n\n"),
	EndedEarly:     "openai: the server ended the stream before a finish reason: unexpected EOF",
	LostConnection: "openai: reading the stream failed (connection lost?)",
}

// textBody is a small valid stream: "Hello", usage 3/2, stop.
const textBody = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n" +
	"data: [DONE]\n\n"
