package anthropic

import (
	"io"
	"testing"

	"github.com/agentloop/agentloop"

	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// FuzzAnthropic_Decoder feeds arbitrary bodies to the stream decoder: it must not
// panic, must stop at the first failure, and must yield well-formed chunks
// (calls with non-empty arguments, at most one Finish, and Finish last). A
// call's id may be empty: the loop fills it.
func FuzzAnthropic_Decoder(f *testing.F) {
	providertest.FuzzDecoder(f, "anthropic", decode, nil,
		"rig-thinking-text-tool-roundtrip.turn1.sse", "rig-redacted-thinking.sse", "rig-parallel-tool-use.sse")
}

// decode runs a new decoder over body: nothing carries over between bodies.
func decode(body io.Reader, yield func(agentloop.Chunk, error) bool) error {
	return new(decoder).run(body, yield)
}
