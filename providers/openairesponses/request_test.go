package openairesponses_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/agentloop/agentloop/providers/openairesponses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResponses_RequestMapsHistorySettingsAndTools(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	m, err := openairesponses.New(openairesponses.Config{Model: "gpt-5", BaseURL: srv.URL + "/", ReasoningEffort: "low", ReasoningSummary: "auto"})
	require.NoError(t, err)
	temp, topP, seed := 0.2, 0.9, 7
	weather, err := agentloop.NewClientTool("weather", "Weather of a city.", json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`))
	require.NoError(t, err)
	req := &agentloop.Request{
		System: "Be brief.",
		Messages: agentloop.History{
			agentloop.SystemMessage("Use metric units."),
			{Role: agentloop.RoleUser, Parts: []agentloop.Part{
				agentloop.TextPart("What is this?"),
				{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Data: []byte("PNG")}},
			}},
			{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
				{Type: agentloop.PartReasoning, Text: "Look at it.", Signature: "rs_1", Redacted: "enc1"},
				{Type: agentloop.PartReasoning, Text: "from another provider", Signature: "EqQBCkYIBx"},
				agentloop.TextPart("Checking "), agentloop.TextPart("the weather."),
				{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "call_1", Name: "weather", Args: json.RawMessage(`{"city":"Paris"}`)}},
				{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "call_2", Name: "weather"}},
			}},
			{Role: agentloop.RoleTool, Parts: []agentloop.Part{
				{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "call_1", Name: "weather", Content: "sunny"}},
				{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "call_2", Name: "weather", Content: "no city", IsError: true}},
			}},
		},
		Tools:    []agentloop.ToolDef{weather.Def(), {Name: "now"}},
		Settings: agentloop.Settings{MaxTokens: 100, Temperature: &temp, TopP: &topP, Seed: &seed},
	}
	_, err = providertest.Collect(m, req)
	require.NoError(t, err)
	want := `{
	 "model": "gpt-5",
	 "instructions": "Be brief.",
	 "input": [
	  {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Use metric units."}]},
	  {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is this?"}, {"type": "input_image", "image_url": "data:image/png;base64,UE5H"}]},
	  {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look at it."}], "encrypted_content": "enc1"},
	  {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking the weather."}]},
	  {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{\"city\":\"Paris\"}"},
	  {"type": "function_call", "call_id": "call_2", "name": "weather", "arguments": "{}"},
	  {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
	  {"type": "function_call_output", "call_id": "call_2", "output": "no city"}
	 ],
	 "tools": [
	  {"type": "function", "name": "weather", "description": "Weather of a city.", "parameters": {"type":"object","properties":{"city":{"type":"string"}}}, "strict": false},
	  {"type": "function", "name": "now", "parameters": {"type":"object","properties":{}}, "strict": false}
	 ],
	 "stream": true,
	 "store": false,
	 "include": ["reasoning.encrypted_content"],
	 "max_output_tokens": 100,
	 "temperature": 0.2,
	 "top_p": 0.9,
	 "reasoning": {"effort": "low", "summary": "auto"}
	}`
	got, _ := json.Marshal(srv.Request(t, 0).JSON(t))
	assert.JSONEq(t, want, string(got))
	assert.Empty(t, srv.Request(t, 0).Header.Get("Authorization"), "no key, no header")
	assert.Equal(t, "text/event-stream", srv.Request(t, 0).Header.Get("Accept"))
}

func TestResponses_StoreTrueDropsTheEncryptedReasoningInclude(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	m, err := openairesponses.New(openairesponses.Config{Model: "gpt-5", BaseURL: srv.URL, Store: true})
	require.NoError(t, err)
	_, err = providertest.Collect(m, providertest.UserRequest("hi"))
	require.NoError(t, err)
	body := srv.Request(t, 0).JSON(t)
	assert.Equal(t, true, body["store"])
	assert.NotContains(t, body, "include")
	assert.NotContains(t, body, "reasoning")
}

func TestResponses_ResponseFormatIsTextFormatAndStopIsRefused(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	m := newModel(t, srv.URL)
	req := providertest.UserRequest("hi")
	req.Settings.ResponseFormat = &agentloop.ResponseFormat{Name: "forecast", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}
	_, err := providertest.Collect(m, req)
	require.NoError(t, err)
	got, _ := json.Marshal(srv.Request(t, 0).JSON(t)["text"])
	assert.JSONEq(t, `{"format":{"type":"json_schema","name":"forecast","schema":{"type":"object"},"strict":true}}`, string(got))

	req.Settings.ResponseFormat = &agentloop.ResponseFormat{}
	_, err = providertest.Collect(m, req)
	assert.EqualError(t, err, "openai: Settings.ResponseFormat has no Schema")

	req = providertest.UserRequest("hi")
	req.Settings.Stop = []string{"END"}
	_, err = providertest.Collect(m, req)
	assert.ErrorContains(t, err, "no stop sequences")
}

func TestResponses_AFileTheAPICannotTakeIsAnErrorNamingIt(t *testing.T) {
	req := &agentloop.Request{Messages: agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{
		{Type: agentloop.PartFile, File: &agentloop.File{Filename: "notes.txt", MediaType: "text/plain", Data: []byte("x")}},
	}}}}
	_, err := providertest.Collect(newModel(t, "http://127.0.0.1:1"), req)
	assert.EqualError(t, err, `openai: message 0 part 0: file "notes.txt" (text/plain) cannot be sent: the Responses API takes images and PDFs only`)
}

func TestResponses_CallsWithoutIDsAreYieldedWithoutIDs(t *testing.T) {
	body := "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":\"\"}}\n\n" +
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":\"{}\",\"status\":\"completed\"}}\n\n" + completed
	srv := providertest.NewSSEServer(t, []byte(body))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, []agentloop.ToolCall{{ID: "", Name: "f", Args: json.RawMessage(`{}`)}}, providertest.Summarize(chunks).Calls, "the loop makes ids")
}

// The length limit just after whole calls runs them; a call cut mid-way
// (the recorded response.incomplete) is FinishLength and is not run.
func TestResponses_IncompleteAfterWholeCallsRunsThemAndMidCallIsTruncated(t *testing.T) {
	call := func(args, status string) []byte {
		return []byte("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"call_1\",\"name\":\"f\",\"arguments\":\"\"}}\n\n" +
			"event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":" + strconv.Quote(args) + "}\n\n" +
			"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"call_1\",\"name\":\"f\",\"arguments\":" + strconv.Quote(args) + ",\"status\":\"" + status + "\"}}\n\n" +
			"event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"}}}\n\n")
	}
	ran := 0
	f, err := agentloop.NewRawTool("f", "", nil, func(context.Context, json.RawMessage) (string, error) { ran++; return "ok", nil })
	require.NoError(t, err)
	srv := providertest.NewSSEServer(t, call(`{"x":1}`, "completed"), []byte(textBody))
	agent := &agentloop.Agent{Model: newModel(t, srv.URL), Tools: []*agentloop.Tool{f}}
	_, err = agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("q")}, nil))
	require.NoError(t, err)
	assert.Equal(t, 1, ran)

	srv = providertest.NewSSEServer(t, providertest.Testdata(t, "rig-incomplete-mid-tool-call.sse"))
	add, err := agentloop.NewRawTool("add", "", nil, func(context.Context, json.RawMessage) (string, error) { ran++; return "ok", nil })
	require.NoError(t, err)
	agent = &agentloop.Agent{Model: newModel(t, srv.URL), Tools: []*agentloop.Tool{add}}
	_, err = agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("q")}, nil))
	assert.ErrorIs(t, err, agentloop.ErrTruncated)
	assert.Equal(t, 1, ran, "the cut-off call is not run")
}

func TestResponses_RefusalIsTextWithContentFilter(t *testing.T) {
	body := "event: response.refusal.delta\ndata: {\"type\":\"response.refusal.delta\",\"output_index\":0,\"delta\":\"I can't help with that.\"}\n\n" + completed
	srv := providertest.NewSSEServer(t, []byte(body))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	require.NoError(t, err)
	s := providertest.Summarize(chunks)
	assert.Equal(t, "I can't help with that.", s.Text)
	assert.Equal(t, []agentloop.FinishReason{agentloop.FinishContentFilter}, s.Finish)
}

func TestResponses_SummaryPartsAreSeparatedByABlankLine(t *testing.T) {
	ev := func(typ, rest string) string {
		return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\",\"output_index\":0" + rest + "}\n\n"
	}
	body := ev("response.output_item.added", `,"item":{"type":"reasoning","id":"rs_9"}`) +
		ev("response.reasoning_summary_part.added", `,"summary_index":0`) +
		ev("response.reasoning_summary_text.delta", `,"summary_index":0,"delta":"One."`) +
		ev("response.reasoning_summary_part.added", `,"summary_index":1`) +
		ev("response.reasoning_summary_text.delta", `,"summary_index":1,"delta":"Two."`) +
		ev("response.output_item.done", `,"item":{"type":"reasoning","id":"rs_9","encrypted_content":"E"}`) + completed
	srv := providertest.NewSSEServer(t, []byte(body))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	require.NoError(t, err)
	s := providertest.Summarize(chunks)
	assert.Equal(t, "One.\n\nTwo.", s.Reasoning)
	assert.Equal(t, []agentloop.ReasoningEnd{{Signature: "rs_9", Redacted: "E"}}, s.ReasoningEnds)
}

func TestResponses_ModelInfoNamesTheProviderAndTheModel(t *testing.T) {
	assert.Equal(t, agentloop.ModelInfo{Provider: "openai", Model: "gpt-test"}, newModel(t, "http://127.0.0.1:1").ModelInfo())
}

// The response.completed event below has the shape of the API's; no
// recording with cached tokens was at hand.
func TestResponses_UsageReportsCachedAndReasoningTokensAsPartsOfInputAndOutput(t *testing.T) {
	body := "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[]," +
		"\"usage\":{\"input_tokens\":2006,\"input_tokens_details\":{\"cached_tokens\":1920}," +
		"\"output_tokens\":300,\"output_tokens_details\":{\"reasoning_tokens\":256},\"total_tokens\":2306}}}\n\n"
	srv := providertest.NewSSEServer(t, []byte(body))
	chunks, err := providertest.Collect(newModel(t, srv.URL), &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("hi")}})
	require.NoError(t, err)
	assert.Equal(t, []agentloop.Usage{{Input: 2006, Output: 300, CacheRead: 1920, Reasoning: 256}}, providertest.Summarize(chunks).Usage)
}

func TestResponses_PromptCacheKeyIsSentWhenSet(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody), []byte(textBody))
	for i, key := range []string{"support-bot", ""} {
		m, err := openairesponses.New(openairesponses.Config{Model: "gpt-5", BaseURL: srv.URL, PromptCacheKey: key})
		require.NoError(t, err)
		_, err = providertest.Collect(m, &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("hi")}})
		require.NoError(t, err)
		got, ok := srv.Request(t, i).JSON(t)["prompt_cache_key"]
		assert.Equal(t, key != "", ok)
		if ok {
			assert.Equal(t, key, got)
		}
	}
}
