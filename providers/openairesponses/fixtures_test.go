package openairesponses_test

import (
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each recorded stream is decoded to what its sidecar's "Computed stats"
// say (testdata/<name>.md).
func TestResponses_RecordedStreamsDecodeToTheirStats(t *testing.T) {
	vercel := vercelResponses(t)
	require.Len(t, vercel, 4)
	for _, tc := range []struct {
		name          string
		body          []byte
		text          string
		textDeltas    int
		reasoningText string // a prefix
		ends          []agentloop.ReasoningEnd
		calls         []agentloop.ToolCall
		usage         agentloop.Usage
		finish        agentloop.FinishReason
	}{
		{
			name: "rig-parallel-function-calls", body: providertest.Testdata(t, "rig-parallel-function-calls.sse"),
			calls: []agentloop.ToolCall{
				{ID: "call_REDACTED_1", Name: "lookup_harbor_label", Args: []byte(`{}`)},
				{ID: "call_REDACTED_2", Name: "lookup_orchard_label", Args: []byte(`{}`)},
			},
			usage: agentloop.Usage{Input: 160, Output: 49}, finish: agentloop.FinishToolCalls,
		},
		{
			name: "rig-incomplete-mid-tool-call", body: providertest.Testdata(t, "rig-incomplete-mid-tool-call.sse"),
			calls: []agentloop.ToolCall{{ID: "call_REDACTED_1", Name: "add", Args: []byte(`{"x":48151`)}},
			usage: agentloop.Usage{Input: 83, Output: 16}, finish: agentloop.FinishLength,
		},
		{
			name: "rig-reasoning-two-calls-session.turn1", body: providertest.Testdata(t, "rig-reasoning-two-calls-session.turn1.sse"),
			ends: []agentloop.ReasoningEnd{{Signature: "rs_REDACTED_1", Redacted: "encrypted_content_REDACTED_2"}},
			calls: []agentloop.ToolCall{
				{ID: "call_REDACTED_1", Name: "get_weather", Args: []byte(`{"city":"Tokyo"}`)},
				{ID: "call_REDACTED_2", Name: "get_weather", Args: []byte(`{"city":"Paris"}`)},
			},
			usage: agentloop.Usage{Input: 144, Output: 62, Reasoning: 12}, finish: agentloop.FinishToolCalls,
		},
		{
			name: "rig-reasoning-two-calls-session.turn2", body: providertest.Testdata(t, "rig-reasoning-two-calls-session.turn2.sse"),
			textDeltas: 85, usage: agentloop.Usage{Input: 276, Output: 89}, finish: agentloop.FinishStop,
		},
		{
			name: "rig-three-turn-tool-session.turn2", body: providertest.Testdata(t, "rig-three-turn-tool-session.turn2.sse"),
			text:  "The count is 12, and the exact tool output is crimson-harbor.",
			usage: agentloop.Usage{Input: 190, Output: 21}, finish: agentloop.FinishStop,
		},
		{
			name: "rig-three-turn-tool-session.turn3", body: providertest.Testdata(t, "rig-three-turn-tool-session.turn3.sse"),
			text:  "crimson-harbor",
			ends:  []agentloop.ReasoningEnd{{Signature: "rs_REDACTED_2", Redacted: "encrypted_content_REDACTED_5"}},
			usage: agentloop.Usage{Input: 232, Output: 78, Reasoning: 67}, finish: agentloop.FinishStop,
		},
		{
			name: "vercel response 1", body: vercel[0],
			reasoningText: "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7",
			calls:         []agentloop.ToolCall{{ID: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", Name: "calculator", Args: []byte(`{"a":12,"b":7,"op":"add"}`)}},
			usage:         agentloop.Usage{Input: 134, Output: 28}, finish: agentloop.FinishToolCalls,
		},
		{
			name: "vercel response 4", body: vercel[3], textDeltas: 8,
			usage: agentloop.Usage{Input: 299, Output: 12}, finish: agentloop.FinishStop,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewSSEServer(t, tc.body)
			chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
			require.NoError(t, err)
			s := providertest.Summarize(chunks)
			if tc.text != "" {
				assert.Equal(t, tc.text, s.Text)
			}
			if tc.textDeltas > 0 {
				assert.Equal(t, tc.textDeltas, s.TextDeltas)
			}
			assert.True(t, len(s.Reasoning) >= len(tc.reasoningText) && s.Reasoning[:len(tc.reasoningText)] == tc.reasoningText, "reasoning %q", s.Reasoning)
			if tc.ends != nil || len(s.ReasoningEnds) > 0 {
				if tc.name == "vercel response 1" {
					require.Len(t, s.ReasoningEnds, 1)
					assert.Equal(t, "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9", s.ReasoningEnds[0].Signature)
					assert.Len(t, s.ReasoningEnds[0].Redacted, 1060, "the encrypted content of output_item.done")
				} else {
					assert.Equal(t, tc.ends, s.ReasoningEnds)
				}
			}
			assert.Equal(t, tc.calls, s.Calls)
			assert.Equal(t, []agentloop.Usage{tc.usage}, s.Usage)
			assert.Equal(t, []agentloop.FinishReason{tc.finish}, s.Finish)
			assert.True(t, s.LastIsFinish)
		})
	}
}
