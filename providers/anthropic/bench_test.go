package anthropic_test

import (
	"testing"

	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// BenchmarkAnthropic_ParseRecordedStream parses a recorded stream (thinking,
// text, a tool call) from memory through Stream; ns/event and allocs/event
// are per SSE event.
func BenchmarkAnthropic_ParseRecordedStream(b *testing.B) {
	for _, name := range []string{"rig-thinking-text-tool-roundtrip.turn2.sse", "rig-four-turn-agent-run.turn1.sse"} {
		b.Run(name, func(b *testing.B) {
			body := fixtureBody(b, name)
			m, err := anthropic.New(anthropic.Config{Model: "m", BaseURL: "http://mem", HTTPClient: providertest.MemClient(body)})
			if err != nil {
				b.Fatal(err)
			}
			providertest.BenchmarkStream(b, m, body)
		})
	}
}
