package providers_test

import (
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/providers"
)

// Check a provider's error against the sentinels, or read its details.
func ExampleAPIError() {
	var err error = fmt.Errorf("agentloop: turn 1: %w", &providers.APIError{
		Provider: "openai", StatusCode: 429, Type: "rate_limit_exceeded", Message: "Rate limit reached",
	})
	fmt.Println(errors.Is(err, providers.ErrRateLimited), errors.Is(err, providers.ErrAuth))
	var ae *providers.APIError
	if errors.As(err, &ae) {
		fmt.Println(ae.Provider, ae.StatusCode)
	}
	fmt.Println(err)
	// Output:
	// true false
	// openai 429
	// agentloop: turn 1: openai: HTTP 429 (rate_limit_exceeded): Rate limit reached
}
