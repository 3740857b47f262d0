package openai

import (
	"io"
	"testing"

	"github.com/agentloop/agentloop"

	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// FuzzOpenAI_Decoder feeds arbitrary bodies to the stream decoder: it must not
// panic, must stop at the first failure, and must yield well-formed chunks
// (calls with non-empty arguments, at most one Finish, and Finish last). A
// call's id may be empty: the loop fills it.
func FuzzOpenAI_Decoder(f *testing.F) {
	providertest.FuzzDecoder(f, "openai", decode, nil,
		"rig-parallel-chunked-args-gpt41.sse", "rig-tool-args-truncated-length.sse", "rig-text-then-tool-call-gpt4o.sse")
}

// decode runs a new decoder over body: nothing carries over between bodies.
func decode(body io.Reader, yield func(agentloop.Chunk, error) bool) error {
	return new(decoder).run(body, yield)
}
