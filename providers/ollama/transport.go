package ollama

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Retry policy of the clients New builds.
const (
	retryAttempts = 3                      // tries in all
	retryBase     = 500 * time.Millisecond // first backoff
	retryMaxWait  = 30 * time.Second       // cap on one wait, Retry-After included
)

// retryTransport retries a request whose answer is 429, 500, 502, 503, 504
// or 529, or whose connection could not be made, before the response is
// handed to the caller (so before any of its body is read). It waits with
// exponential backoff and jitter, or for the answer's Retry-After; waits end
// when the request's context is done. A request whose body cannot be
// rewound (no GetBody) is not retried. It is safe for concurrent use.
type retryTransport struct {
	base     http.RoundTripper
	attempts int
	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

func newRetryTransport(base http.RoundTripper) *retryTransport {
	if base == nil {
		base = http.DefaultTransport
	}
	return &retryTransport{base: base, attempts: retryAttempts, sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RoundTrip implements http.RoundTripper.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	cur := req
	for attempt := 1; ; attempt++ {
		resp, err := t.base.RoundTrip(cur)
		var wait time.Duration
		switch {
		case err != nil:
			if !isDialError(err) {
				return nil, err
			}
		case retryableStatus(resp.StatusCode):
			wait = retryAfter(resp.Header.Get("Retry-After"))
		default:
			return resp, nil
		}
		if attempt >= t.attempts || (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
		}
		if wait <= 0 {
			wait = backoff(attempt)
		}
		if serr := t.sleep(req.Context(), min(wait, retryMaxWait)); serr != nil {
			return nil, serr
		}
		cur = req.Clone(req.Context())
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, gerr
			}
			cur.Body = body
		}
	}
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
		return true
	}
	return false
}

// backoff is the wait before try attempt+1: retryBase doubled per try,
// with up to 50% jitter.
func backoff(attempt int) time.Duration {
	d := retryBase << (attempt - 1)
	return d/2 + rand.N(d/2+1)
}

// retryAfter parses a Retry-After header (seconds or an HTTP date); 0
// means none.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}
