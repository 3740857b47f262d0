package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnthropic_CachePromptsMarksToolsSystemAndTheLastTwoUserMessages(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	m, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: srv.URL, CachePrompts: true})
	require.NoError(t, err)
	tools := []agentloop.ToolDef{{Name: "a"}, {Name: "b"}}
	call := agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
		{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "t1", Name: "a", Args: json.RawMessage(`{}`)}},
	}}
	result := agentloop.Message{Role: agentloop.RoleTool, Parts: []agentloop.Part{
		{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "t1", Name: "a", Content: "ok"}},
	}}
	turn1 := agentloop.History{agentloop.UserMessage("Hi."), agentloop.UserMessage("Use a.")}
	turn2 := append(turn1[:len(turn1):len(turn1)], call, result)

	_, err = providertest.Collect(m, &agentloop.Request{System: "Be brief.", Messages: turn1, Tools: tools})
	require.NoError(t, err)
	_, err = providertest.Collect(m, &agentloop.Request{System: "Be brief.", Messages: turn2, Tools: tools})
	require.NoError(t, err)

	const prefix = `{
	 "model": "claude-test",
	 "max_tokens": 4096,
	 "stream": true,
	 "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
	 "tools": [
	  {"name": "a", "input_schema": {"type":"object","properties":{}}},
	  {"name": "b", "input_schema": {"type":"object","properties":{}}, "cache_control": {"type": "ephemeral"}}
	 ],`
	assert.JSONEq(t, prefix+`
	 "messages": [
	  {"role": "user", "content": [
	    {"type": "text", "text": "Hi."},
	    {"type": "text", "text": "Use a.", "cache_control": {"type": "ephemeral"}}
	  ]}
	 ]}`, string(srv.Request(t, 0).Body), "turn 1: the one user message is the tail")
	assert.JSONEq(t, prefix+`
	 "messages": [
	  {"role": "user", "content": [
	    {"type": "text", "text": "Hi."},
	    {"type": "text", "text": "Use a.", "cache_control": {"type": "ephemeral"}}
	  ]},
	  {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}]},
	  {"role": "user", "content": [
	    {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "cache_control": {"type": "ephemeral"}}
	  ]}
	 ]}`, string(srv.Request(t, 1).Body), "turn 2 keeps turn 1's tail breakpoint and adds its own")
}

func TestAnthropic_CachePromptsWithoutSystemOrToolsMarksOnlyMessages(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	m, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: srv.URL, CachePrompts: true})
	require.NoError(t, err)
	_, err = providertest.Collect(m, &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("Hi.")}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"model": "claude-test", "max_tokens": 4096, "stream": true, "messages": [
	  {"role": "user", "content": [{"type": "text", "text": "Hi.", "cache_control": {"type": "ephemeral"}}]}
	]}`, string(srv.Request(t, 0).Body))
}
