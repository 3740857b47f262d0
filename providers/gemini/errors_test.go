package gemini_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/gemini"
)

const okBody = "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"ok\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n"

// The error body of the API, as it answers a bad key.
const badKeyBody = `{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
  "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}`

func TestGemini_429IsRetriedHonouringRetryAfter(t *testing.T) {
	srv := newServer(t,
		reply{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"7"}},
			body: `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`},
		reply{body: okBody})
	m := newModel(t, srv.URL)
	var waited []time.Duration
	gemini.SetRetrySleep(m, func(_ context.Context, d time.Duration) error { waited = append(waited, d); return nil })
	chunks, err := collect(m, hi())
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{7 * time.Second}, waited)
	assert.Equal(t, agentloop.TextDelta{Text: "ok"}, chunks[0])
	assert.Len(t, srv.bodies, 2)
}

func TestGemini_429AfterTheLastTryIsAnAPIErrorWithTheAPIsMessage(t *testing.T) {
	srv := newServer(t, reply{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"1"}},
		body: `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`})
	_, err := collect(newModel(t, srv.URL, func(c *gemini.Config) { c.MaxAttempts = 2 }), hi())
	require.ErrorIs(t, err, providers.ErrRateLimited)
	assert.Len(t, srv.bodies, 2)
	assert.EqualError(t, err, "gemini: HTTP 429 (RESOURCE_EXHAUSTED): Resource has been exhausted (e.g. check quota).")
}

func TestGemini_400ReachesTheUserWithTheAPIsOwnMessage(t *testing.T) {
	srv := newServer(t, reply{status: http.StatusBadRequest, body: badKeyBody})
	_, err := collect(newModel(t, srv.URL), hi())
	var apiErr *providers.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, providers.APIError{Provider: "gemini", StatusCode: 400, Type: "INVALID_ARGUMENT",
		Message: "API key not valid. Please pass a valid API key."}, *apiErr)
	assert.ErrorIs(t, err, providers.ErrInvalidRequest)
	assert.Contains(t, err.Error(), "API key not valid. Please pass a valid API key.")
	assert.Len(t, srv.bodies, 1, "a 400 is not retried")
}

func TestGemini_StreamCutMidWayIsAnErrorAndTheLoopKeepsWhatCame(t *testing.T) {
	srv := newServer(t, reply{cut: true, body: "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Half an \"}]}}]}\r\n\r\n" +
		"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"pa"})
	agent := &agentloop.Agent{Model: newModel(t, srv.URL)}
	_, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hi")}, nil))
	var te *agentloop.TurnError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.Turn)
	assert.True(t, errors.Is(err, io.ErrUnexpectedEOF), "got %v", err)
	assert.Equal(t, "Half an ", te.History[len(te.History)-1].Text())
}

func TestGemini_StreamEndedCleanlyBeforeAFinishReasonSaysTheServerEndedIt(t *testing.T) {
	srv := newServer(t, reply{body: "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Half\"}]}}]}\r\n\r\n"})
	_, err := collect(newModel(t, srv.URL), hi())
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.EqualError(t, err, "gemini: the server ended the stream before a finish reason: unexpected EOF")
}

func TestGemini_ErrorInsideA200StreamIsAnAPIError(t *testing.T) {
	srv := newServer(t, reply{body: okBody[:0] + "data: {\"error\":{\"code\":500,\"message\":\"An internal error has occurred.\",\"status\":\"INTERNAL\"}}\r\n\r\n"})
	_, err := collect(newModel(t, srv.URL), hi())
	var apiErr *providers.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "An internal error has occurred.", apiErr.Message)
	assert.Equal(t, "INTERNAL", apiErr.Type)
}

func TestGemini_UnreachableServerIsErrUnreachable(t *testing.T) {
	srv := newServer(t, reply{body: okBody})
	url := srv.URL
	srv.Close()
	_, err := collect(newModel(t, url, func(c *gemini.Config) { c.MaxAttempts = 1 }), hi())
	require.ErrorIs(t, err, providers.ErrUnreachable)
	assert.Contains(t, err.Error(), "gemini: cannot reach the server")
}

func TestGemini_StoppingEarlyEndsTheStream(t *testing.T) {
	srv := newServer(t, reply{body: okBody})
	m := newModel(t, srv.URL)
	for range m.Stream(context.Background(), hi()) {
		break
	}
	// A second call on the same model still works: nothing was left locked.
	_, err := collect(m, hi())
	require.NoError(t, err)
}

func TestGemini_CancelledContextIsACancelError(t *testing.T) {
	srv := newServer(t, reply{body: okBody})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var err error
	for _, e := range newModel(t, srv.URL).Stream(ctx, hi()) {
		if e != nil {
			err = e
		}
	}
	require.ErrorIs(t, err, context.Canceled)
}

func TestGemini_NewNamesWhatIsMissing(t *testing.T) {
	_, err := gemini.New(context.Background(), gemini.Config{})
	require.EqualError(t, err, "gemini: Config.Model is required")
	_, err = gemini.New(context.Background(), gemini.Config{Model: "m", MaxAttempts: -1})
	require.EqualError(t, err, "gemini: Config.MaxAttempts -1 is negative")
}

func TestGemini_NilRequestIsAnErrorNotAPanic(t *testing.T) {
	_, err := collect(newModel(t, "http://127.0.0.1:1"), nil)
	require.EqualError(t, err, "gemini: nil request")
}

func TestGemini_CancelMidStreamClosesTheConnection(t *testing.T) {
	closed := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hello\"}]}}]}\r\n\r\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client went away
		close(closed)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []agentloop.Chunk
	var err error
	for c, e := range newModel(t, srv.URL).Stream(ctx, hi()) {
		if e != nil {
			err = e
			break
		}
		got = append(got, c)
		cancel()
	}
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []agentloop.Chunk{agentloop.TextDelta{Text: "Hello"}}, got)
	<-closed
}
