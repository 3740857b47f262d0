package gemini_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/gemini"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

var okBody = []byte("data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"ok\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n")

// The error body of the API, as it answers a bad key.
var badKeyBody = []byte(`{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
  "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}`)

// Retries, cut, early-ended and cancelled streams, an unreachable server
// and a nil request: the checks every HTTP provider passes.
func TestGemini_HandlesErrorsAndCancellationAsEveryProviderDoes(t *testing.T) {
	providertest.Errors(t, provider)
}

func TestGemini_429AfterTheLastTryIsAnAPIErrorWithTheAPIsMessage(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, Body: []byte(`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`)})
	_, err := providertest.Collect(newModel(t, srv.URL, func(c *gemini.Config) { c.MaxAttempts = 2 }), providertest.UserRequest("hi"))
	require.ErrorIs(t, err, providers.ErrRateLimited)
	assert.Len(t, srv.Requests(), 2)
	assert.EqualError(t, err, "gemini: HTTP 429 (RESOURCE_EXHAUSTED): Resource has been exhausted (e.g. check quota).")
}

func TestGemini_400ReachesTheUserWithTheAPIsOwnMessage(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Status: http.StatusBadRequest, Body: badKeyBody})
	_, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	var apiErr *providers.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, providers.APIError{Provider: "gemini", StatusCode: 400, Type: "INVALID_ARGUMENT",
		Message: "API key not valid. Please pass a valid API key."}, *apiErr)
	assert.ErrorIs(t, err, providers.ErrInvalidRequest)
	assert.Contains(t, err.Error(), "API key not valid. Please pass a valid API key.")
	assert.Len(t, srv.Requests(), 1, "a 400 is not retried")
}

func TestGemini_ErrorInsideA200StreamIsAnAPIError(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte("data: {\"error\":{\"code\":500,\"message\":\"An internal error has occurred.\",\"status\":\"INTERNAL\"}}\r\n\r\n"))
	_, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	var apiErr *providers.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "An internal error has occurred.", apiErr.Message)
	assert.Equal(t, "INTERNAL", apiErr.Type)
}

func TestGemini_NewNamesWhatIsMissing(t *testing.T) {
	_, err := gemini.New(context.Background(), gemini.Config{})
	require.EqualError(t, err, "gemini: Config.Model is required")
	_, err = gemini.New(context.Background(), gemini.Config{Model: "m", MaxAttempts: -1})
	require.EqualError(t, err, "gemini: Config.MaxAttempts -1 is negative")
}
