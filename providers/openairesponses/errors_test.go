package openairesponses_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/openairesponses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResponses_HTTPErrorIsAnAPIError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		io.WriteString(w, `{"error":{"message":"Unsupported parameter: 'temperature'","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`)
	}))
	defer srv.Close()
	_, err := collect(newModel(t, srv.URL), userReq())
	var ae *providers.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "openai", ae.Provider)
	assert.Equal(t, "unsupported_parameter", ae.Code)
	assert.ErrorIs(t, err, providers.ErrInvalidRequest)
}

func TestResponses_429IsRetriedHonouringRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
			return
		}
		io.WriteString(w, textBody)
	}))
	defer srv.Close()
	m := newModel(t, srv.URL)
	var waits []time.Duration
	openairesponses.SetRetrySleep(m, func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	chunks, err := collect(m, userReq())
	require.NoError(t, err)
	assert.Equal(t, "Hello", summarize(chunks).Text)
	assert.Equal(t, []time.Duration{2 * time.Second}, waits)
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
			srv := newServer(t, []byte(head+tc.event))
			chunks, err := collect(newModel(t, srv.URL), userReq())
			assert.Equal(t, "Hi", summarize(chunks).Text)
			var ae *providers.APIError
			require.ErrorAs(t, err, &ae)
			assert.ErrorIs(t, err, tc.sentinel)
			assert.EqualError(t, err, tc.text)
		})
	}
}

func TestResponses_StreamEndedCleanlyBeforeItsTerminalEventSaysTheServerEndedIt(t *testing.T) {
	srv := newServer(t, []byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n"))
	_, err := collect(newModel(t, srv.URL), userReq())
	assert.EqualError(t, err, "openai: the server ended the stream before response.completed: unexpected EOF")
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestResponses_LostConnectionIsAnErrorAndTheLoopWrapsItWithTheTurn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer srv.Close()
	agent := &agentloop.Agent{Model: newModel(t, srv.URL)}
	_, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hi")}, nil))
	var te *agentloop.TurnError
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Contains(t, err.Error(), "openai: reading the stream failed (connection lost?)")
}

func TestResponses_MalformedEventIsAClearError(t *testing.T) {
	srv := newServer(t, []byte("event: response.output_text.delta\ndata: {\"type\":\n\n"))
	_, err := collect(newModel(t, srv.URL), userReq())
	assert.ErrorContains(t, err, "openai: malformed stream event")
}

func TestResponses_CancelMidStreamClosesTheConnectionAndKeepsTheCause(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	defer srv.Close()
	stop := errors.New("stop button")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var err error
	for c, e := range newModel(t, srv.URL).Stream(ctx, userReq()) {
		if e != nil {
			err = e
			break
		}
		if _, ok := c.(agentloop.TextDelta); ok {
			cancel(stop)
		}
	}
	<-gone
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, stop)
}

func TestResponses_StopEarlyClosesTheConnection(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	defer srv.Close()
	for range newModel(t, srv.URL).Stream(context.Background(), userReq()) {
		break
	}
	<-gone
}

func TestResponses_UnreachableServerSaysWhereOnce(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	m, err := openairesponses.New(openairesponses.Config{Model: "m", BaseURL: url, MaxAttempts: 1})
	require.NoError(t, err)
	_, err = collect(m, userReq())
	assert.ErrorIs(t, err, providers.ErrUnreachable)
	assert.Contains(t, err.Error(), "openai: cannot reach "+url+"/responses: server unreachable: dial tcp")
	assert.Equal(t, 1, strings.Count(err.Error(), "/responses"))
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

func TestResponses_NilRequestIsAnError(t *testing.T) {
	_, err := collect(newModel(t, "http://127.0.0.1:1"), nil)
	assert.EqualError(t, err, "openai: nil request")
}
