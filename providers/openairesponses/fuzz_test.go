package openairesponses

import (
	"io"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// FuzzResponses_Decoder feeds arbitrary bodies to the stream decoder: it
// must not panic, must stop at the first failure, and must yield
// well-formed chunks (no empty deltas, calls with non-empty arguments, at
// most one Finish, and Finish last).
func FuzzResponses_Decoder(f *testing.F) {
	f.Add([]byte("event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":3,\"item\":{\"type\":\"function_call\"}}\n\n"))
	providertest.FuzzDecoder(f, "openai", decode, noEmptyDeltas,
		"rig-parallel-function-calls.sse", "rig-incomplete-mid-tool-call.sse", "rig-reasoning-two-calls-session.turn1.sse", "rig-three-turn-tool-session.turn3.sse")
}

// decode runs a new decoder over body: nothing carries over between bodies.
func decode(body io.Reader, yield func(agentloop.Chunk, error) bool) error {
	return new(decoder).run(body, yield)
}

func noEmptyDeltas(t *testing.T, chunks []agentloop.Chunk) {
	for _, c := range chunks {
		switch c := c.(type) {
		case agentloop.TextDelta:
			if c.Text == "" {
				t.Fatal("empty text delta")
			}
		case agentloop.ReasoningDelta:
			if c.Text == "" {
				t.Fatal("empty reasoning delta")
			}
		}
	}
}
