package gemini_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/gemini"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// sse frames JSON payloads as the API streams them.
func sse(payloads ...string) []byte {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\r\n\r\n")
	}
	return []byte(b.String())
}

// fixture reads a recorded stream (one payload a line) and frames it as SSE.
var fixture = providertest.Framing{CRLF: true}.Fixture

func newModel(t testing.TB, url string, edit ...func(*gemini.Config)) *gemini.Model {
	t.Helper()
	cfg := gemini.Config{Model: "gemini-test", APIKey: "test-key", BaseURL: url}
	for _, e := range edit {
		e(&cfg)
	}
	m, err := gemini.New(context.Background(), cfg)
	require.NoError(t, err)
	gemini.SetRetrySleep(m, func(ctx context.Context, d time.Duration) error { return ctx.Err() })
	return m
}

// provider is this package to the providertest conformance tests.
var provider = providertest.Provider{
	Name: "gemini",
	New: func(t testing.TB, baseURL string, maxAttempts int) agentloop.Model {
		t.Helper()
		return newModel(t, baseURL, func(c *gemini.Config) { c.MaxAttempts = maxAttempts })
	},
	SetRetrySleep: func(m agentloop.Model, sleep func(context.Context, time.Duration) error) {
		gemini.SetRetrySleep(m.(*gemini.Model), sleep)
	},
	Text: sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"lo"}]},"finishReason":"STOP"}]}`),
	Partial:        sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}]}`),
	EndedEarly:     "gemini: the server ended the stream before a finish reason: unexpected EOF",
	LostConnection: "gemini: reading the stream failed (connection lost?)",
	Unreachable:    "the server",
}
