package openai_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Retries, cut, early-ended, malformed and cancelled streams, an
// unreachable server and a nil request: the checks every HTTP provider
// passes.
func TestOpenAI_HandlesErrorsAndCancellationAsEveryProviderDoes(t *testing.T) {
	providertest.Errors(t, provider)
}

func TestOpenAI_HTTPErrorBodyBecomesAPIError(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Status: 404,
		Body: []byte(`{"error":{"message":"The model ` + "`nope`" + ` does not exist","type":"invalid_request_error","code":"model_not_found"}}`)})
	_, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	var ae *providers.APIError
	require.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, providers.ErrModelNotFound)
	assert.Equal(t, "model_not_found", ae.Code)
	assert.Contains(t, err.Error(), "openai: HTTP 404")
	assert.Contains(t, err.Error(), "does not exist")
}

func TestOpenAI_ErrorInsideA200StreamIsYieldedLast(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		"data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"rate_limit_exceeded\"}}\n\n"
	srv := providertest.NewSSEServer(t, []byte(body))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	assert.Equal(t, "Hi", providertest.Summarize(chunks).Text)
	assert.ErrorIs(t, err, providers.ErrRateLimited)
	assert.Contains(t, err.Error(), "Rate limit reached")
}

func TestOpenAI_NewNamesTheBadField(t *testing.T) {
	_, err := openai.New(openai.Config{})
	assert.ErrorContains(t, err, "Config.Model")
	_, err = openai.New(openai.Config{Model: "m", BaseURL: "ftp://x"})
	assert.ErrorContains(t, err, "Config.BaseURL")
	_, err = openai.New(openai.Config{Model: "m", MaxTokensField: "tokens"})
	assert.ErrorContains(t, err, "Config.MaxTokensField")
}

func TestOpenAI_LengthWhileACallIsHalfFormedStillYieldsTheCallThenFinishLength(t *testing.T) {
	srv := providertest.NewSSEServer(t, fixtureBody(t, "rig-tool-args-truncated-length.sse"))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	require.NoError(t, err)
	n := len(chunks)
	require.GreaterOrEqual(t, n, 3)
	assert.IsType(t, agentloop.ToolCall{}, chunks[n-3])
	assert.Equal(t, agentloop.Finish{Reason: agentloop.FinishLength}, chunks[n-1])
	// Through the loop the truncated call is not executed.
	ran := false
	tool, err := agentloop.NewRawTool("file_report", "", nil, func(context.Context, json.RawMessage) (string, error) { ran = true; return "", nil })
	require.NoError(t, err)
	agent := &agentloop.Agent{Model: newModel(t, srv.URL), Tools: []*agentloop.Tool{tool}}
	_, err = agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hi")}, nil))
	assert.False(t, ran)
	assert.ErrorIs(t, err, agentloop.ErrTruncated)
}
