package anthropic

import (
	"bytes"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// FuzzAnthropic_Decoder feeds arbitrary bodies to the stream decoder: it must not
// panic, must stop at the first failure, and must yield well-formed chunks
// (calls with non-empty arguments, at most one Finish, and Finish last). A
// call's id may be empty: the loop fills it.
func FuzzAnthropic_Decoder(f *testing.F) {
	providertest.AddFixtures(f, "rig-thinking-text-tool-roundtrip.turn1.sse", "rig-redacted-thinking.sse", "rig-parallel-tool-use.sse")
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
		providertest.CheckDecoded(t, "anthropic", chunks, yielded, err)
	})
}
