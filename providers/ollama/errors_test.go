package ollama

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	lineHello = `{"model":"m","message":{"role":"assistant","content":"Hello"},"done":false}`
	lineWorld = `{"model":"m","message":{"role":"assistant","content":" world"},"done":false}`
	lineDone  = `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":2}`
)

// handlerServer starts a test server with h and closes it at the end of the test.
func handlerServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// errorServer answers every request with status and body.
func errorServer(t *testing.T, status int, body string) *providertest.Server {
	return providertest.NewServer(t, providertest.Reply{Status: status, Body: []byte(body)})
}

// dyingServer writes body, then drops the connection without ending the
// chunked response.
func dyingServer(t *testing.T, body []byte) *providertest.Server {
	r := ndjsonReply(body)
	r.Cut = true
	return providertest.NewServer(t, r)
}

// holdingServer writes body, then holds the response open until the
// client goes away (srv.Gone is closed then).
func holdingServer(t *testing.T, body []byte) *providertest.Server {
	r := ndjsonReply(body)
	r.Hold = true
	return providertest.NewServer(t, r)
}

func TestOllama_ServerDyingMidStreamIsAClearError(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := dyingServer(t, lines(lineHello, lineWorld))
		m := rd.model(t, srv.URL, Config{})
		got := stream(m, userRequest("hi"))

		assert.Equal(t, "Hello world", got.Text, "what arrived is yielded")
		require.Error(t, got.Err)
		assert.ErrorIs(t, got.Err, io.ErrUnexpectedEOF)
		assert.EqualError(t, got.Err, "ollama: the stream ended after 2 chunks without its final chunk (done:true); the connection was lost or the server stopped: unexpected EOF")
		assert.Empty(t, got.Finish, "no finish reason for a broken stream")
	})
}

func TestOllama_ServerDyingMidStreamFailsTheLoopsTurn(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := dyingServer(t, lines(lineHello))
		m := rd.model(t, srv.URL, Config{})
		agent := &agentloop.Agent{Model: m}
		_, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hi")}, nil))

		var te *agentloop.TurnError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, 1, te.Turn)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
}

func TestOllama_ServerCuttingALineInHalfIsAMalformedLineError(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := dyingServer(t, []byte(lineHello+"\n"+`{"model":"m","message":{"role":"assi`))
		m := rd.model(t, srv.URL, Config{})
		got := stream(m, userRequest("hi"))
		assert.Equal(t, "Hello", got.Text)
		assert.ErrorIs(t, got.Err, errMalformed)
		assert.ErrorContains(t, got.Err, "ollama: line 2 of the stream is not valid JSON (malformed, or cut off by a lost connection)")
	})
}

func TestOllama_EmptyAnswerIsAnError(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {})
		m := rd.model(t, srv.URL, Config{})
		got := stream(m, userRequest("hi"))
		assert.ErrorIs(t, got.Err, io.ErrUnexpectedEOF)
		assert.ErrorContains(t, got.Err, "the server ended its response without sending anything")
	})
}

func TestOllama_MalformedLineMidStreamStopsWithAnErrorNamingTheLine(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := newNDJSONServer(t, lines(lineHello, `{"model":"m","message":{"role":"assistant","content":" wor`, lineWorld, lineDone))
		m := rd.model(t, srv.URL, Config{})
		got := stream(m, userRequest("hi"))

		assert.Equal(t, "Hello", got.Text, "chunks before the bad line are yielded")
		assert.ErrorIs(t, got.Err, errMalformed)
		assert.ErrorContains(t, got.Err, `ollama: line 2 of the stream is not valid JSON (malformed, or cut off by a lost connection): "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\" wor"`)
		assert.Empty(t, got.Finish)
	})
}

func TestOllama_ChunkOfTheWrongShapeIsAnError(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := newNDJSONServer(t, lines(lineHello, `{"model":"m","message":"oops","done":false}`, lineDone))
		m := rd.model(t, srv.URL, Config{})
		got := stream(m, userRequest("hi"))
		assert.ErrorContains(t, got.Err, "ollama: chunk 2 of the stream does not fit Ollama's chat response format")
	})
}

func TestOllama_ErrorLineInsideA200StreamIsAnAPIErrorYieldedLast(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := newNDJSONServer(t, lines(lineHello, `{"error":"an error was encountered while running the model: unexpected EOF"}`))
		m := rd.model(t, srv.URL, Config{})
		got := stream(m, userRequest("hi"))

		assert.Equal(t, "Hello", got.Text)
		assert.Equal(t, 1, got.ErrIndex, "the error comes last")
		var apiErr *providers.APIError
		require.ErrorAs(t, got.Err, &apiErr)
		assert.Equal(t, providers.APIError{Provider: "ollama", Message: "an error was encountered while running the model: unexpected EOF"}, *apiErr)
		assert.EqualError(t, got.Err, "ollama: stream error: an error was encountered while running the model: unexpected EOF")
	})
}

func TestOllama_ModelNotFoundTellsTheUserToPullIt(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := errorServer(t, http.StatusNotFound, `{"error":"model \"llama9:70b\" not found, try pulling it first"}`)
		m := rd.model(t, srv.URL, Config{Model: "llama9:70b"})
		got := stream(m, userRequest("hi"))

		require.Error(t, got.Err)
		assert.ErrorIs(t, got.Err, providers.ErrModelNotFound)
		assert.Contains(t, got.Err.Error(), "run `ollama pull llama9:70b`")
		var apiErr *providers.APIError
		require.ErrorAs(t, got.Err, &apiErr)
		assert.Equal(t, http.StatusNotFound, apiErr.StatusCode)
		assert.Equal(t, `model "llama9:70b" not found, try pulling it first`, apiErr.Message)
	})
}

func TestOllama_HTTPErrorsBecomeAPIErrors(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		for _, tc := range []struct {
			status int
			body   string
			is     error
			msg    string
		}{
			{http.StatusBadRequest, `{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}`, providers.ErrInvalidRequest, "registry.ollama.ai/library/gemma:2b does not support tools"},
			{http.StatusUnauthorized, `{"error":"unauthorized","signin_url":"https://ollama.com/connect?key=abc"}`, providers.ErrAuth, "401 Unauthorized; sign in at https://ollama.com/connect?key=abc"},
			{http.StatusForbidden, `{"error":"forbidden"}`, providers.ErrAuth, "forbidden"},
			{http.StatusInternalServerError, "Internal Server Error", providers.ErrOverloaded, "Internal Server Error"},
			{http.StatusTooManyRequests, `{"error":"too many requests"}`, providers.ErrRateLimited, "too many requests"},
		} {
			srv := errorServer(t, tc.status, tc.body)
			m := rd.model(t, srv.URL, Config{})
			got := stream(m, userRequest("hi"))
			assert.ErrorIs(t, got.Err, tc.is, "status %d", tc.status)
			var apiErr *providers.APIError
			if assert.ErrorAs(t, got.Err, &apiErr, "status %d", tc.status) {
				assert.Equal(t, "ollama", apiErr.Provider)
				assert.Equal(t, tc.status, apiErr.StatusCode)
				assert.Equal(t, tc.msg, apiErr.Message)
			}
		}
	})
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestOllama_UnreachableServerSaysWhereItLooked(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		addr := closedAddr(t)
		m := rd.model(t, "http://"+addr, Config{})
		got := stream(m, userRequest("hi"))

		require.Error(t, got.Err)
		assert.ErrorIs(t, got.Err, providers.ErrUnreachable)
		var op *net.OpError
		assert.ErrorAs(t, got.Err, &op, "the network error is kept")
		assert.Contains(t, got.Err.Error(), "cannot reach the Ollama server at http://"+addr+"/api/chat")
		assert.Contains(t, got.Err.Error(), "OLLAMA_HOST")
	})
}

func TestOllama_CancellingTheContextMidStreamClosesTheConnection(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := holdingServer(t, lines(lineHello))
		m := rd.model(t, srv.URL, Config{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		var text string
		var err error
		for chunk, e := range m.Stream(ctx, userRequest("hi")) {
			if e != nil {
				err = e
				continue
			}
			if d, ok := chunk.(agentloop.TextDelta); ok {
				text += d.Text
				cancel()
			}
		}
		assert.Equal(t, "Hello", text)
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorContains(t, err, "ollama: request cancelled")
		waitClosed(t, srv.Gone())
	})
}

func TestOllama_ConsumerStoppingEarlyClosesTheConnection(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := holdingServer(t, lines(lineHello, lineWorld))
		m := rd.model(t, srv.URL, Config{})
		for range m.Stream(context.Background(), userRequest("hi")) {
			break
		}
		waitClosed(t, srv.Gone())
	})
}

func TestOllama_CancelledCauseIsKept(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := holdingServer(t, lines(lineHello))
		m := rd.model(t, srv.URL, Config{})
		cause := errors.New("user pressed stop")
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		var err error
		for _, e := range m.Stream(ctx, userRequest("hi")) {
			if e != nil {
				err = e
			}
			cancel(cause)
		}
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, cause)
	})
}

// waitClosed waits for the server to see the connection closed; the bound
// only keeps a broken build from hanging.
func waitClosed(t *testing.T, gone <-chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the connection close")
	}
}

func TestOllama_NilRequestIsAnErrorNotAPanic(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := newNDJSONServer(t)
		m := rd.model(t, srv.URL, Config{})
		got := stream(m, nil)
		assert.EqualError(t, got.Err, "ollama: nil request")
		assert.Equal(t, 0, got.ErrIndex, "only the error is yielded")
		assert.Empty(t, srv.Requests(), "nothing is sent")
	})
}
