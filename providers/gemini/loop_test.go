package gemini_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// Two parallel calls without ids (as the Gemini API sends them), a thought
// signature on the first, then the answer. The shape is the API's; the
// figures are made up.
var parallelTurn = sse(
	`{"candidates":[{"content":{"role":"model","parts":[{"text":"Checking both."}]},"index":0}]}`,
	`{"candidates":[{"content":{"role":"model","parts":[`+
		`{"functionCall":{"name":"weather","args":{"city":"Oslo"}},"thoughtSignature":"c2lnLTE="},`+
		`{"functionCall":{"name":"weather","args":{"city":"Lima"}}}]},"finishReason":"STOP","index":0}],`+
		`"usageMetadata":{"promptTokenCount":120,"candidatesTokenCount":30,"thoughtsTokenCount":12,"cachedContentTokenCount":100,"totalTokenCount":162}}`,
)

var answerTurn = sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Oslo 12C, Lima 20C."}]},"finishReason":"STOP","index":0}],` +
	`"usageMetadata":{"promptTokenCount":200,"candidatesTokenCount":9,"totalTokenCount":209}}`)

func TestGemini_ParallelCallsGetTheLoopsIdsAndGoBackWithTheirResponsesAndSignature(t *testing.T) {
	srv := providertest.NewServer(t, providertest.SSE(parallelTurn), providertest.SSE(answerTurn))
	weather, err := agentloop.NewRawTool("weather", "Weather of a city.", json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		func(_ context.Context, args json.RawMessage) (string, error) {
			var a struct{ City string }
			_ = json.Unmarshal(args, &a)
			return map[string]string{"Oslo": "12C", "Lima": "20C"}[a.City], nil
		})
	require.NoError(t, err)
	agent := &agentloop.Agent{Model: newModel(t, srv.URL), System: "Be brief.", Tools: []*agentloop.Tool{weather}}
	last, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("Weather in Oslo and Lima?")}, nil))
	require.NoError(t, err)
	final := last.(agentloop.Final)
	assert.Equal(t, "Oslo 12C, Lima 20C.", final.Text)
	assert.Equal(t, agentloop.Usage{Input: 320, Output: 51, CacheRead: 100, Reasoning: 12}, final.Usage)
	calls := final.History[1].ToolCalls()
	require.Len(t, calls, 2)
	assert.Equal(t, []string{"call_0_0", "call_0_1"}, []string{calls[0].ID, calls[1].ID})

	assert.JSONEq(t, `{
	  "contents": [
	    {"role": "user", "parts": [{"text": "Weather in Oslo and Lima?"}]},
	    {"role": "model", "parts": [
	      {"text": "Checking both."},
	      {"functionCall": {"id": "call_0_0", "name": "weather", "args": {"city": "Oslo"}}, "thoughtSignature": "c2lnLTE="},
	      {"functionCall": {"id": "call_0_1", "name": "weather", "args": {"city": "Lima"}}}
	    ]},
	    {"role": "user", "parts": [
	      {"functionResponse": {"id": "call_0_0", "name": "weather", "response": {"output": "12C"}}},
	      {"functionResponse": {"id": "call_0_1", "name": "weather", "response": {"output": "20C"}}}
	    ]}
	  ],
	  "systemInstruction": {"role": "user", "parts": [{"text": "Be brief."}]},
	  "generationConfig": {},
	  "tools": [{"functionDeclarations": [{"name": "weather", "description": "Weather of a city.",
	    "parametersJsonSchema": {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}]
	}`, string(srv.Request(t, 1).Body))
	assert.Contains(t, srv.Request(t, 0).URL.String(), "/models/gemini-test:streamGenerateContent?alt=sse")
	assert.Equal(t, "test-key", srv.Request(t, 0).Header.Get("x-goog-api-key"))
}
