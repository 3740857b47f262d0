package anthropic_test

import (
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type wantCall struct {
	ID, Name, Args string
	Fragments      int // non-empty input_json_delta fragments
}

var stopReasons = map[string]agentloop.FinishReason{"end_turn": agentloop.FinishStop, "tool_use": agentloop.FinishToolCalls}

// Expected figures match each fixture's sidecar .md (texts and signatures
// are the concatenated deltas of the recording).
var fixtureCases = []struct {
	file, text string
	textDeltas int
	reasoning  string
	signature  string
	redacted   []string
	calls      []wantCall
	usage      agentloop.Usage
	stop       string
}{
	{file: "rig-budget-thinking-tool-use.sse", text: "Sure! Let me compute 17 times 23 right away!", textDeltas: 1, reasoning: "The user wants to multiply 17 and 23.", signature: "signature_REDACTED_1", redacted: []string{}, calls: []wantCall{{"toolu_REDACTED_1", "multiply", "{\"a\": 17, \"b\": 23}", 3}}, usage: agentloop.Usage{Input: 609, Output: 104}, stop: "tool_use"},
	{file: "rig-four-turn-agent-run.turn1.sse", text: "I'll solve this step by step! Let me start by computing the two independent sub-expressions **(10 - 4)** and **(3 + 5)** simultaneously first.", textDeltas: 3, reasoning: "", signature: "", redacted: []string{}, calls: []wantCall{{"toolu_REDACTED_1", "subtract", "{\"x\": 10, \"y\": 4}", 3}, {"toolu_REDACTED_2", "add", "{\"x\": 3, \"y\": 5}", 3}}, usage: agentloop.Usage{Input: 1001, Output: 161}, stop: "tool_use"},
	{file: "rig-four-turn-agent-run.turn2.sse", text: "Got **6** and **8**! Now I'll multiply them together.", textDeltas: 2, reasoning: "", signature: "", redacted: []string{}, calls: []wantCall{{"toolu_REDACTED_3", "multiply", "{\"x\": 6, \"y\": 8}", 5}}, usage: agentloop.Usage{Input: 1223, Output: 85}, stop: "tool_use"},
	{file: "rig-four-turn-agent-run.turn3.sse", text: "Got **48**! Now for the final step — dividing by 3.", textDeltas: 2, reasoning: "", signature: "", redacted: []string{}, calls: []wantCall{{"toolu_REDACTED_4", "divide", "{\"x\": 48, \"y\": 3}", 3}}, usage: agentloop.Usage{Input: 1321, Output: 86}, stop: "tool_use"},
	{file: "rig-four-turn-agent-run.turn4.sse", text: "**The result is 16.** Here's a summary of the calculation:\n\nStarting with the two parenthetical expressions, subtracting 4 from 10 gives 6, and adding 3 and 5 gives 8. Multiplying those two results together yields 48, which when divided by 3 produces a clean, whole-number answer of **16** — a perfect power of 2 (2⁴), making it a satisfying and tidy result!", textDeltas: 7, reasoning: "", signature: "", redacted: []string{}, calls: []wantCall{}, usage: agentloop.Usage{Input: 1420, Output: 110}, stop: "end_turn"},
	{file: "rig-parallel-tool-use.sse", text: "I'll call both tools simultaneously right now!", textDeltas: 2, reasoning: "", signature: "", redacted: []string{}, calls: []wantCall{{"toolu_REDACTED_1", "lookup_harbor_label", "{}", 0}, {"toolu_REDACTED_2", "lookup_orchard_label", "{}", 0}}, usage: agentloop.Usage{Input: 700, Output: 70}, stop: "tool_use"},
	{file: "rig-redacted-thinking.sse", text: "OK", textDeltas: 1, reasoning: "", signature: "", redacted: []string{"redacted_thinking_REDACTED_1", "redacted_thinking_REDACTED_2"}, calls: []wantCall{}, usage: agentloop.Usage{Input: 100, Output: 13}, stop: "end_turn"},
	{file: "rig-thinking-text-tool-roundtrip.turn1.sse", text: "Sure! Let me check the current weather in Tokyo right away!", textDeltas: 1, reasoning: "The user wants to know the current weather in Tokyo, Japan. I'll call the get_weather tool with \"Tokyo\" as the city.", signature: "signature_REDACTED_2", redacted: []string{}, calls: []wantCall{{"toolu_REDACTED_1", "get_weather", "{\"city\": \"Tokyo, Japan\"}", 3}}, usage: agentloop.Usage{Input: 671, Output: 113}, stop: "tool_use"},
	{file: "rig-thinking-text-tool-roundtrip.turn2.sse", text: "Here's the current weather report for **Tokyo, Japan** 🗼:\n\n| Detail | Condition |\n|---|---|\n| 🌡️ Temperature | 72°F (22°C) |\n| ☁️ Sky | Sunny with light clouds |\n| 💧 Humidity | 45% |\n| 💨 Wind | 8 mph, Northwest |\n\n---\n\n### 🧳 Packing Recommendation: **Sunscreen!** ☀️\n\nBased on the current conditions, here's what I suggest:\n\n- **✅ Pack Sunscreen** – Tokyo is currently experiencing sunny skies with only light clouds. With comfortable temperatures and moderate humidity, you'll likely be spending time outdoors, so sun protection is a must!\n- **🌂 Skip the Umbrella (for now)** – There's no rain in the current conditions, so an umbrella isn't immediately necessary. However, weather can change, so if you're staying for multiple days, a compact travel umbrella wouldn't hurt as a backup.\n\n**Overall**, it sounds like a lovely day in Tokyo! Enjoy your trip! 🎌", textDeltas: 14, reasoning: "", signature: "", redacted: []string{}, calls: []wantCall{}, usage: agentloop.Usage{Input: 825, Output: 264}, stop: "end_turn"},
	{file: "rig-zero-arg-tool-use.sse", text: "", textDeltas: 0, reasoning: "", signature: "", redacted: []string{}, calls: []wantCall{{"toolu_REDACTED_1", "ping", "{}", 0}}, usage: agentloop.Usage{Input: 575, Output: 35}, stop: "tool_use"},
	{file: "vercel-text-then-tool-input-json.chunks.jsonl", text: "I'll invoke the JSON response tool.", textDeltas: 2, reasoning: "", signature: "", redacted: []string{}, calls: []wantCall{{"toolu_01KFbKqPYSuAKujiL6mTfzYA", "json", "{\"elements\": [{\"location\": \"San Francisco\", \"temperature\": 58, \"condition\": \"sunny\"}]}", 2}}, usage: agentloop.Usage{Input: 849, Output: 47}, stop: "tool_use"},
	{file: "vercel-text-then-zero-arg-tool.chunks.jsonl", text: "I'll update the issue list for you.", textDeltas: 2, reasoning: "", signature: "", redacted: []string{}, calls: []wantCall{{"toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", "{}", 0}}, usage: agentloop.Usage{Input: 565, Output: 48}, stop: "tool_use"},
	{file: "vercel-prompt-cache-server-tool.chunks.jsonl", text: "The sum of the squares of the numbers 1 through 12 is **650**.", textDeltas: 2, reasoning: "", signature: "", redacted: []string{}, calls: []wantCall{}, usage: agentloop.Usage{Input: 9632, Output: 198, CacheRead: 6289, CacheWrite: 3337}, stop: "end_turn"},
	{file: "vercel-thinking-signature-text.chunks.jsonl", text: "925 ÷ 5 = 185", textDeltas: 3, reasoning: "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185", signature: "EvQBCkYICxgCKkAxhD4NUKFzudtZ6NzbZdEiBACIScTzqjPViM596iWLZIk4EFKYYBj3B6Ptl3b0dcQv/VeJBNbejNWIWRBn+KPNEgz6HWtKx7p+QRgKsEoaDGjsiqfht7gTRFYHiyIwD1VSmNqHxv3wy8KEMP+LYb/TC4UH3H97tuoaADARFFcA0phdfxnzKQxFnc9lwY+dKlzUsaKSUAFeu1bDL5ikZJ1vL0Fkz6JjoFke0L/wOJRIUDUlDUOFJ1tZ3ea7g6LGE/5hwuvWgLwewdcm64d+43l7F57XrOmqNd6flI2K/oPr/4yzNgvi/EhT6Ca17BgB", redacted: []string{}, calls: []wantCall{}, usage: agentloop.Usage{Input: 69, Output: 53}, stop: "end_turn"},
}

func TestAnthropic_RecordedStreamsYieldWhatTheSidecarsSay(t *testing.T) {
	for _, c := range fixtureCases {
		t.Run(c.file, func(t *testing.T) {
			srv := providertest.NewSSEServer(t, fixtureBody(t, c.file))
			chunks, err := providertest.Collect(newModel(t, srv.URL), &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("hi")}})
			require.NoError(t, err)
			s := providertest.Summarize(chunks)
			assert.Equal(t, c.text, s.Text)
			assert.Equal(t, c.textDeltas, s.TextDeltas)
			assert.Equal(t, c.reasoning, s.Reasoning)
			var ends []agentloop.ReasoningEnd
			if c.signature != "" {
				ends = append(ends, agentloop.ReasoningEnd{Signature: c.signature})
			}
			for _, r := range c.redacted {
				ends = append(ends, agentloop.ReasoningEnd{Redacted: r})
			}
			assert.Equal(t, ends, s.ReasoningEnds)
			require.Len(t, s.Calls, len(c.calls))
			for i := range s.ArgFragments {
				assert.Less(t, i, len(c.calls), "argument fragments only for the client's tool calls (not server_tool_use)")
			}
			for i, w := range c.calls {
				assert.Equal(t, w.ID, s.Calls[i].ID)
				assert.Equal(t, w.Name, s.Calls[i].Name)
				assert.Equal(t, w.Args, string(s.Calls[i].Args))
				assert.Equal(t, w.Fragments, s.ArgFragments[i], "fragments of call %d", i)
			}
			assert.Equal(t, []agentloop.Usage{c.usage}, s.Usage)
			assert.Equal(t, []agentloop.FinishReason{stopReasons[c.stop]}, s.Finish)
			assert.True(t, s.LastIsFinish, "Finish comes last")
		})
	}
}
