package gemini_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/gemini"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

func TestGemini_SettingsResponseFormatAndThinkingGoInTheGenerationConfig(t *testing.T) {
	srv := providertest.NewSSEServer(t, okBody)
	m := newModel(t, srv.URL, func(c *gemini.Config) { c.IncludeThoughts, c.ThinkingBudget = true, 1024 })
	temp, topP, seed := 0.5, 0.9, 7
	_, err := providertest.Collect(m, &agentloop.Request{
		Messages: agentloop.History{agentloop.UserMessage("hi")},
		Settings: agentloop.Settings{MaxTokens: 300, Temperature: &temp, TopP: &topP, Seed: &seed, Stop: []string{"END"},
			ResponseFormat: &agentloop.ResponseFormat{Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)}},
	})
	require.NoError(t, err)
	var body struct {
		GenerationConfig json.RawMessage `json:"generationConfig"`
	}
	require.NoError(t, json.Unmarshal(srv.Request(t, 0).Body, &body))
	assert.JSONEq(t, `{
	  "maxOutputTokens": 300, "temperature": 0.5, "topP": 0.9, "seed": 7, "stopSequences": ["END"],
	  "responseMimeType": "application/json",
	  "responseJsonSchema": {"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},
	  "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 1024}
	}`, string(body.GenerationConfig))
}

func TestGemini_ResponseFormatWithoutASchemaIsAnError(t *testing.T) {
	_, err := providertest.Collect(newModel(t, "http://127.0.0.1:1"), &agentloop.Request{Settings: agentloop.Settings{ResponseFormat: &agentloop.ResponseFormat{}}})
	require.EqualError(t, err, "gemini: Settings.ResponseFormat has no Schema")
}

func TestGemini_ThoughtsAreReasoningClosedByTheirSignature(t *testing.T) {
	srv := providertest.NewServer(t, providertest.SSE(sse(
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"**Planning**\n\nCount the r's.","thought":true}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"Three.","thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],`+
			`"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":71,"cachedContentTokenCount":4,"toolUsePromptTokenCount":65,"thoughtsTokenCount":89,"totalTokenCount":237}}`,
	)))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, []agentloop.Chunk{
		agentloop.ReasoningDelta{Text: "**Planning**\n\nCount the r's."},
		agentloop.ReasoningEnd{Signature: "c2ln"},
		agentloop.TextDelta{Text: "Three."},
		// The counts of vercel/ai's google-usage-raw-live recording: totalTokenCount 237 = Input + Output.
		agentloop.Usage{Input: 12 + 65, Output: 71 + 89, CacheRead: 4, Reasoning: 89},
		agentloop.Finish{Reason: agentloop.FinishStop},
	}, chunks)
}

func TestGemini_SignatureWithNothingAfterItGoesBackOnAPartOfItsOwn(t *testing.T) {
	srv := providertest.NewSSEServer(t, okBody)
	_, err := providertest.Collect(newModel(t, srv.URL), &agentloop.Request{Messages: agentloop.History{
		agentloop.UserMessage("hi"),
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("Hello."), {Type: agentloop.PartReasoning, Signature: "c2ln"}}},
		agentloop.UserMessage("again"),
	}})
	require.NoError(t, err)
	var body struct {
		Contents json.RawMessage `json:"contents"`
	}
	require.NoError(t, json.Unmarshal(srv.Request(t, 0).Body, &body))
	assert.JSONEq(t, `[
	  {"role": "user", "parts": [{"text": "hi"}]},
	  {"role": "model", "parts": [{"text": "Hello."}, {"thoughtSignature": "c2ln"}]},
	  {"role": "user", "parts": [{"text": "again"}]}
	]`, string(body.Contents))
}

func TestGemini_FinishReasonsMapLikeTheOtherProviders(t *testing.T) {
	for reason, want := range map[string]agentloop.FinishReason{
		"STOP": agentloop.FinishStop, "MAX_TOKENS": agentloop.FinishLength, "SAFETY": agentloop.FinishContentFilter,
		"RECITATION": agentloop.FinishContentFilter, "PROHIBITED_CONTENT": agentloop.FinishContentFilter,
		"MALFORMED_FUNCTION_CALL": agentloop.FinishOther, "OTHER": agentloop.FinishOther,
	} {
		srv := providertest.NewSSEServer(t, sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"finishReason":"`+reason+`"}]}`))
		chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
		require.NoError(t, err, reason)
		assert.Equal(t, agentloop.Finish{Reason: want}, chunks[len(chunks)-1], reason)
	}
	srv := providertest.NewSSEServer(t, sse(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":5,"totalTokenCount":5}}`))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, []agentloop.Chunk{agentloop.Usage{Input: 5}, agentloop.Finish{Reason: agentloop.FinishContentFilter}}, chunks, "a blocked prompt")
}

func TestGemini_ModelInfoNamesTheProviderAsOpenTelemetryDoes(t *testing.T) {
	assert.Equal(t, agentloop.ModelInfo{Provider: "gcp.gemini", Model: "gemini-test"}, newModel(t, "http://127.0.0.1:1").ModelInfo())
}

func TestGemini_FilesGoAsInlineDataOrFileData(t *testing.T) {
	srv := providertest.NewSSEServer(t, okBody)
	_, err := providertest.Collect(newModel(t, srv.URL), &agentloop.Request{Messages: agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{
		agentloop.TextPart("What is this?"),
		{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Data: []byte("png!")}},
		{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "application/pdf", URL: "gs://bucket/doc.pdf"}},
		{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/gif", URL: "data:image/gif;base64,Z2lmIQ=="}},
	}}}})
	require.NoError(t, err)
	var body struct {
		Contents json.RawMessage `json:"contents"`
	}
	require.NoError(t, json.Unmarshal(srv.Request(t, 0).Body, &body))
	assert.JSONEq(t, `[{"role": "user", "parts": [
	  {"text": "What is this?"},
	  {"inlineData": {"mimeType": "image/png", "data": "cG5nIQ=="}},
	  {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://bucket/doc.pdf"}},
	  {"inlineData": {"mimeType": "image/gif", "data": "Z2lmIQ=="}}
	]}]`, string(body.Contents))
}

func TestGemini_TheKeyComesFromTheEnvironmentAsTheSDKReadsIt(t *testing.T) {
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "from-env")
	srv := providertest.NewSSEServer(t, okBody)
	_, err := providertest.Collect(newModel(t, srv.URL, func(c *gemini.Config) { c.APIKey = "" }), providertest.UserRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, "from-env", srv.Request(t, 0).Header.Get("x-goog-api-key"))
}

func TestGemini_VertexIsChosenByConfigOrByTheEnvironment(t *testing.T) {
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "")
	srv := providertest.NewSSEServer(t, okBody)
	// With an API key (Vertex AI express mode), no Google credentials are needed.
	m := newModel(t, srv.URL, func(c *gemini.Config) { c.Vertex = true })
	assert.Equal(t, agentloop.ModelInfo{Provider: "gcp.vertex_ai", Model: "gemini-test"}, m.ModelInfo())
	_, err := providertest.Collect(m, providertest.UserRequest("hi"))
	require.NoError(t, err)
	assert.Contains(t, srv.Request(t, 0).URL.String(), "/publishers/google/models/gemini-test:streamGenerateContent?alt=sse")

	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
	assert.Equal(t, "gcp.vertex_ai", newModel(t, srv.URL).ModelInfo().Provider)
}

func TestGemini_MaxTokensAfterWholeCallsRunsThem(t *testing.T) {
	srv := providertest.NewSSEServer(t, sse(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"ping"}}]},"finishReason":"MAX_TOKENS"}]}`))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, []agentloop.Chunk{
		agentloop.ToolCall{Name: "ping", Args: json.RawMessage(`{}`)},
		agentloop.Finish{Reason: agentloop.FinishToolCalls},
	}, chunks)
}
