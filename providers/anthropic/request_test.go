package anthropic_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnthropic_RequestPutsReasoningFirstAndMergesToolResultsIntoOneUserMessage(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	m, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: srv.URL, ThinkingBudget: 2048})
	require.NoError(t, err)
	temp := 0.5
	req := &agentloop.Request{
		System: "Be brief.",
		Messages: agentloop.History{
			agentloop.SystemMessage("Use metric units."),
			agentloop.UserMessage("Weather?"),
			{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
				agentloop.TextPart("Checking."),
				{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "t1", Name: "weather", Args: json.RawMessage(`{"city":"Oslo"}`)}},
				{Type: agentloop.PartReasoning, Text: "think", Signature: "sig"},
				{Type: agentloop.PartReasoning, Redacted: "opaque"},
				{Type: agentloop.PartReasoning, Text: "unsigned, from elsewhere"},
				{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "t2", Name: "ask_user"}},
				{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "t1"}},
			}},
			{Role: agentloop.RoleTool, Parts: []agentloop.Part{
				{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "t1", Approved: true}},
				{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "t1", Name: "weather", Content: "12C"}},
			}},
			{Role: agentloop.RoleTool, Parts: []agentloop.Part{
				{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "t2", Name: "ask_user", Content: "no", IsError: true}},
			}},
		},
		Tools:    []agentloop.ToolDef{{Name: "weather", Description: "Weather of a city.", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}, {Name: "ask_user"}},
		Settings: agentloop.Settings{Temperature: &temp, Stop: []string{"END"}, MaxTokens: 1000},
	}
	_, err = providertest.Collect(m, req)
	require.NoError(t, err)
	want := `{
	 "model": "claude-test",
	 "max_tokens": 6144,
	 "system": "Be brief.\n\nUse metric units.",
	 "messages": [
	  {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
	  {"role": "assistant", "content": [
	    {"type": "thinking", "thinking": "think", "signature": "sig"},
	    {"type": "redacted_thinking", "data": "opaque"},
	    {"type": "text", "text": "Checking."},
	    {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Oslo"}},
	    {"type": "tool_use", "id": "t2", "name": "ask_user", "input": {}}
	  ]},
	  {"role": "user", "content": [
	    {"type": "tool_result", "tool_use_id": "t1", "content": "12C"},
	    {"type": "tool_result", "tool_use_id": "t2", "content": "no", "is_error": true}
	  ]}
	 ],
	 "tools": [
	  {"name": "weather", "description": "Weather of a city.", "input_schema": {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},
	  {"name": "ask_user", "input_schema": {"type":"object","properties":{}}}
	 ],
	 "stream": true,
	 "temperature": 0.5,
	 "stop_sequences": ["END"],
	 "thinking": {"type": "enabled", "budget_tokens": 2048}
	}`
	assert.JSONEq(t, want, string(srv.Request(t, 0).Body))
}

func TestAnthropic_MissingToolUseIDIsLeftEmpty(t *testing.T) {
	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"name\":\"f\",\"input\":{}}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	srv := providertest.NewSSEServer(t, []byte(body))
	req := &agentloop.Request{Messages: agentloop.History{
		agentloop.UserMessage("a"), {Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("b")}}, agentloop.UserMessage("c"),
	}}
	chunks, err := providertest.Collect(newModel(t, srv.URL), req)
	require.NoError(t, err)
	s := providertest.Summarize(chunks)
	require.Len(t, s.Calls, 1)
	assert.Equal(t, agentloop.ToolCall{ID: "", Name: "f", Args: json.RawMessage(`{}`)}, s.Calls[0], "the provider invents no ids; the loop does")
}

func TestAnthropic_StopReasonsMapOntoFinishReasons(t *testing.T) {
	for stop, want := range map[string]agentloop.FinishReason{
		"end_turn": agentloop.FinishStop, "stop_sequence": agentloop.FinishStop, "tool_use": agentloop.FinishToolCalls,
		"max_tokens": agentloop.FinishLength, "refusal": agentloop.FinishContentFilter, "pause_turn": agentloop.FinishOther,
	} {
		body := "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" + stop + "\"}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		srv := providertest.NewSSEServer(t, []byte(body))
		chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, []agentloop.FinishReason{want}, providertest.Summarize(chunks).Finish, stop)
	}
}

// The length limit can fall just after the model finished its calls. Whole
// calls are run, as every provider does; a call cut mid-way makes the turn
// FinishLength, and the loop refuses to run it (ErrTruncated).
func TestAnthropic_MaxTokensAfterWholeCallsRunsThemAndMidCallIsTruncated(t *testing.T) {
	call := func(args string) []byte {
		return []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":" + strconv.Quote(args) + "}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":5}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}
	ran := 0
	f, err := agentloop.NewRawTool("f", "", nil, func(context.Context, json.RawMessage) (string, error) { ran++; return "ok", nil })
	require.NoError(t, err)

	srv := providertest.NewSSEServer(t, call(`{"x":1}`), []byte(textBody))
	agent := &agentloop.Agent{Model: newModel(t, srv.URL), Tools: []*agentloop.Tool{f}}
	_, err = agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("q")}, nil))
	require.NoError(t, err)
	assert.Equal(t, 1, ran)

	srv = providertest.NewSSEServer(t, call(`{"x":`), []byte(textBody))
	agent.Model = newModel(t, srv.URL)
	_, err = agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("q")}, nil))
	assert.ErrorIs(t, err, agentloop.ErrTruncated)
	assert.Equal(t, 1, ran, "a cut-off call is not run")
}

func TestAnthropic_ResponseFormatIsSentAsNativeStructuredOutput(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	m := newModel(t, srv.URL)
	req := providertest.UserRequest("hi")
	req.Settings.ResponseFormat = &agentloop.ResponseFormat{Name: "forecast", Schema: json.RawMessage(`{"type":"object","additionalProperties":false}`)}
	_, err := providertest.Collect(m, req)
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal(srv.Request(t, 0).Body, &body))
	got, _ := json.Marshal(body["output_config"])
	assert.JSONEq(t, `{"format":{"type":"json_schema","schema":{"type":"object","additionalProperties":false}}}`, string(got))
	assert.NotContains(t, body, "tool_choice", "tools stay free")

	req.Settings.ResponseFormat = &agentloop.ResponseFormat{Name: "x"}
	_, err = providertest.Collect(m, req)
	assert.EqualError(t, err, "anthropic: Settings.ResponseFormat has no Schema")
}

func TestAnthropic_ModelInfoNamesTheProviderAndTheModel(t *testing.T) {
	m, err := anthropic.New(anthropic.Config{Model: "claude-test"})
	require.NoError(t, err)
	assert.Equal(t, agentloop.ModelInfo{Provider: "anthropic", Model: "claude-test"}, m.ModelInfo())
}

// Whether max_tokens after a tool_use block without input deltas is a whole
// call depends on its start input: a non-empty object is whole, {} may be a
// call cut right after its name.
func TestAnthropic_MaxTokensAfterAToolUseWithoutDeltasDependsOnItsStartInput(t *testing.T) {
	body := func(input string) []byte {
		return []byte("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":" + input + "}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}
	for input, want := range map[string]agentloop.FinishReason{`{"x":1}`: agentloop.FinishToolCalls, `{}`: agentloop.FinishLength} {
		srv := providertest.NewSSEServer(t, body(input))
		chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, []agentloop.FinishReason{want}, providertest.Summarize(chunks).Finish, "start input %s", input)
	}
}
