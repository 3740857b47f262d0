package httpx_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/internal/httpx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recordSleep returns a Sleep func that records waits and returns at once.
func recordSleep(waits *[]time.Duration) func(context.Context, time.Duration) error {
	return func(ctx context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		return ctx.Err()
	}
}

func TestRetryTransport_500Then200RetriesOnceWithBody(t *testing.T) {
	var calls atomic.Int32
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if calls.Add(1) == 1 {
			http.Error(w, "boom", 500)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	var waits []time.Duration
	c := &http.Client{Transport: &httpx.RetryTransport{Sleep: recordSleep(&waits)}}
	defer c.CloseIdleConnections()
	resp, err := c.Post(srv.URL, "text/plain", strings.NewReader("payload"))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "ok", string(b))
	assert.Equal(t, int32(2), calls.Load())
	assert.Equal(t, []string{"payload", "payload"}, bodies)
	require.Len(t, waits, 1)
	assert.GreaterOrEqual(t, waits[0], httpx.DefaultBaseDelay/2)
	assert.LessOrEqual(t, waits[0], httpx.DefaultBaseDelay)
}

func TestRetryTransport_429HonoursRetryAfterSeconds(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	var waits []time.Duration
	c := &http.Client{Transport: &httpx.RetryTransport{Sleep: recordSleep(&waits)}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, []time.Duration{7 * time.Second}, waits)
}

func TestRetryTransport_RetryAfterHTTPDate(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	h := http.Header{"Retry-After": {now.Add(12 * time.Second).Format(http.TimeFormat)}}
	d, ok := httpx.RetryAfter(h, now)
	assert.True(t, ok)
	assert.Equal(t, 12*time.Second, d)
	_, ok = httpx.RetryAfter(http.Header{"Retry-After": {"soon"}}, now)
	assert.False(t, ok)
}

func TestRetryTransport_GivesUpAfterMaxAttemptsAndReturnsLastResponse(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(503)
		io.WriteString(w, `{"error":{"type":"overloaded_error","message":"Overloaded"}}`)
	}))
	defer srv.Close()
	var waits []time.Duration
	c := &http.Client{Transport: &httpx.RetryTransport{Sleep: recordSleep(&waits)}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(srv.URL)
	require.NoError(t, err)
	assert.Equal(t, int32(3), calls.Load())
	assert.Len(t, waits, 2)
	apiErr := httpx.APIError("anthropic", resp)
	assert.ErrorIs(t, apiErr, providers.ErrOverloaded)
	assert.Equal(t, "Overloaded", apiErr.Message)
}

func TestRetryTransport_DoesNotRetry400(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(400)
	}))
	defer srv.Close()
	c := &http.Client{Transport: &httpx.RetryTransport{Sleep: func(context.Context, time.Duration) error { t.Error("slept"); return nil }}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, int32(1), calls.Load())
}

func TestRetryTransport_RetryAfterBeyondMaxDelayReturnsResponse(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(429)
	}))
	defer srv.Close()
	c := &http.Client{Transport: &httpx.RetryTransport{Sleep: func(context.Context, time.Duration) error { t.Error("slept"); return nil }}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(srv.URL)
	require.NoError(t, err)
	e := httpx.APIError("openai", resp)
	assert.Equal(t, int32(1), calls.Load())
	assert.Equal(t, time.Hour, e.RetryAfter)
	assert.ErrorIs(t, e, providers.ErrRateLimited)
}

func TestRetryTransport_DialFailureIsUnreachableAndTheClientNamesTheURLOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	var waits []time.Duration
	c := &http.Client{Transport: &httpx.RetryTransport{Sleep: recordSleep(&waits)}}
	_, err = c.Get("http://" + addr + "/v1/chat?key=secret")
	require.Error(t, err)
	assert.ErrorIs(t, err, providers.ErrUnreachable)
	assert.Contains(t, err.Error(), "http://"+addr+"/v1/chat")
	assert.Equal(t, 1, strings.Count(err.Error(), "/v1/chat"), "the URL is named once: %v", err)
	assert.Len(t, waits, 2)
}

func TestRetryTransport_CancelledWaitStopsRetrying(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) }))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := &http.Client{Transport: &httpx.RetryTransport{Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}}}
	defer c.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	_, err := c.Do(req)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestRetryTransport_RealTimerWaitEndsWithContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "20")
		w.WriteHeader(503)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	rt := &httpx.RetryTransport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		cancel() // the wait that follows must end with the context
		return resp, err
	})}
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	_, err := rt.RoundTrip(req)
	assert.ErrorIs(t, err, context.Canceled)
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestAPIError_ParsesBodies(t *testing.T) {
	cases := []struct {
		body               string
		typ, code, message string
	}{
		{`{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`, "invalid_request_error", "model_not_found", "The model does not exist"},
		{`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, "authentication_error", "", "invalid x-api-key"},
		{`{"error":"model 'x' not found"}`, "", "", "model 'x' not found"},
		{`{"error":{"message":"bad","code":400}}`, "", "400", "bad"},
		{`<html>Bad Gateway</html>`, "", "", "<html>Bad Gateway</html>"},
		{``, "", "", "Not Found"},
	}
	for _, c := range cases {
		resp := &http.Response{StatusCode: 404, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(c.body))}
		e := httpx.APIError("p", resp)
		assert.Equal(t, c.typ, e.Type, c.body)
		assert.Equal(t, c.code, e.Code, c.body)
		assert.Equal(t, c.message, e.Message, c.body)
		assert.True(t, errors.Is(e, providers.ErrModelNotFound))
	}
}
