package providertest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
)

// Provider describes an HTTP provider to the conformance tests: how to
// build its Model for a test server and what its streams look like.
type Provider struct {
	// Name is the prefix of its errors and the Provider of its FileErrors,
	// e.g. "openai".
	Name string
	// New returns a Model that talks to baseURL and tries a request
	// maxAttempts times (0: the provider's default). It fails t if it
	// cannot.
	New func(t testing.TB, baseURL string, maxAttempts int) agentloop.Model
	// SetRetrySleep replaces m's wait between tries with sleep.
	SetRetrySleep func(m agentloop.Model, sleep func(context.Context, time.Duration) error)
	// Path is the path its requests go to (e.g. "/chat/completions"), named
	// in the error when the server cannot be reached; "" if that error does
	// not name the URL.
	Path string

	// Text is a complete 200 stream whose text is "Hello".
	Text []byte
	// Partial is the start of a stream: its text so far is "Hel", and it
	// has not ended.
	Partial []byte
	// Malformed is an event that cannot be parsed, to follow Partial; nil
	// skips that case.
	Malformed []byte
	// EndedEarly is the error when a 200 stream ends cleanly after Partial.
	EndedEarly string
	// LostConnection is in the error when the connection drops after
	// Partial; "" leaves the text unchecked.
	LostConnection string
	// Unreachable is in the error when the server cannot be reached, after
	// Name+": cannot reach "; "" leaves the rest unchecked.
	Unreachable string
}

// Errors runs, as subtests named after the behaviour, the checks that every
// HTTP provider passes: retries of 429 and 5xx (honouring Retry-After), a
// stream cut or ended early or malformed is a clear error yielded after
// what came, cancelling or stopping early closes the connection, an
// unreachable server is providers.ErrUnreachable, a nil request is an
// error and sends nothing.
func Errors(t *testing.T, p Provider) {
	t.Run("429IsRetriedHonouringRetryAfter", func(t *testing.T) {
		srv := NewServer(t, Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"2"}}}, SSE(p.Text))
		m := p.New(t, srv.URL, 0)
		var waits []time.Duration
		p.SetRetrySleep(m, func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil })
		chunks, err := Collect(m, UserRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, "Hello", Summarize(chunks).Text)
		assert.Equal(t, []time.Duration{2 * time.Second}, waits)
		assert.Len(t, srv.Requests(), 2)
	})

	t.Run("500Then200RetriesOnceThenStreams", func(t *testing.T) {
		srv := NewServer(t, Reply{Status: http.StatusInternalServerError, Body: []byte(`{"error":{"message":"internal"}}`)}, SSE(p.Text))
		m := p.New(t, srv.URL, 0)
		var waits []time.Duration
		p.SetRetrySleep(m, func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil })
		chunks, err := Collect(m, UserRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, "Hello", Summarize(chunks).Text)
		assert.Len(t, srv.Requests(), 2)
		assert.Len(t, waits, 1)
	})

	t.Run("StreamCutOffIsAnErrorAndTheLoopWrapsItWithTheTurnKeepingWhatCame", func(t *testing.T) {
		srv := NewServer(t, Reply{Body: p.Partial, Cut: true})
		agent := &agentloop.Agent{Model: p.New(t, srv.URL, 0)}
		_, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hi")}, nil))
		var te *agentloop.TurnError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, 1, te.Turn)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "a lost connection is recognisable")
		if p.LostConnection != "" {
			assert.Contains(t, err.Error(), p.LostConnection)
		}
		assert.Equal(t, "Hel", te.History[len(te.History)-1].Text())
	})

	// A server that ends a 200 stream cleanly but early (Ollama does when
	// its repeat limit stops a runaway generation) is not said to have
	// lost the connection.
	t.Run("StreamEndedCleanlyBeforeItsEndSaysTheServerEndedIt", func(t *testing.T) {
		srv := NewSSEServer(t, p.Partial)
		chunks, err := Collect(p.New(t, srv.URL, 0), UserRequest("hi"))
		assert.Equal(t, "Hel", Summarize(chunks).Text)
		assert.EqualError(t, err, p.EndedEarly)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})

	if p.Malformed != nil {
		t.Run("MalformedEventMidStreamIsAClearError", func(t *testing.T) {
			srv := NewSSEServer(t, append(append(append([]byte(nil), p.Partial...), p.Malformed...), p.Text...))
			chunks, err := Collect(p.New(t, srv.URL, 0), UserRequest("hi"))
			assert.Equal(t, "Hel", Summarize(chunks).Text)
			assert.ErrorContains(t, err, p.Name+": malformed stream event")
		})
	}

	t.Run("CancelMidStreamClosesTheConnectionAndKeepsTheCause", func(t *testing.T) {
		srv := NewServer(t, Reply{Body: p.Partial, Hold: true})
		stop := errors.New("stop button")
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		var texts []agentloop.Chunk
		var err error
		for c, e := range p.New(t, srv.URL, 0).Stream(ctx, UserRequest("hi")) {
			if e != nil {
				err = e
				break
			}
			if _, ok := c.(agentloop.TextDelta); ok {
				texts = append(texts, c)
				cancel(stop)
			}
		}
		<-srv.Gone()
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, stop)
		assert.Equal(t, []agentloop.Chunk{agentloop.TextDelta{Text: "Hel"}}, texts, "nothing comes after the cancel")
	})

	t.Run("CancelledContextIsACancelError", func(t *testing.T) {
		srv := NewSSEServer(t, p.Text)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var err error
		for _, e := range p.New(t, srv.URL, 0).Stream(ctx, UserRequest("hi")) {
			if e != nil {
				err = e
			}
		}
		assert.ErrorIs(t, err, context.Canceled)
	})

	t.Run("StoppingEarlyClosesTheConnectionAndTheModelStaysUsable", func(t *testing.T) {
		srv := NewServer(t, Reply{Body: p.Partial, Hold: true}, SSE(p.Text))
		m := p.New(t, srv.URL, 0)
		for range m.Stream(context.Background(), UserRequest("hi")) {
			break
		}
		<-srv.Gone()
		chunks, err := Collect(m, UserRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, "Hello", Summarize(chunks).Text)
	})

	t.Run("UnreachableServerIsErrUnreachableNamingWhereOnce", func(t *testing.T) {
		srv := NewServer(t)
		url := srv.URL
		srv.Close()
		_, err := Collect(p.New(t, url, 1), UserRequest("hi"))
		require.ErrorIs(t, err, providers.ErrUnreachable)
		assert.Contains(t, err.Error(), p.Name+": cannot reach "+p.Unreachable)
		if p.Path != "" {
			assert.Contains(t, err.Error(), "cannot reach "+url+p.Path+": server unreachable: dial tcp")
			assert.Equal(t, 1, strings.Count(err.Error(), p.Path), "the URL is named once: %v", err)
		}
	})

	t.Run("NilRequestIsAnErrorNotAPanicAndSendsNothing", func(t *testing.T) {
		srv := NewSSEServer(t, p.Text)
		chunks, err := Collect(p.New(t, srv.URL, 0), nil)
		assert.Empty(t, chunks)
		assert.EqualError(t, err, p.Name+": nil request")
		assert.Empty(t, srv.Requests(), "nothing is sent")
	})
}
