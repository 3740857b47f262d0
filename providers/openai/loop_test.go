package openai_test

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

// normalize keeps what matters of a request's history: role, text, tool
// calls (id, name, arguments as JSON) and tool_call_id.
func normalize(body map[string]any) []string {
	var out []string
	for _, m := range body["messages"].([]any) {
		msg := m.(map[string]any)
		line := fmt.Sprintf("%v: %q", msg["role"], providertest.TextOf(msg["content"]))
		if id, ok := msg["tool_call_id"]; ok {
			line += fmt.Sprintf(" tool_call_id=%v", id)
		}
		calls, _ := msg["tool_calls"].([]any)
		for _, c := range calls {
			call := c.(map[string]any)
			fn := call["function"].(map[string]any)
			line += fmt.Sprintf(" call(%v %v %s)", call["id"], fn["name"], providertest.CanonicalJSON(fn["arguments"]))
		}
		out = append(out, line)
	}
	return out
}

func normalizeTools(body map[string]any) []string {
	var out []string
	tools, _ := body["tools"].([]any)
	for _, x := range tools {
		fn := x.(map[string]any)["function"].(map[string]any)
		schema, _ := json.Marshal(fn["parameters"])
		out = append(out, fmt.Sprintf("%v %v %s", fn["name"], fn["description"], schema))
	}
	return out
}

func TestOpenAI_TwoCallsThenAnswerThroughTheLoopResendsTheRecordedHistory(t *testing.T) {
	const name = "rig-two-calls-then-answer"
	rec := providertest.RecordedRequests(t, name)
	require.Len(t, rec, 2)
	first := rec[0].RequestBody

	// Tools and their recorded results (from the turn-2 request).
	names := map[string]string{}
	results := map[string]string{}
	for _, m := range rec[1].RequestBody["messages"].([]any) {
		msg := m.(map[string]any)
		calls, _ := msg["tool_calls"].([]any)
		for _, c := range calls {
			call := c.(map[string]any)
			names[call["id"].(string)] = call["function"].(map[string]any)["name"].(string)
		}
		if id, ok := msg["tool_call_id"].(string); ok {
			results[names[id]] = providertest.TextOf(msg["content"])
		}
	}
	var tools []*agentloop.Tool
	for _, x := range first["tools"].([]any) {
		fn := x.(map[string]any)["function"].(map[string]any)
		name := fn["name"].(string)
		schema, _ := json.Marshal(fn["parameters"])
		result := results[name]
		require.NotEmpty(t, result, name)
		tool, err := agentloop.NewRawTool(name, fn["description"].(string), schema, func(context.Context, json.RawMessage) (string, error) {
			return result, nil
		})
		require.NoError(t, err)
		tools = append(tools, tool)
	}
	var system string
	var history agentloop.History
	for _, m := range first["messages"].([]any) {
		msg := m.(map[string]any)
		if msg["role"] == "system" {
			system = providertest.TextOf(msg["content"])
		} else {
			history = append(history, agentloop.UserMessage(providertest.TextOf(msg["content"])))
		}
	}

	srv := providertest.NewSSEServer(t, fixtureBody(t, name+".turn1.sse"), fixtureBody(t, name+".turn2.sse"))
	agent := &agentloop.Agent{Model: newModel(t, srv.URL), System: system, Tools: tools}
	last, err := agentloop.Drain(agent.Stream(context.Background(), history, nil))
	require.NoError(t, err)
	final, ok := last.(agentloop.Final)
	require.True(t, ok, "got %T", last)
	assert.Equal(t, 2, final.Turns)
	assert.Equal(t, `The harbor label is "crimson-harbor" and the orchard label is "silver-orchard".`, final.History.LastAssistantText())

	require.Len(t, srv.Requests(), 2)
	for i, r := range rec {
		var ours map[string]any
		require.NoError(t, json.Unmarshal(srv.Request(t, i).Body, &ours))
		assert.Equal(t, normalize(r.RequestBody), normalize(ours), "history of turn %d", r.Turn)
		assert.Equal(t, normalizeTools(r.RequestBody), normalizeTools(ours), "tools of turn %d", r.Turn)
		assert.Equal(t, r.RequestBody["stream_options"], ours["stream_options"])
		assert.Equal(t, true, ours["stream"])
	}
}
