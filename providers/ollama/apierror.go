package ollama

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// These sentinels classify the errors of a model call (errors.Is). They
// stand in for the shared providers package's sentinels, which did not exist
// when this package was written; see apiError.
var (
	errRateLimited = errors.New("rate limited")
	errAuth        = errors.New("not authorised")
	errNotFound    = errors.New("not found")
	errOverloaded  = errors.New("server error or overloaded")
	errBadRequest  = errors.New("bad request")
	errUnreachable = errors.New("server unreachable")
)

// apiError is an HTTP error answer from the Ollama server.
type apiError struct {
	StatusCode int
	Message    string
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("ollama: HTTP %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// Is makes errors.Is(err, errNotFound) and the like work by status code.
func (e *apiError) Is(target error) bool {
	switch target {
	case errRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case errAuth:
		return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
	case errNotFound:
		return e.StatusCode == http.StatusNotFound
	case errOverloaded:
		return e.StatusCode >= 500
	case errBadRequest:
		return e.StatusCode == http.StatusBadRequest || e.StatusCode == http.StatusUnprocessableEntity
	}
	return false
}
