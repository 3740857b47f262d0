package openairesponses

import (
	"bytes"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// FuzzResponses_Decoder feeds arbitrary bodies to the stream decoder: it
// must not panic, must stop at the first failure, and must yield
// well-formed chunks (no empty deltas, calls with non-empty arguments, at
// most one Finish, and Finish last).
func FuzzResponses_Decoder(f *testing.F) {
	providertest.AddFixtures(f, "rig-parallel-function-calls.sse", "rig-incomplete-mid-tool-call.sse", "rig-reasoning-two-calls-session.turn1.sse", "rig-three-turn-tool-session.turn3.sse")
	f.Add([]byte("event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":3,\"item\":{\"type\":\"function_call\"}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var chunks []agentloop.Chunk
		var yielded error
		err := new(decoder).run(bytes.NewReader(body), func(c agentloop.Chunk, err error) bool {
			if err != nil && yielded == nil {
				yielded = err
			}
			chunks = append(chunks, c)
			return true
		})
		providertest.CheckDecoded(t, "openai", chunks, yielded, err)
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
	})
}
