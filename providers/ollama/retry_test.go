package ollama

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/internal/httpx"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// retryingModel is a model whose client retries like New's; the waits it
// asks for are recorded in *waits instead of slept. Retries run on the
// goroutine that ranges over the stream (api.Client.Chat is synchronous).
func retryingModel(t *testing.T, host string) (*Model, *[]time.Duration) {
	t.Helper()
	waits := new([]time.Duration)
	sleep := func(ctx context.Context, d time.Duration) error { *waits = append(*waits, d); return ctx.Err() }
	m, err := newModel(Config{Model: "qwen3:4b", Host: host}, &httpx.RetryTransport{Sleep: sleep})
	require.NoError(t, err)
	return m, waits
}

// statusThenStream answers the first len(statuses) requests with those
// statuses (and headers), then with body as NDJSON; when the test ends it
// checks that every retry carried the whole request body.
func statusThenStream(t *testing.T, header http.Header, body []byte, statuses ...int) *providertest.Server {
	replies := make([]providertest.Reply, 0, len(statuses)+1)
	for _, status := range statuses {
		replies = append(replies, providertest.Reply{Status: status, Header: header, Body: []byte(`{"error":"busy"}`)})
	}
	srv := providertest.NewServer(t, append(replies, ndjsonReply(body))...)
	t.Cleanup(func() {
		reqs := srv.Requests()
		for i, r := range reqs {
			if !bytes.Equal(r.Body, reqs[0].Body) {
				t.Errorf("retry %d sent a different body", i)
			}
		}
	})
	return srv
}

func TestOllama_ServerErrorThenSuccessIsRetriedOnce(t *testing.T) {
	srv := statusThenStream(t, nil, lines(lineHello, lineDone), http.StatusInternalServerError)
	m, waits := retryingModel(t, srv.URL)
	got := stream(m, userRequest("hi"))

	require.NoError(t, got.Err)
	assert.Equal(t, "Hello", got.Text)
	assert.EqualValues(t, 2, len(srv.Requests()), "one retry")
	require.Len(t, *waits, 1)
	assert.GreaterOrEqual(t, (*waits)[0], httpx.DefaultBaseDelay/2)
	assert.LessOrEqual(t, (*waits)[0], httpx.DefaultBaseDelay)
}

func TestOllama_RateLimitWaitsForRetryAfter(t *testing.T) {
	srv := statusThenStream(t, http.Header{"Retry-After": {"7"}}, lines(lineHello, lineDone), http.StatusTooManyRequests)
	m, waits := retryingModel(t, srv.URL)
	got := stream(m, userRequest("hi"))

	require.NoError(t, got.Err)
	assert.EqualValues(t, 2, len(srv.Requests()))
	assert.Equal(t, []time.Duration{7 * time.Second}, *waits)
}

func TestOllama_RetriesStopAfterThreeTriesWithTheLastError(t *testing.T) {
	srv := statusThenStream(t, nil, lines(lineDone), 503, 503, 503, 503)
	m, waits := retryingModel(t, srv.URL)
	got := stream(m, userRequest("hi"))

	assert.EqualValues(t, 3, len(srv.Requests()), "three tries in all")
	assert.Len(t, *waits, 2)
	assert.ErrorIs(t, got.Err, providers.ErrOverloaded)
	var apiErr *providers.APIError
	require.ErrorAs(t, got.Err, &apiErr)
	assert.Equal(t, 503, apiErr.StatusCode)
	assert.Equal(t, "busy", apiErr.Message)
}

func TestOllama_ClientErrorsAreNotRetried(t *testing.T) {
	srv := statusThenStream(t, nil, lines(lineDone), http.StatusBadRequest)
	m, waits := retryingModel(t, srv.URL)
	got := stream(m, userRequest("hi"))
	assert.EqualValues(t, 1, len(srv.Requests()))
	assert.Empty(t, *waits)
	assert.ErrorIs(t, got.Err, providers.ErrInvalidRequest)
}

func TestOllama_UnreachableServerIsRetriedThenSaysWhereItLooked(t *testing.T) {
	addr := closedAddr(t)
	m, waits := retryingModel(t, "http://"+addr)
	got := stream(m, userRequest("hi"))

	assert.Len(t, *waits, 2, "dial failures are retried")
	assert.ErrorIs(t, got.Err, providers.ErrUnreachable)
	assert.Equal(t, 1, strings.Count(got.Err.Error(), "/api/chat"), "the URL is named once: %v", got.Err)
	assert.Contains(t, got.Err.Error(), "cannot reach the Ollama server at http://"+addr+"/api/chat")
	assert.Contains(t, got.Err.Error(), "OLLAMA_HOST")
}

func TestOllama_CancellingDuringARetryWaitStops(t *testing.T) {
	srv := statusThenStream(t, nil, lines(lineDone), 500, 500, 500)
	ctx, cancel := context.WithCancel(context.Background())
	m, err := newModel(Config{Model: "m", Host: srv.URL}, &httpx.RetryTransport{
		Sleep: func(ctx context.Context, d time.Duration) error {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		}})
	require.NoError(t, err)
	got := collect(m.Stream(ctx, userRequest("hi")))
	assert.ErrorIs(t, got.Err, context.Canceled)
	assert.EqualValues(t, 1, len(srv.Requests()))
}
