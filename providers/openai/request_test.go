package openai_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenAI_RequestMapsHistoryToolsAndSettings(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	m, err := openai.New(openai.Config{Model: "local-model", BaseURL: srv.URL + "/v1/"})
	require.NoError(t, err)
	temp, seed := 0.2, 7
	req := &agentloop.Request{
		System: "Be brief.",
		Messages: agentloop.History{
			agentloop.UserMessage("Weather?"),
			{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
				{Type: agentloop.PartReasoning, Text: "think", Signature: "sig"},
				agentloop.TextPart("Checking."),
				{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "weather", Args: json.RawMessage(`{"city":"Oslo"}`)}},
				{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c2", Name: "now"}},
			}},
			{Role: agentloop.RoleTool, Parts: []agentloop.Part{
				{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c1", Approved: true}},
				{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Content: "12C"}},
			}},
			{Role: agentloop.RoleTool, Parts: []agentloop.Part{
				{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c2", Content: "noon"}},
			}},
			{Role: agentloop.RoleUser, Parts: []agentloop.Part{
				agentloop.TextPart("And this?"),
				{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Data: []byte{1, 2, 3}}},
			}},
		},
		Tools:    []agentloop.ToolDef{{Name: "weather", Description: "Weather.", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}, {Name: "now"}},
		Settings: agentloop.Settings{MaxTokens: 100, Temperature: &temp, Seed: &seed, Stop: []string{"END"}},
	}
	_, err = providertest.Collect(m, req)
	require.NoError(t, err)
	want := `{
	 "model": "local-model",
	 "messages": [
	  {"role": "system", "content": "Be brief."},
	  {"role": "user", "content": "Weather?"},
	  {"role": "assistant", "content": "Checking.", "tool_calls": [
	    {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}},
	    {"id": "c2", "type": "function", "function": {"name": "now", "arguments": "{}"}}
	  ]},
	  {"role": "tool", "content": "12C", "tool_call_id": "c1"},
	  {"role": "tool", "content": "noon", "tool_call_id": "c2"},
	  {"role": "user", "content": [
	    {"type": "text", "text": "And this?"},
	    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AQID"}}
	  ]}
	 ],
	 "tools": [
	  {"type": "function", "function": {"name": "weather", "description": "Weather.", "parameters": {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
	  {"type": "function", "function": {"name": "now", "parameters": {"type":"object","properties":{}}}}
	 ],
	 "stream": true,
	 "stream_options": {"include_usage": true},
	 "max_tokens": 100,
	 "temperature": 0.2,
	 "seed": 7,
	 "stop": ["END"]
	}`
	assert.JSONEq(t, want, string(srv.Request(t, 0).Body))
	assert.Empty(t, srv.Request(t, 0).Header.Get("Authorization"), "no key, no header")
}

func TestOpenAI_ToolCallsWithoutIDsAreYieldedWithoutIDs(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"a\",\"arguments\":\"\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"name\":\"b\",\"arguments\":\"{\\\"x\\\":1}\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
	srv := providertest.NewSSEServer(t, []byte(body))
	req := &agentloop.Request{Messages: agentloop.History{
		agentloop.UserMessage("a"), {Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("b")}}, agentloop.UserMessage("c"),
	}}
	chunks, err := providertest.Collect(newModel(t, srv.URL), req)
	require.NoError(t, err)
	assert.Equal(t, []agentloop.ToolCall{
		{ID: "", Name: "a", Args: json.RawMessage(`{}`)},
		{ID: "", Name: "b", Args: json.RawMessage(`{"x":1}`)},
	}, providertest.Summarize(chunks).Calls, "the provider invents no ids; the loop does")
}

func TestOpenAI_ReasoningFieldIsReasoningToo(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"hmm\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	srv := providertest.NewSSEServer(t, []byte(body))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	require.NoError(t, err)
	s := providertest.Summarize(chunks)
	assert.Equal(t, "hmm", s.Reasoning)
	assert.Equal(t, "ok", s.Text)
	assert.Equal(t, []agentloop.FinishReason{agentloop.FinishStop}, s.Finish)
	assert.Equal(t, "Bearer sk-test", srv.Request(t, 0).Header.Get("Authorization"))
}

func TestOpenAI_FinishReasonsMap(t *testing.T) {
	for reason, want := range map[string]agentloop.FinishReason{
		"stop": agentloop.FinishStop, "length": agentloop.FinishLength, "tool_calls": agentloop.FinishToolCalls,
		"function_call": agentloop.FinishToolCalls, "content_filter": agentloop.FinishContentFilter, "weird": agentloop.FinishOther,
	} {
		srv := providertest.NewSSEServer(t, []byte("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\""+reason+"\"}]}\n\ndata: [DONE]\n\n"))
		chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, []agentloop.FinishReason{want}, providertest.Summarize(chunks).Finish, reason)
	}
}

func TestOpenAI_DefaultBaseURLUsesMaxCompletionTokens(t *testing.T) {
	m, err := openai.New(openai.Config{Model: "gpt-4.1"})
	require.NoError(t, err)
	assert.NotNil(t, m)
	assert.Equal(t, "https://api.openai.com/v1", openai.DefaultBaseURL)
}

// The length limit can fall just after the model finished its calls (Ollama's
// /v1 reports tool_calls then, OpenAI length). Whole calls are run, as every
// provider does; a call cut mid-way makes the turn FinishLength, and the loop
// refuses to run it (ErrTruncated).
func TestOpenAI_LengthAfterWholeCallsRunsThemAndLengthMidCallIsTruncated(t *testing.T) {
	call := func(args, finish string) []byte {
		return []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"function\":{\"name\":\"f\",\"arguments\":" + strconv.Quote(args) + "}}]}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"" + finish + "\"}]}\n\ndata: [DONE]\n\n")
	}
	answer := []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	ran := 0
	f, err := agentloop.NewRawTool("f", "", nil, func(context.Context, json.RawMessage) (string, error) { ran++; return "ok", nil })
	require.NoError(t, err)

	srv := providertest.NewSSEServer(t, call(`{"x":1}`, "length"), answer)
	agent := &agentloop.Agent{Model: newModel(t, srv.URL), Tools: []*agentloop.Tool{f}}
	last, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("q")}, nil))
	require.NoError(t, err)
	assert.Equal(t, "done", last.(agentloop.Final).Text)
	assert.Equal(t, 1, ran)

	srv = providertest.NewSSEServer(t, call(`{"x":`, "length"), answer)
	agent.Model = newModel(t, srv.URL)
	_, err = agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("q")}, nil))
	assert.ErrorIs(t, err, agentloop.ErrTruncated)
	assert.Equal(t, 1, ran, "a cut-off call is not run")
}

func TestOpenAI_ResponseFormatIsSentAsAJSONSchemaResponseFormat(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	m := newModel(t, srv.URL)
	req := providertest.UserRequest("hi")
	req.Settings.ResponseFormat = &agentloop.ResponseFormat{Description: "the forecast", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}
	_, err := providertest.Collect(m, req)
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal(srv.Request(t, 0).Body, &body))
	want := `{"type":"json_schema","json_schema":{"name":"response","description":"the forecast","schema":{"type":"object"},"strict":true}}`
	got, _ := json.Marshal(body["response_format"])
	assert.JSONEq(t, want, string(got), "an empty name is sent as \"response\"")

	req.Settings.ResponseFormat = &agentloop.ResponseFormat{Name: "x"}
	_, err = providertest.Collect(m, req)
	assert.EqualError(t, err, "openai: Settings.ResponseFormat has no Schema")
}

func TestOpenAI_ModelInfoNamesTheProviderAndTheModel(t *testing.T) {
	assert.Equal(t, agentloop.ModelInfo{Provider: "openai", Model: "gpt-test"}, newModel(t, "http://127.0.0.1:1").ModelInfo())
}

// A call that has a name but no argument text yet when the limit falls may
// have been cut right after its name: that stays FinishLength.
func TestOpenAI_LengthAfterACallWithoutArgumentTextIsLength(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n"
	srv := providertest.NewSSEServer(t, []byte(body))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, []agentloop.FinishReason{agentloop.FinishLength}, providertest.Summarize(chunks).Finish)
}

// The usage chunk below has the shape of the API's (the prompt caching
// guide's example figures); no recording with cached tokens was at hand.
func TestOpenAI_UsageReportsCachedAndReasoningTokensAsPartsOfInputAndOutput(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2006,\"completion_tokens\":300,\"total_tokens\":2306," +
		"\"prompt_tokens_details\":{\"cached_tokens\":1920,\"audio_tokens\":0}," +
		"\"completion_tokens_details\":{\"reasoning_tokens\":256,\"audio_tokens\":0}}}\n\n" +
		"data: [DONE]\n\n"
	srv := providertest.NewSSEServer(t, []byte(body))
	chunks, err := providertest.Collect(newModel(t, srv.URL), &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("hi")}})
	require.NoError(t, err)
	assert.Equal(t, []agentloop.Usage{{Input: 2006, Output: 300, CacheRead: 1920, Reasoning: 256}}, providertest.Summarize(chunks).Usage)
}

func TestOpenAI_PromptCacheKeyIsSentAndEachTurnRepeatsThePreviousRequestAsItsPrefix(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	m, err := openai.New(openai.Config{Model: "gpt-4.1", BaseURL: srv.URL, PromptCacheKey: "support-bot"})
	require.NoError(t, err)
	turn1 := agentloop.History{agentloop.UserMessage("Weather?")}
	turn2 := append(turn1[:1:1],
		agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "w", Args: json.RawMessage(`{}`)}}}},
		agentloop.Message{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Name: "w", Content: "sunny"}}}})
	tools := []agentloop.ToolDef{{Name: "w", Schema: json.RawMessage(`{"type":"object","properties":{}}`)}}
	for _, h := range []agentloop.History{turn1, turn2} {
		_, err = providertest.Collect(m, &agentloop.Request{System: "Be brief.", Messages: h, Tools: tools})
		require.NoError(t, err)
	}
	var bodies [2]struct {
		Messages       []json.RawMessage `json:"messages"`
		Tools          json.RawMessage   `json:"tools"`
		PromptCacheKey string            `json:"prompt_cache_key"`
	}
	for i := range bodies {
		require.NoError(t, json.Unmarshal(srv.Request(t, i).Body, &bodies[i]))
		assert.Equal(t, "support-bot", bodies[i].PromptCacheKey)
	}
	// OpenAI caches the longest prefix it saw: the system prompt, the tools
	// and the messages of the previous turn come back byte for byte.
	assert.Equal(t, bodies[0].Tools, bodies[1].Tools)
	assert.Equal(t, bodies[0].Messages, bodies[1].Messages[:len(bodies[0].Messages)])
}
