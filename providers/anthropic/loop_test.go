package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// normalize keeps what matters of a request's history: per message its role
// and, per block, the fields the API reads (text, thinking and signature,
// redacted data, tool_use id/name/input, tool_result id/content/is_error).
func normalize(body map[string]any) []string {
	var out []string
	out = append(out, "system: "+providertest.TextOf(body["system"]))
	for _, m := range body["messages"].([]any) {
		msg := m.(map[string]any)
		content := msg["content"]
		if s, ok := content.(string); ok {
			content = []any{map[string]any{"type": "text", "text": s}}
		}
		for _, b := range content.([]any) {
			blk := b.(map[string]any)
			var line string
			switch blk["type"] {
			case "text":
				line = "text " + blk["text"].(string)
			case "thinking":
				line = fmt.Sprintf("thinking %q sig=%v", blk["thinking"], blk["signature"])
			case "redacted_thinking":
				line = fmt.Sprintf("redacted %v", blk["data"])
			case "tool_use":
				line = fmt.Sprintf("tool_use %v %v %s", blk["id"], blk["name"], canonical(blk["input"]))
			case "tool_result":
				line = fmt.Sprintf("tool_result %v %q is_error=%v", blk["tool_use_id"], providertest.TextOf(blk["content"]), blk["is_error"] == true)
			default:
				line = "other " + canonical(blk)
			}
			out = append(out, fmt.Sprintf("%v: %s", msg["role"], line))
		}
	}
	return out
}

func normalizeTools(body map[string]any) []string {
	var out []string
	tools, _ := body["tools"].([]any)
	for _, x := range tools {
		tl := x.(map[string]any)
		out = append(out, fmt.Sprintf("%v %v %s", tl["name"], tl["description"], canonical(tl["input_schema"])))
	}
	return out
}

// runRecorded runs the real agent loop against a recorded multi-turn
// session: the system prompt, user message and tools come from the first
// recorded request, each tool returns the result recorded for it, and the
// server answers turn N with turnN.sse. It checks that every request our
// provider sent carries the recorded history.
func runRecorded(t *testing.T, name string, turns int) agentloop.Final {
	turnsRec := providertest.RecordedRequests(t, name)
	require.Len(t, turnsRec, turns)
	first := turnsRec[0].RequestBody
	last := turnsRec[turns-1].RequestBody

	// The recorded result of each tool, by name, from the last request.
	names := map[string]string{}
	results := map[string]string{}
	for _, m := range last["messages"].([]any) {
		content, ok := m.(map[string]any)["content"].([]any)
		if !ok {
			continue
		}
		for _, b := range content {
			blk := b.(map[string]any)
			switch blk["type"] {
			case "tool_use":
				names[blk["id"].(string)] = blk["name"].(string)
			case "tool_result":
				results[names[blk["tool_use_id"].(string)]] = providertest.TextOf(blk["content"])
			}
		}
	}
	var tools []*agentloop.Tool
	for _, x := range first["tools"].([]any) {
		tl := x.(map[string]any)
		name := tl["name"].(string)
		schema, _ := json.Marshal(tl["input_schema"])
		result, ok := results[name]
		require.True(t, ok, "no recorded result for %s", name)
		tool, err := agentloop.NewRawTool(name, tl["description"].(string), schema, func(ctx context.Context, args json.RawMessage) (string, error) {
			return result, nil
		})
		require.NoError(t, err)
		tools = append(tools, tool)
	}
	var history agentloop.History
	for _, m := range first["messages"].([]any) {
		history = append(history, agentloop.UserMessage(providertest.TextOf(m.(map[string]any)["content"])))
	}

	var bodies [][]byte
	for i := 1; i <= turns; i++ {
		bodies = append(bodies, fixtureBody(t, fmt.Sprintf("%s.turn%d.sse", name, i)))
	}
	srv := providertest.NewSSEServer(t, bodies...)
	agent := &agentloop.Agent{Model: newModel(t, srv.URL), System: providertest.TextOf(first["system"]), Tools: tools}
	last2, err := agentloop.Drain(agent.Stream(context.Background(), history, nil))
	require.NoError(t, err)
	final, ok := last2.(agentloop.Final)
	require.True(t, ok, "the run ends with Final, got %T", last2)
	assert.Equal(t, turns, final.Turns)

	require.Len(t, srv.Requests(), turns)
	for i, rec := range turnsRec {
		var ours map[string]any
		require.NoError(t, json.Unmarshal(srv.Request(t, i).Body, &ours))
		assert.Equal(t, normalize(rec.RequestBody), normalize(ours), "history of turn %d", rec.Turn)
		assert.Equal(t, normalizeTools(rec.RequestBody), normalizeTools(ours), "tools of turn %d", rec.Turn)
		assert.Equal(t, true, ours["stream"])
	}
	return final
}

func TestAnthropic_FourTurnAgentRunThroughTheLoopResendsTheRecordedHistory(t *testing.T) {
	final := runRecorded(t, "rig-four-turn-agent-run", 4)
	assert.True(t, strings.HasPrefix(final.History.LastAssistantText(), "**The result is 16.**"))
}

func TestAnthropic_ThinkingSignatureSurvivesTheLoopAndIsSentBackUnchanged(t *testing.T) {
	final := runRecorded(t, "rig-thinking-text-tool-roundtrip", 2)
	// The assistant message of turn 1 keeps the reasoning part with its signature.
	var found bool
	for _, m := range final.History {
		for _, p := range m.Parts {
			if p.Type == agentloop.PartReasoning {
				found = true
				assert.Equal(t, "signature_REDACTED_2", p.Signature)
				assert.True(t, strings.HasPrefix(p.Text, "The user wants to know the current weather in Tokyo"))
			}
		}
	}
	assert.True(t, found)
}
