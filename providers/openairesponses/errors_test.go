package openairesponses_test

import (
	"testing"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/agentloop/agentloop/providers/openairesponses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Retries, cut, early-ended, malformed and cancelled streams, an
// unreachable server and a nil request: the checks every HTTP provider
// passes.
func TestResponses_HandlesErrorsAndCancellationAsEveryProviderDoes(t *testing.T) {
	providertest.Errors(t, provider)
}

func TestResponses_HTTPErrorIsAnAPIError(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Status: 400,
		Body: []byte(`{"error":{"message":"Unsupported parameter: 'temperature'","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`)})
	_, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	var ae *providers.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "openai", ae.Provider)
	assert.Equal(t, "unsupported_parameter", ae.Code)
	assert.ErrorIs(t, err, providers.ErrInvalidRequest)
}

func TestResponses_ErrorEventAndFailedResponseAreAPIErrorsYieldedLast(t *testing.T) {
	head := "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hi\"}\n\n"
	for name, tc := range map[string]struct {
		event    string
		sentinel error
		text     string
	}{
		"error event": {
			"event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down\",\"param\":null}\n\n",
			providers.ErrRateLimited, "openai: stream error (rate_limit_exceeded): Slow down",
		},
		"response.failed": {
			"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The model crashed\"}}}\n\n",
			providers.ErrOverloaded, "openai: stream error (server_error): The model crashed",
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := providertest.NewSSEServer(t, []byte(head+tc.event))
			chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
			assert.Equal(t, "Hi", providertest.Summarize(chunks).Text)
			var ae *providers.APIError
			require.ErrorAs(t, err, &ae)
			assert.ErrorIs(t, err, tc.sentinel)
			assert.EqualError(t, err, tc.text)
		})
	}
}

func TestResponses_NewNamesTheBadField(t *testing.T) {
	_, err := openairesponses.New(openairesponses.Config{})
	assert.ErrorContains(t, err, "Config.Model")
	_, err = openairesponses.New(openairesponses.Config{Model: "m", BaseURL: "ftp://x"})
	assert.ErrorContains(t, err, "Config.BaseURL")
	_, err = openairesponses.New(openairesponses.Config{Model: "m", MaxAttempts: -1})
	assert.ErrorContains(t, err, "MaxAttempts")
	_, err = openairesponses.New(openairesponses.Config{Model: "m", ReasoningSummary: "long"})
	assert.ErrorContains(t, err, `Config.ReasoningSummary "long"`)
}
