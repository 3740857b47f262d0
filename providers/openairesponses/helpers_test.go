package openairesponses_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/agentloop/agentloop/providers/openairesponses"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// vercelResponses frames the vercel .chunks.jsonl fixture as its sidecar
// says ("event: <type>\ndata: L\n\n" per line) and splits it into one body
// per response (each starts with response.created).
func vercelResponses(t testing.TB) [][]byte {
	t.Helper()
	body := providertest.Framing{Event: true}.Fixture(t, "vercel-reasoning-encrypted-four-responses.chunks.jsonl")
	const created = "event: response.created\n"
	var bodies [][]byte
	for _, b := range bytes.SplitAfter(body, []byte("\n\n"+created)) {
		b = bytes.TrimSuffix(b, []byte(created))
		if len(bodies) > 0 {
			b = append([]byte(created), b...)
		}
		bodies = append(bodies, b)
	}
	return bodies
}

func newModel(t testing.TB, baseURL string) *openairesponses.Model {
	t.Helper()
	return provider.New(t, baseURL, 0).(*openairesponses.Model)
}

// provider is this package to the providertest conformance tests.
var provider = providertest.Provider{
	Name: "openai",
	New: func(t testing.TB, baseURL string, maxAttempts int) agentloop.Model {
		t.Helper()
		m, err := openairesponses.New(openairesponses.Config{Model: "gpt-test", BaseURL: baseURL, APIKey: "sk-test", MaxAttempts: maxAttempts})
		require.NoError(t, err)
		return m
	},
	SetRetrySleep: func(m agentloop.Model, sleep func(context.Context, time.Duration) error) {
		openairesponses.SetRetrySleep(m.(*openairesponses.Model), sleep)
	},
	Path:           "/responses",
	Text:           []byte(textBody),
	Partial:        []byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hel\"}\n\n"),
	Malformed:      []byte("event: response.output_text.delta\ndata: {\"type\":\n\n"),
	EndedEarly:     "openai: the server ended the stream before response.completed: unexpected EOF",
	LostConnection: "openai: reading the stream failed (connection lost?)",
}

// textBody is a small valid stream: "Hello", usage 3/2, completed.
const textBody = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n" +
	"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"msg_1\"}}\n\n" +
	"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hel\"}\n\n" +
	"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"lo\"}\n\n" +
	"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"msg_1\"}}\n\n" +
	completed

const completed = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":3,\"output_tokens\":2}}}\n\n"
