package ollama

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func requestJSON(t *testing.T, m *Model, req *agentloop.Request) map[string]any {
	t.Helper()
	cr, err := m.chatRequest(req)
	require.NoError(t, err)
	b, err := json.Marshal(cr)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

func fullHistory() agentloop.History {
	return agentloop.History{
		agentloop.SystemMessage("Be brief."),
		{Role: agentloop.RoleUser, Parts: []agentloop.Part{
			agentloop.TextPart("What is in "),
			agentloop.TextPart("these?"),
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Data: []byte("PNG1")}},
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/jpeg", URL: "data:image/jpeg;base64,SlBHMg=="}},
		}},
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartReasoning, Text: "Look "},
			{Type: agentloop.PartReasoning, Text: "closely.", Signature: "ignored-by-ollama"},
			agentloop.TextPart("Checking."),
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "call_0_0", Name: "inspect", Args: json.RawMessage(`{"image":1,"detail":"high"}`)}},
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "srv-7", Name: "delete", Args: json.RawMessage(`{"path":"/tmp/x"`)}},
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "srv-7", ID: "approval_srv-7"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "call_0_0", Name: "inspect", Content: `{"kind":"cat"}`}},
			{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "srv-7", ID: "approval_srv-7", Approved: false}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "srv-7", Name: "delete", Content: "The user denied this tool call.", IsError: true}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "srv-7", Approved: true}},
		}},
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("A cat.")}},
	}
}

func TestOllama_HistoryMapsToOllamaMessages(t *testing.T) {
	m := newTestModel(t, Config{Host: "http://127.0.0.1:1"})
	got := requestJSON(t, m, &agentloop.Request{System: "You are helpful.", Messages: fullHistory()})

	want := mustJSON(t, `[
	  {"role":"system","content":"You are helpful."},
	  {"role":"system","content":"Be brief."},
	  {"role":"user","content":"What is in these?","images":["UE5HMQ==","SlBHMg=="]},
	  {"role":"assistant","content":"Checking.","thinking":"Look closely.","tool_calls":[
	    {"id":"call_0_0","function":{"index":0,"name":"inspect","arguments":{"image":1,"detail":"high"}}},
	    {"id":"srv-7","function":{"index":1,"name":"delete","arguments":{}}}
	  ]},
	  {"role":"tool","content":"{\"kind\":\"cat\"}","tool_name":"inspect","tool_call_id":"call_0_0"},
	  {"role":"tool","content":"The user denied this tool call.","tool_name":"delete","tool_call_id":"srv-7"},
	  {"role":"assistant","content":"A cat."}
	]`)
	if diff := cmp.Diff(want, got["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestOllama_StreamDoesNotModifyTheRequest(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := newNDJSONServer(t, lines(`{"model":"m","message":{"role":"assistant","content":"ok"},"done":true,"done_reason":"stop"}`))
		m := rd.model(t, srv.URL, Config{Options: map[string]any{"top_k": 3}})
		build := func() *agentloop.Request {
			temp := 0.5
			return &agentloop.Request{
				System: "s", Messages: fullHistory(),
				Tools:    []agentloop.ToolDef{{Name: "f", Schema: json.RawMessage(`{"type":"object"}`)}},
				Settings: agentloop.Settings{Temperature: &temp, Stop: []string{"x"}},
			}
		}
		req := build()
		got := stream(m, req)
		require.NoError(t, got.Err)
		if diff := cmp.Diff(build(), req); diff != "" {
			t.Errorf("request changed (-before +after):\n%s", diff)
		}
		assert.Equal(t, map[string]any{"top_k": 3}, m.cfg.Options, "Config.Options is not modified")
	})
}

func TestOllama_OptionsMergeConfigThenRequestSettings(t *testing.T) {
	temp, reqTemp, topP, seed := 0.2, 0.9, 0.8, 42
	keep := -time.Second
	m := newTestModel(t, Config{
		Host:        "http://127.0.0.1:1",
		Temperature: &temp, NumCtx: 8192, KeepAlive: &keep, Think: ThinkHigh,
		Options: map[string]any{"top_k": 20, "temperature": 1.5, "num_ctx": 1},
	})

	got := requestJSON(t, m, userRequest("hi"))
	assert.Equal(t, map[string]any{"top_k": 20.0, "temperature": 0.2, "num_ctx": 8192.0}, got["options"])
	assert.Equal(t, -1.0, got["keep_alive"], "a negative keep-alive keeps the model loaded")
	assert.Equal(t, "high", got["think"])
	assert.Equal(t, true, got["stream"])

	req := userRequest("hi")
	req.Settings = agentloop.Settings{MaxTokens: 64, Temperature: &reqTemp, TopP: &topP, Seed: &seed, Stop: []string{"END"}}
	got = requestJSON(t, m, req)
	assert.Equal(t, map[string]any{
		"top_k": 20.0, "temperature": 0.9, "num_ctx": 8192.0,
		"num_predict": 64.0, "top_p": 0.8, "seed": 42.0, "stop": []any{"END"},
	}, got["options"])
}

func TestOllama_ThinkModesAreSentAsOllamasThinkValue(t *testing.T) {
	for mode, want := range map[ThinkMode]any{
		ThinkDefault: nil, ThinkOn: true, ThinkOff: false,
		ThinkLow: "low", ThinkMedium: "medium", ThinkHigh: "high",
	} {
		m := newTestModel(t, Config{Host: "http://127.0.0.1:1", Think: mode})
		got := requestJSON(t, m, userRequest("hi"))
		assert.Equal(t, want, got["think"], "mode %q", mode)
	}
}

func TestOllama_ToolSchemasMapToOllamasToolType(t *testing.T) {
	m := newTestModel(t, Config{Host: "http://127.0.0.1:1"})
	req := userRequest("hi")
	req.Tools = []agentloop.ToolDef{
		{Name: "weather", Description: "Get the weather.", Schema: json.RawMessage(`{
			"type":"object","additionalProperties":false,
			"properties":{
				"city":{"type":"string","description":"City name"},
				"unit":{"type":"string","enum":["c","f"]},
				"days":{"type":["integer","null"],"minimum":1},
				"where":{"type":"object","properties":{"lat":{"type":"number"}}},
				"tags":{"type":"array","items":{"type":"string"}}
			},
			"required":["city","unit"]}`)},
		{Name: "ping"},
	}
	got := requestJSON(t, m, req)
	want := mustJSON(t, `[
	  {"type":"function","function":{"name":"weather","description":"Get the weather.","parameters":{
	    "type":"object","required":["city","unit"],
	    "properties":{
	      "city":{"type":"string","description":"City name"},
	      "unit":{"type":"string","enum":["c","f"]},
	      "days":{"type":["integer","null"]},
	      "where":{"type":"object","properties":{"lat":{"type":"number"}}},
	      "tags":{"type":"array","items":{"type":"string"}}
	    }}}},
	  {"type":"function","function":{"name":"ping","parameters":{"type":"object","properties":{}}}}
	]`)
	if diff := cmp.Diff(want, got["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestOllama_SchemaThatDoesNotFitIsAnErrorNamingTheTool(t *testing.T) {
	m := newTestModel(t, Config{Host: "http://127.0.0.1:1"})
	for _, tc := range []struct {
		schema string
		want   string
	}{
		{`{"type":"array","items":{"type":"string"}}`, `ollama: tool "bad": its schema has type "array"; tool arguments must be an object`},
		{`{"type":"object","properties":[1,2]}`, `ollama: tool "bad": its schema does not fit Ollama's tool parameters`},
		{`{"type":"object","required":"city"}`, `ollama: tool "bad": its schema does not fit Ollama's tool parameters`},
		{`[]`, `ollama: tool "bad": its schema does not fit Ollama's tool parameters`},
	} {
		req := userRequest("hi")
		req.Tools = []agentloop.ToolDef{{Name: "good"}, {Name: "bad", Schema: json.RawMessage(tc.schema)}}
		got := stream(m, req)
		require.Error(t, got.Err, tc.schema)
		assert.ErrorContains(t, got.Err, tc.want, tc.schema)
		assert.Equal(t, 0, got.ErrIndex, "the error is the only element")
	}
}

func TestNew_RejectsAnInvalidConfigNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "Config.Model is empty"},
		{Config{Model: "  "}, "Config.Model is empty"},
		{Config{Model: "m", Think: "maybe"}, `Config.Think is "maybe"`},
		{Config{Model: "m", Host: "localhost:11434"}, `Config.Host "localhost:11434" is not an http:// or https:// URL`},
		{Config{Model: "m", Host: "ftp://h"}, `Config.Host "ftp://h"`},
	} {
		_, err := New(tc.cfg)
		assert.ErrorContains(t, err, tc.want)
	}
}

func TestNew_UsesOLLAMA_HOSTWhenNoHostIsGiven(t *testing.T) {
	srv := newNDJSONServer(t, lines(`{"model":"m","message":{"role":"assistant","content":"hi"},"done":true,"done_reason":"stop"}`))
	t.Setenv("OLLAMA_HOST", srv.URL)
	m := newTestModel(t, Config{})
	got := stream(m, userRequest("hi"))
	require.NoError(t, got.Err)
	assert.Equal(t, "hi", got.Text)
	require.Len(t, srv.Requests(), 1)
	assert.Equal(t, "/api/chat", srv.Requests()[0].URL.Path)

	assert.Equal(t, Config{Model: "x", Host: srv.URL}, ConfigFromEnv("x"))
}

func TestNew_ConfigHostTakesPrecedenceOverOLLAMA_HOST(t *testing.T) {
	srv := newNDJSONServer(t, lines(`{"model":"m","message":{"role":"assistant","content":"hi"},"done":true,"done_reason":"stop"}`))
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:1")
	m := newTestModel(t, Config{Host: srv.URL})
	got := stream(m, userRequest("hi"))
	require.NoError(t, got.Err)
	assert.Len(t, srv.Requests(), 1)
}

func TestRequest_ResponseFormatIsSentAsFormatAndAnEmptySchemaIsRefused(t *testing.T) {
	m := newTestModel(t, Config{Model: "m"})
	req := userRequest("Weather?")
	req.Settings.ResponseFormat = &agentloop.ResponseFormat{Name: "forecast", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	got := requestJSON(t, m, req)
	assert.Equal(t, mustJSON(t, `{"type":"object","properties":{"city":{"type":"string"}}}`), got["format"])

	assert.NotContains(t, requestJSON(t, m, userRequest("x")), "format", "no format without a ResponseFormat")

	req.Settings.ResponseFormat = &agentloop.ResponseFormat{Name: "forecast"}
	_, err := m.chatRequest(req)
	assert.EqualError(t, err, "ollama: Settings.ResponseFormat has no Schema")
}

func TestOllama_ModelInfoNamesTheProviderAndTheModel(t *testing.T) {
	m := newTestModel(t, Config{Model: "qwen3:4b"})
	assert.Equal(t, agentloop.ModelInfo{Provider: "ollama", Model: "qwen3:4b"}, m.ModelInfo())
}
