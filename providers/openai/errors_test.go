package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const textBody = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n" +
	"data: [DONE]\n\n"

func userReq() *agentloop.Request {
	return &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("hi")}}
}

func TestOpenAI_500Then200RetriesOnceThenStreams(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"internal","type":"server_error"}}`)
			return
		}
		io.WriteString(w, textBody)
	}))
	defer srv.Close()
	m := newModel(t, srv.URL)
	var waits []time.Duration
	openai.SetRetrySleep(m, func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	chunks, err := collect(m, userReq())
	require.NoError(t, err)
	assert.Equal(t, "Hello", summarize(chunks).Text)
	assert.Equal(t, int32(2), calls.Load())
	assert.Len(t, waits, 1)
}

func TestOpenAI_429HonoursRetryAfter(t *testing.T) {
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
	openai.SetRetrySleep(m, func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	_, err := collect(m, userReq())
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{2 * time.Second}, waits)
}

func TestOpenAI_HTTPErrorBodyBecomesAPIError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		io.WriteString(w, `{"error":{"message":"The model `+"`nope`"+` does not exist","type":"invalid_request_error","code":"model_not_found"}}`)
	}))
	defer srv.Close()
	_, err := collect(newModel(t, srv.URL), userReq())
	var ae *providers.APIError
	require.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, providers.ErrModelNotFound)
	assert.Equal(t, "model_not_found", ae.Code)
	assert.Contains(t, err.Error(), "openai: HTTP 404")
	assert.Contains(t, err.Error(), "does not exist")
}

func TestOpenAI_ErrorInsideA200StreamIsYieldedLast(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		"data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"rate_limit_exceeded\"}}\n\n"
	srv := newServer(t, []byte(body))
	chunks, err := collect(newModel(t, srv.URL), userReq())
	assert.Equal(t, "Hi", summarize(chunks).Text)
	assert.ErrorIs(t, err, providers.ErrRateLimited)
	assert.Contains(t, err.Error(), "Rate limit reached")
}

func TestOpenAI_MalformedLineMidStreamIsAClearError(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\n\n" + textBody
	srv := newServer(t, []byte(body))
	chunks, err := collect(newModel(t, srv.URL), userReq())
	assert.Equal(t, "Hi", summarize(chunks).Text)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "openai: malformed stream event")
}

func TestOpenAI_StreamCutOffIsAnErrorAndTheLoopWrapsItWithTheTurn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n")
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
	assert.Contains(t, err.Error(), "openai: reading the stream failed (connection lost?)")
}

// A server that ends a 200 stream cleanly but early (Ollama does when its
// repeat limit stops a runaway generation) is not said to have lost the
// connection.
func TestOpenAI_StreamEndedCleanlyBeforeAFinishReasonSaysTheServerEndedIt(t *testing.T) {
	srv := newServer(t, []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"))
	_, err := collect(newModel(t, srv.URL), userReq())
	assert.EqualError(t, err, "openai: the server ended the stream before a finish reason: unexpected EOF")
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestOpenAI_CancelMidStreamClosesTheConnection(t *testing.T) {
	closed := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client went away
		close(closed)
	}))
	defer srv.Close()
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
	<-closed
}

func TestOpenAI_StoppingEarlyClosesTheConnection(t *testing.T) {
	closed := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(closed)
	}))
	defer srv.Close()
	for range newModel(t, srv.URL).Stream(context.Background(), userReq()) {
		break
	}
	<-closed
}

func TestOpenAI_UnreachableServerSaysWhereOnce(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	m, err := openai.New(openai.Config{Model: "m", BaseURL: url, MaxAttempts: 1})
	require.NoError(t, err)
	_, err = collect(m, userReq())
	assert.ErrorIs(t, err, providers.ErrUnreachable)
	assert.Contains(t, err.Error(), "cannot reach "+url+"/chat/completions: server unreachable: dial tcp")
	assert.Equal(t, 1, strings.Count(err.Error(), "/chat/completions"), "the URL is named once: %v", err)
}

func TestOpenAI_NewNamesTheBadField(t *testing.T) {
	_, err := openai.New(openai.Config{})
	assert.ErrorContains(t, err, "Config.Model")
	_, err = openai.New(openai.Config{Model: "m", BaseURL: "ftp://x"})
	assert.ErrorContains(t, err, "Config.BaseURL")
	_, err = openai.New(openai.Config{Model: "m", MaxTokensField: "tokens"})
	assert.ErrorContains(t, err, "Config.MaxTokensField")
}

func TestOpenAI_LengthWhileACallIsHalfFormedStillYieldsTheCallThenFinishLength(t *testing.T) {
	srv := newServer(t, fixtureBody(t, "rig-tool-args-truncated-length.sse"))
	chunks, err := collect(newModel(t, srv.URL), userReq())
	require.NoError(t, err)
	n := len(chunks)
	require.GreaterOrEqual(t, n, 3)
	assert.IsType(t, agentloop.ToolCall{}, chunks[n-3])
	assert.Equal(t, agentloop.Finish{Reason: agentloop.FinishLength}, chunks[n-1])
	// Through the loop the truncated call is not executed.
	ran := false
	tool, err := agentloop.NewRawTool("file_report", "", nil, func(context.Context, json.RawMessage) (string, error) { ran = true; return "", nil })
	require.NoError(t, err)
	agent := &agentloop.Agent{Model: newModel(t, srv.URL), Tools: []*agentloop.Tool{tool}}
	_, err = agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hi")}, nil))
	assert.False(t, ran)
	assert.ErrorIs(t, err, agentloop.ErrTruncated)
}

func TestOpenAI_NilRequestIsAnErrorNotAPanic(t *testing.T) {
	srv := newServer(t, []byte(textBody))
	chunks, err := collect(newModel(t, srv.URL), nil)
	assert.Empty(t, chunks)
	assert.EqualError(t, err, "openai: nil request")
	assert.Empty(t, srv.requests, "nothing is sent")
}
