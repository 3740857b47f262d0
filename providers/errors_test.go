package providers_test

import (
	"errors"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/stretchr/testify/assert"
)

func TestAPIError_IsMatchesSentinelByStatus(t *testing.T) {
	cases := []struct {
		status int
		want   error
	}{
		{429, providers.ErrRateLimited},
		{401, providers.ErrAuth},
		{403, providers.ErrAuth},
		{404, providers.ErrModelNotFound},
		{400, providers.ErrInvalidRequest},
		{422, providers.ErrInvalidRequest},
		{500, providers.ErrOverloaded},
		{529, providers.ErrOverloaded},
	}
	all := []error{providers.ErrRateLimited, providers.ErrAuth, providers.ErrModelNotFound, providers.ErrInvalidRequest, providers.ErrOverloaded, providers.ErrUnreachable}
	for _, c := range cases {
		err := error(&providers.APIError{Provider: "x", StatusCode: c.status})
		for _, s := range all {
			assert.Equal(t, s == c.want, errors.Is(err, s), "status %d vs %v", c.status, s)
		}
	}
}

func TestAPIError_StreamErrorMatchesByType(t *testing.T) {
	err := error(&providers.APIError{Provider: "anthropic", Type: "overloaded_error", Message: "Overloaded"})
	assert.ErrorIs(t, err, providers.ErrOverloaded)
	assert.Equal(t, "anthropic: stream error (overloaded_error): Overloaded", err.Error())
}

func TestAPIError_MessageNamesProviderStatusAndMessage(t *testing.T) {
	err := &providers.APIError{Provider: "openai", StatusCode: 404, Type: "invalid_request_error", Code: "model_not_found", Message: "The model `x` does not exist", RetryAfter: time.Second}
	assert.Equal(t, "openai: HTTP 404 (invalid_request_error/model_not_found): The model `x` does not exist", err.Error())
	var ae *providers.APIError
	assert.True(t, errors.As(error(err), &ae))
}
