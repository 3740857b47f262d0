package openai_test

import (
	"testing"

	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/agentloop/agentloop/providers/openai"
)

// BenchmarkOpenAI_ParseRecordedStream parses a recorded stream (tool-call
// fragments, reasoning) from memory through Stream; ns/event and allocs/event
// are per SSE event.
func BenchmarkOpenAI_ParseRecordedStream(b *testing.B) {
	for _, name := range []string{"rig-nested-unicode-args-gpt41.sse", "vercel-xai-reasoning-single-chunk-tool-call.chunks.jsonl"} {
		b.Run(name, func(b *testing.B) {
			body := fixtureBody(b, name)
			m, err := openai.New(openai.Config{Model: "m", BaseURL: "http://mem", HTTPClient: providertest.MemClient(body)})
			if err != nil {
				b.Fatal(err)
			}
			providertest.BenchmarkStream(b, m, body)
		})
	}
}
