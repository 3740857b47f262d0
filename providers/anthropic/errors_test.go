package anthropic_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const firstDelta = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"

const textBody = firstDelta +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

func userReq() *agentloop.Request {
	return &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("hi")}}
}

func TestAnthropic_SendsVersionAndKeyHeadersAndDefaultMaxTokens(t *testing.T) {
	srv := newServer(t, []byte(textBody))
	chunks, err := collect(newModel(t, srv.URL), userReq())
	require.NoError(t, err)
	assert.Equal(t, "Hello", summarize(chunks).Text)
	assert.Equal(t, []agentloop.Usage{{Input: 3, Output: 2}}, summarize(chunks).Usage)
	h := srv.headers[0]
	assert.Equal(t, "2023-06-01", h.Get("anthropic-version"))
	assert.Equal(t, "sk-ant-test", h.Get("x-api-key"))
	assert.Contains(t, string(srv.request(0)), `"max_tokens":4096`)
}

func TestAnthropic_529Then200RetriesOnceThenStreams(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		io.WriteString(w, textBody)
	}))
	defer srv.Close()
	m := newModel(t, srv.URL)
	var waits []time.Duration
	anthropic.SetRetrySleep(m, func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	chunks, err := collect(m, userReq())
	require.NoError(t, err)
	assert.Equal(t, "Hello", summarize(chunks).Text)
	assert.Equal(t, int32(2), calls.Load())
	assert.Len(t, waits, 1)
}

func TestAnthropic_429HonoursRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
			return
		}
		io.WriteString(w, textBody)
	}))
	defer srv.Close()
	m := newModel(t, srv.URL)
	var waits []time.Duration
	anthropic.SetRetrySleep(m, func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	_, err := collect(m, userReq())
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{3 * time.Second}, waits)
}

func TestAnthropic_HTTPErrorBodyBecomesAPIError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	}))
	defer srv.Close()
	_, err := collect(newModel(t, srv.URL), userReq())
	assert.ErrorIs(t, err, providers.ErrAuth)
	assert.EqualError(t, err, "anthropic: HTTP 401 (authentication_error): invalid x-api-key")
}

func TestAnthropic_ErrorEventInsideA200StreamIsYieldedLast(t *testing.T) {
	body := firstDelta + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	srv := newServer(t, []byte(body))
	chunks, err := collect(newModel(t, srv.URL), userReq())
	assert.Equal(t, "Hel", summarize(chunks).Text)
	assert.ErrorIs(t, err, providers.ErrOverloaded)
	assert.EqualError(t, err, "anthropic: stream error (overloaded_error): Overloaded")
}

func TestAnthropic_MalformedLineMidStreamIsAClearError(t *testing.T) {
	body := firstDelta + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n" + textBody
	srv := newServer(t, []byte(body))
	chunks, err := collect(newModel(t, srv.URL), userReq())
	assert.Equal(t, "Hel", summarize(chunks).Text)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "anthropic: malformed stream event")
}

func TestAnthropic_StreamCutOffIsAnErrorAndTheLoopWrapsItWithTheTurn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, firstDelta)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drop the connection mid-stream
	}))
	defer srv.Close()
	agent := &agentloop.Agent{Model: newModel(t, srv.URL)}
	_, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hi")}, nil))
	var te *agentloop.TurnError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.Turn)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "a lost connection is recognisable")
	assert.Contains(t, err.Error(), "anthropic: reading the stream failed (connection lost?)")
}

// A server that ends a 200 stream cleanly but early (Ollama does when its
// repeat limit stops a runaway generation) is not said to have lost the
// connection.
func TestAnthropic_StreamEndedCleanlyBeforeMessageStopSaysTheServerEndedIt(t *testing.T) {
	srv := newServer(t, []byte(firstDelta))
	_, err := collect(newModel(t, srv.URL), userReq())
	assert.EqualError(t, err, "anthropic: the server ended the stream before message_stop: unexpected EOF")
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

// holdingServer sends firstDelta, then holds the stream open until the
// client goes away; the returned channel is closed then.
func holdingServer(t *testing.T) (*httptest.Server, <-chan struct{}) {
	t.Helper()
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, firstDelta)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	t.Cleanup(srv.Close)
	return srv, gone
}

func TestAnthropic_CancelMidStreamClosesTheConnection(t *testing.T) {
	srv, gone := holdingServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	for c, e := range newModel(t, srv.URL).Stream(ctx, userReq()) {
		if e != nil {
			err = e
			break
		}
		if _, ok := c.(agentloop.TextDelta); ok {
			cancel()
		}
	}
	assert.ErrorIs(t, err, context.Canceled)
	<-gone
}

func TestAnthropic_StoppingEarlyClosesTheConnection(t *testing.T) {
	srv, gone := holdingServer(t)
	for range newModel(t, srv.URL).Stream(context.Background(), userReq()) {
		break
	}
	<-gone
}

func TestAnthropic_UnreachableServerSaysWhereOnce(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	m, err := anthropic.New(anthropic.Config{Model: "m", BaseURL: url, MaxAttempts: 1})
	require.NoError(t, err)
	_, err = collect(m, userReq())
	assert.ErrorIs(t, err, providers.ErrUnreachable)
	assert.Contains(t, err.Error(), "cannot reach "+url+"/v1/messages: server unreachable: dial tcp")
	assert.Equal(t, 1, strings.Count(err.Error(), "/v1/messages"), "the URL is named once: %v", err)
}

func TestAnthropic_NewNamesTheBadField(t *testing.T) {
	_, err := anthropic.New(anthropic.Config{})
	assert.ErrorContains(t, err, "Config.Model")
	_, err = anthropic.New(anthropic.Config{Model: "m", BaseURL: "::"})
	assert.ErrorContains(t, err, "Config.BaseURL")
	_, err = anthropic.New(anthropic.Config{Model: "m", ThinkingBudget: -1})
	assert.ErrorContains(t, err, "Config.ThinkingBudget")
}

func TestAnthropic_NilRequestIsAnErrorNotAPanic(t *testing.T) {
	srv := newServer(t, []byte(textBody))
	chunks, err := collect(newModel(t, srv.URL), nil)
	assert.Empty(t, chunks)
	assert.EqualError(t, err, "anthropic: nil request")
	assert.Empty(t, srv.requests, "nothing is sent")
}
