package ollama

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedTools returns the tools of a recorded request as agentloop tools
// whose functions return the given results by tool name.
func recordedTools(t *testing.T, body map[string]any, results map[string]string) []*agentloop.Tool {
	t.Helper()
	var tools []*agentloop.Tool
	for _, raw := range body["tools"].([]any) {
		fn := raw.(map[string]any)["function"].(map[string]any)
		name := fn["name"].(string)
		schema, err := json.Marshal(fn["parameters"])
		require.NoError(t, err)
		result, ok := results[name]
		tool, err := agentloop.NewRawTool(name, fn["description"].(string), schema, func(_ context.Context, _ json.RawMessage) (string, error) {
			if !ok {
				return "", fmt.Errorf("the recording has no result for %s", name)
			}
			return result, nil
		})
		require.NoError(t, err)
		tools = append(tools, tool)
	}
	return tools
}

// semanticMessages keeps the fields of each message that carry the
// history: role, content, thinking, tool_name and each call's name and
// arguments (ids are compared separately: the recordings have none).
func semanticMessages(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, raw := range body["messages"].([]any) {
		msg := raw.(map[string]any)
		m := map[string]any{
			"role":      msg["role"],
			"content":   msg["content"],
			"thinking":  valueOr(msg["thinking"], ""),
			"tool_name": valueOr(msg["tool_name"], ""),
		}
		var calls []any
		if tcs, ok := msg["tool_calls"].([]any); ok {
			for _, tc := range tcs {
				fn := tc.(map[string]any)["function"].(map[string]any)
				calls = append(calls, map[string]any{"name": fn["name"], "arguments": fn["arguments"]})
			}
		}
		m["tool_calls"] = calls
		out = append(out, m)
	}
	return out
}

// semanticTools keeps each tool's type, name, description and parameters,
// with an empty "required" list dropped (Ollama's type omits it).
func semanticTools(body map[string]any) []any {
	var out []any
	tools, _ := body["tools"].([]any)
	for _, raw := range tools {
		tool := raw.(map[string]any)
		fn := tool["function"].(map[string]any)
		params := fn["parameters"].(map[string]any)
		if req, ok := params["required"].([]any); ok && len(req) == 0 {
			delete(params, "required")
		}
		out = append(out, map[string]any{"type": tool["type"], "name": fn["name"], "description": fn["description"], "parameters": params})
	}
	return out
}

func valueOr(v any, def any) any {
	if v == nil {
		return def
	}
	return v
}

func TestOllama_RecordedRoundTripsThroughTheRealLoopSendTheRecordedHistory(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		for _, tc := range []struct {
			name    string
			think   ThinkMode
			results map[string]string
			callID  string
			answer  string // the start of the final answer
		}{
			{
				name: "rig-tool-roundtrip", think: ThinkOff,
				results: map[string]string{"subtract": "-3"},
				callID:  "call_REDACTED_1",
				answer:  "Okay, let me go through this step by step.",
			},
			{
				name: "rig-thinking-tool-roundtrip", think: ThinkOn,
				results: map[string]string{"get_weather": "Weather in Tokyo: 72F (22C), sunny with light clouds, humidity 45%, wind 8 mph NW"},
				callID:  "call_REDACTED_1",
				answer:  "The current weather in Tokyo is sunny with light clouds",
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				want := providertest.RecordedRequests(t, tc.name)
				require.Len(t, want, 2)
				srv := newNDJSONServer(t, providertest.Testdata(t, tc.name+".turn1.ndjson"), providertest.Testdata(t, tc.name+".turn2.ndjson"))
				m := rd.model(t, srv.URL, Config{Think: tc.think})

				first := semanticMessages(t, want[0].RequestBody)
				require.Len(t, first, 2, "the recording starts with a system and a user message")
				agent := &agentloop.Agent{
					Model:  m,
					System: first[0]["content"].(string),
					Tools:  recordedTools(t, want[0].RequestBody, tc.results),
				}
				last, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage(first[1]["content"].(string))}, nil))
				require.NoError(t, err)
				final, ok := last.(agentloop.Final)
				require.True(t, ok, "the run ends with a Final, got %T", last)
				assert.Equal(t, 2, final.Turns)
				assert.Contains(t, final.Text, tc.answer)

				got := srv.Requests()
				require.Len(t, got, 2)
				for i := range got {
					assert.Equal(t, want[i].Path, got[i].URL.Path, "turn %d path", i+1)
					assert.Equal(t, semanticMessages(t, want[i].RequestBody), semanticMessages(t, got[i].JSON(t)), "turn %d messages", i+1)
					assert.Equal(t, semanticTools(want[i].RequestBody), semanticTools(got[i].JSON(t)), "turn %d tools", i+1)
					assert.Equal(t, want[i].RequestBody["think"], got[i].JSON(t)["think"], "turn %d think", i+1)
					assert.Equal(t, want[i].RequestBody["model"], got[i].JSON(t)["model"], "turn %d model", i+1)
					assert.Equal(t, true, got[i].JSON(t)["stream"], "turn %d stream", i+1)
				}

				// What the recordings lack: the call id goes back on the call
				// and on its result.
				msgs := got[1].JSON(t)["messages"].([]any)
				assistant := msgs[2].(map[string]any)
				call := assistant["tool_calls"].([]any)[0].(map[string]any)
				assert.Equal(t, tc.callID, call["id"])
				toolMsg := msgs[3].(map[string]any)
				assert.Equal(t, tc.callID, toolMsg["tool_call_id"])
			})
		}
	})
}
