// Package httpx holds the HTTP plumbing the providers share: [Endpoint],
// which POSTs a request and hands the streamed answer to a decoder (with
// retries, error answers, unreachable servers and cancellation handled the
// same way for every provider), the retrying [RetryTransport] under it,
// [APIError], which turns a non-2xx response into a *providers.APIError,
// and what every provider's New and Stream do alike: [CheckModel],
// [StreamHeader] (with [Bearer]), [StreamChunks] and [NoFiles].
package httpx

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentloop/agentloop/providers"
)

// Defaults of [RetryTransport].
const (
	DefaultMaxAttempts = 3
	DefaultBaseDelay   = 500 * time.Millisecond
	DefaultMaxDelay    = 30 * time.Second
)

// RetryTransport is an [http.RoundTripper] that retries a request when the
// server answers 429, 500, 502, 503, 504 or 529, or cannot be dialled. It
// retries only before handing a response to its caller, so a body that has
// started streaming is never replayed. Waits grow exponentially with jitter
// from BaseDelay, honour the server's Retry-After (seconds or HTTP date) and
// end early when the request's context is done. A request with a body is
// retried only if it has GetBody (http.NewRequest sets it for in-memory
// bodies).
//
// When every try fails to dial, the error wraps [providers.ErrUnreachable]
// and the last network error; it does not name the URL, as http.Client's
// *url.Error around it does. The zero value is ready to use; a RetryTransport is safe
// for concurrent use if Base is.
type RetryTransport struct {
	// Base sends each try; nil means http.DefaultTransport.
	Base http.RoundTripper
	// MaxAttempts bounds the tries, the first included; 0 means
	// DefaultMaxAttempts, 1 disables retries.
	MaxAttempts int
	// BaseDelay is the wait before the second try, doubled for each
	// further one (with jitter); 0 means DefaultBaseDelay.
	BaseDelay time.Duration
	// MaxDelay caps a wait. A Retry-After longer than MaxDelay is not
	// waited for: the response is returned as it is. 0 means
	// DefaultMaxDelay.
	MaxDelay time.Duration
	// Sleep waits d or until ctx is done, returning ctx.Err() then; nil
	// means a timer. Tests inject one that returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock used to read an HTTP-date Retry-After; nil means
	// time.Now.
	Now func() time.Time
}

// RoundTrip implements [http.RoundTripper].
func (t *RetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	attempts := t.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		attempts = 1
	}
	ctx := req.Context()
	for try := 1; ; try++ {
		r := req
		if try > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("rewinding request body for retry: %w", err)
			}
			r = req.Clone(ctx)
			r.Body = body
		}
		resp, err := base.RoundTrip(r)
		last := try >= attempts
		var wait time.Duration
		switch {
		case err != nil:
			if !IsDialError(err) {
				return nil, err
			}
			if last || ctx.Err() != nil {
				// http.Client wraps this in a *url.Error that names the URL.
				return nil, fmt.Errorf("%w: %w", providers.ErrUnreachable, err)
			}
			wait = t.backoff(try)
		case retryableStatus(resp.StatusCode):
			if last {
				return resp, nil
			}
			wait = t.backoff(try)
			if ra, ok := RetryAfter(resp.Header, t.now()); ok {
				if ra > t.maxDelay() {
					return resp, nil
				}
				wait = ra
			}
			// Drain a little so the connection can be reused.
			_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
			resp.Body.Close()
		default:
			return resp, nil
		}
		if err := t.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("waiting to retry: %w", err)
		}
	}
}

func (t *RetryTransport) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *RetryTransport) maxDelay() time.Duration {
	if t.MaxDelay > 0 {
		return t.MaxDelay
	}
	return DefaultMaxDelay
}

// backoff is the wait after failed try n (1-based): BaseDelay·2^(n-1),
// capped, with the upper half jittered.
func (t *RetryTransport) backoff(n int) time.Duration {
	d := t.BaseDelay
	if d <= 0 {
		d = DefaultBaseDelay
	}
	for i := 1; i < n && d < t.maxDelay(); i++ {
		d *= 2
	}
	d = min(d, t.maxDelay())
	half := d / 2
	return half + rand.N(half+1)
}

func (t *RetryTransport) sleep(ctx context.Context, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

func retryableStatus(code int) bool {
	switch code {
	case 429, 500, 502, 503, 504, 529:
		return true
	}
	return false
}

// RetryAfter parses h's Retry-After, in seconds or as an HTTP date relative
// to now. ok is false when there is none or it cannot be read.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// APIError reads (at most 64 KiB of) a non-2xx response's body, closes it,
// and returns the error it describes. It understands the OpenAI and
// Anthropic shape {"error":{"type","code","message"}} (also with "error"
// a plain string, as Ollama sends) and otherwise keeps the start of the
// body as the message. The body read error, if any, is ignored: the status
// alone is still an error.
func APIError(provider string, resp *http.Response) *providers.APIError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	e := ParseErrorBody(provider, body)
	e.StatusCode = resp.StatusCode
	if ra, ok := RetryAfter(resp.Header, time.Now()); ok {
		e.RetryAfter = ra
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// ParseErrorBody reads an error JSON body (or an in-stream error event's
// payload) into an APIError with no status. A body that is not JSON becomes
// the message, shortened to 500 bytes.
func ParseErrorBody(provider string, body []byte) *providers.APIError {
	e := &providers.APIError{Provider: provider}
	var v struct {
		Error   json.RawMessage `json:"error"`
		Type    string          `json:"type"`
		Message string          `json:"message"`
	}
	if err := json.Unmarshal(body, &v); err == nil {
		var obj struct {
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		}
		var s string
		switch {
		case len(v.Error) > 0 && json.Unmarshal(v.Error, &obj) == nil:
			e.Type, e.Message = obj.Type, obj.Message
			e.Code = ErrorCode(obj.Code)
			return e
		case len(v.Error) > 0 && json.Unmarshal(v.Error, &s) == nil:
			e.Message = s
			return e
		case v.Message != "":
			e.Type, e.Message = v.Type, v.Message
			return e
		}
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	e.Message = msg
	return e
}

// ErrorCode reads an error code that servers send as a string or a number;
// "" when raw is neither.
func ErrorCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
