package providers

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. An [*APIError] matches one of them with errors.Is
// according to its status code; ErrUnreachable wraps dial failures. Their
// texts carry no prefix: they are only ever read inside an error that starts
// with the provider's name ("openai: cannot reach …: server unreachable: …").
var (
	// ErrRateLimited matches HTTP 429.
	ErrRateLimited = errors.New("rate limited")
	// ErrAuth matches HTTP 401 and 403.
	ErrAuth = errors.New("authentication failed")
	// ErrModelNotFound matches HTTP 404: the provider knows no such model
	// (or, with a wrong base URL, no such endpoint).
	ErrModelNotFound = errors.New("model or endpoint not found")
	// ErrOverloaded matches HTTP 5xx, including Anthropic's 529.
	ErrOverloaded = errors.New("server overloaded or failing")
	// ErrInvalidRequest matches HTTP 400 and 422: the provider refused the
	// request (its "invalid_request_error"), for example a model that does
	// not support tools.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrUnreachable means the server could not be reached at all (DNS,
	// connection refused, TLS). Providers wrap the network error together
	// with it and name the URL.
	ErrUnreachable = errors.New("server unreachable")
)

// APIError is an error answer from a provider's API: a non-2xx HTTP status,
// or an error event inside a streamed 200 answer (StatusCode 0 then, unless
// the event names one). It is a plain value; copies are independent.
type APIError struct {
	// Provider names the provider ("openai", "anthropic", "ollama").
	Provider string
	// StatusCode is the HTTP status; 0 when the error came inside a stream.
	StatusCode int
	// Type is the provider's error type ("rate_limit_error", ...), if any.
	Type string
	// Code is the provider's error code ("model_not_found", ...), if any.
	Code string
	// Message is the provider's human-readable message, or the start of the
	// body when it was not the provider's JSON error shape.
	Message string
	// RetryAfter is the server's Retry-After, 0 when it sent none.
	RetryAfter time.Duration
}

// Error names the provider, the status (or "stream error") and the message.
func (e *APIError) Error() string {
	where := "stream error"
	if e.StatusCode != 0 {
		where = fmt.Sprintf("HTTP %d", e.StatusCode)
	}
	kind := e.Type
	if e.Code != "" {
		if kind != "" {
			kind += "/"
		}
		kind += e.Code
	}
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	if kind != "" {
		return fmt.Sprintf("%s: %s (%s): %s", e.Provider, where, kind, msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Provider, where, msg)
}

// Is reports whether target is the sentinel that matches e's status code
// (or, for in-stream errors with no status, its Type).
func (e *APIError) Is(target error) bool {
	return e.sentinel() == target && target != nil
}

func (e *APIError) sentinel() error {
	switch {
	case e.StatusCode == 429:
		return ErrRateLimited
	case e.StatusCode == 401 || e.StatusCode == 403:
		return ErrAuth
	case e.StatusCode == 404:
		return ErrModelNotFound
	case e.StatusCode == 400 || e.StatusCode == 422:
		return ErrInvalidRequest
	case e.StatusCode >= 500:
		return ErrOverloaded
	}
	switch e.Type {
	case "rate_limit_error", "rate_limit_exceeded":
		return ErrRateLimited
	case "overloaded_error", "api_error", "server_error":
		return ErrOverloaded
	case "authentication_error", "permission_error":
		return ErrAuth
	case "not_found_error":
		return ErrModelNotFound
	case "invalid_request_error":
		return ErrInvalidRequest
	}
	return nil
}
