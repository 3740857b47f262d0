package openai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type wantCall struct {
	ID, Name, Args string
	Fragments      int
}

// Expected figures come from each fixture's sidecar .md.
var fixtureCases = []struct {
	file            string
	text            string
	textDeltas      int
	reasoningPrefix string
	reasoningLen    int
	reasoningDeltas int
	calls           []wantCall
	usage           agentloop.Usage
	finish          agentloop.FinishReason
}{
	{file: "langchaingo-parallel-gpt41-raw.sse", calls: []wantCall{
		{"call_oStfjbrEyya6I2px3EzDuGVB", "getCurrentWeather", `{"location": "Boston, MA"}`, 6},
		{"call_YZ4lwwqnfF0SkJgYRUhpJnn4", "getCurrentTime", `{"location": "Boston, MA"}`, 6},
	}, usage: agentloop.Usage{Input: 121, Output: 50}, finish: agentloop.FinishToolCalls},
	{file: "rig-nested-unicode-args-gpt41.sse", calls: []wantCall{
		{"call_REDACTED_1", "record_payload", `{"label":"café 東京","values":[3,5,8],"meta":{"active":true}}`, 21},
	}, usage: agentloop.Usage{Input: 93, Output: 30}, finish: agentloop.FinishToolCalls},
	{file: "rig-parallel-chunked-args-gpt41.sse", calls: []wantCall{
		{"call_REDACTED_1", "alpha", `{"value": "red"}`, 4},
		{"call_REDACTED_2", "beta", `{"value": "blue"}`, 4},
	}, usage: agentloop.Usage{Input: 90, Output: 42}, finish: agentloop.FinishToolCalls},
	{file: "rig-parallel-zero-arg-gpt4o.sse", calls: []wantCall{
		{"call_REDACTED_1", "lookup_harbor_label", `{}`, 1},
		{"call_REDACTED_2", "lookup_orchard_label", `{}`, 1},
	}, usage: agentloop.Usage{Input: 157, Output: 45}, finish: agentloop.FinishToolCalls},
	{file: "rig-text-then-tool-call-gpt4o.sse",
		text: "I will now look up the alpha signal marker, which is also known as the harbor label.", textDeltas: 19,
		calls: []wantCall{{"call_REDACTED_1", "lookup_harbor_label", `{}`, 1}},
		usage: agentloop.Usage{Input: 90, Output: 33}, finish: agentloop.FinishToolCalls},
	{file: "rig-tool-args-truncated-length.sse", calls: []wantCall{
		{"call_REDACTED_1", "file_report", `{"summary":"The cache warmer raced`, 7},
	}, usage: agentloop.Usage{Input: 101, Output: 16}, finish: agentloop.FinishLength},
	{file: "rig-two-calls-then-answer.turn1.sse", calls: []wantCall{
		{"call_REDACTED_1", "lookup_harbor_label", `{}`, 1},
		{"call_REDACTED_2", "lookup_orchard_label", `{}`, 1},
	}, usage: agentloop.Usage{Input: 157, Output: 45}, finish: agentloop.FinishToolCalls},
	{file: "rig-two-calls-then-answer.turn2.sse",
		text: `The harbor label is "crimson-harbor" and the orchard label is "silver-orchard".`, textDeltas: 22,
		usage: agentloop.Usage{Input: 225, Output: 23}, finish: agentloop.FinishStop},
	{file: "vercel-deepseek-reasoning-tool-call.chunks.jsonl",
		reasoningPrefix: "The user is asking for the weather in San Francisco.", reasoningLen: 191, reasoningDeltas: 39,
		calls: []wantCall{{"call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", `{"location": "San Francisco"}`, 10}},
		usage: agentloop.Usage{Input: 339, Output: 83, CacheRead: 320, Reasoning: 39}, finish: agentloop.FinishToolCalls},
	{file: "vercel-xai-reasoning-single-chunk-tool-call.chunks.jsonl",
		reasoningPrefix: "First, the user is asking about the weather in San Francisco.", reasoningLen: 1069, reasoningDeltas: 227,
		calls: []wantCall{{"call_79382389", "weather", `{"location":"San Francisco"}`, 1}},
		// xAI leaves the reasoning tokens out of completion_tokens (total_tokens 560 = 307 + 26 + 227).
		usage: agentloop.Usage{Input: 307, Output: 26 + 227, CacheRead: 306, Reasoning: 227}, finish: agentloop.FinishToolCalls},
}

func TestOpenAI_RecordedStreamsYieldWhatTheSidecarsSay(t *testing.T) {
	for _, c := range fixtureCases {
		t.Run(c.file, func(t *testing.T) {
			srv := providertest.NewSSEServer(t, fixtureBody(t, c.file))
			chunks, err := providertest.Collect(newModel(t, srv.URL), &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("hi")}})
			require.NoError(t, err)
			s := providertest.Summarize(chunks)
			assert.Equal(t, c.text, s.Text)
			assert.Equal(t, c.textDeltas, s.TextDeltas)
			assert.True(t, strings.HasPrefix(s.Reasoning, c.reasoningPrefix), "reasoning %q", s.Reasoning)
			assert.Equal(t, c.reasoningLen, len(s.Reasoning))
			assert.Equal(t, c.reasoningDeltas, s.ReasoningDeltas)
			require.Len(t, s.Calls, len(c.calls))
			for i, w := range c.calls {
				assert.Equal(t, w.ID, s.Calls[i].ID)
				assert.Equal(t, w.Name, s.Calls[i].Name)
				assert.Equal(t, w.Args, string(s.Calls[i].Args))
				assert.Equal(t, w.Fragments, s.ArgFragments[i], "fragments of call %d", i)
			}
			assert.Equal(t, []agentloop.Usage{c.usage}, s.Usage)
			assert.Equal(t, []agentloop.FinishReason{c.finish}, s.Finish)
			assert.True(t, s.LastIsFinish, "Finish comes last")
		})
	}
}

func TestOpenAI_ToolCallDeltasCarryIDAndNameAndOrdinalIndex(t *testing.T) {
	srv := providertest.NewSSEServer(t, fixtureBody(t, "rig-parallel-chunked-args-gpt41.sse"))
	chunks, err := providertest.Collect(newModel(t, srv.URL), &agentloop.Request{})
	require.NoError(t, err)
	args := map[int]string{}
	for _, c := range chunks {
		if d, ok := c.(agentloop.ToolCallDelta); ok {
			want := map[int]string{0: "call_REDACTED_1", 1: "call_REDACTED_2"}[d.Index]
			assert.Equal(t, want, d.ID)
			assert.NotEmpty(t, d.Name)
			args[d.Index] += d.Args
		}
	}
	assert.Equal(t, map[int]string{0: `{"value": "red"}`, 1: `{"value": "blue"}`}, args)
	// Every ToolCall has valid JSON arguments.
	for _, c := range chunks {
		if tc, ok := c.(agentloop.ToolCall); ok {
			assert.True(t, json.Valid(tc.Args))
		}
	}
}
