package httpx_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/internal/httpx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newEndpoint(t *testing.T, url string, header http.Header) *httpx.Endpoint {
	t.Helper()
	e, err := httpx.NewEndpoint(httpx.EndpointConfig{Provider: "acme", URL: url, Header: header})
	require.NoError(t, err)
	e.SetRetrySleep(func(context.Context, time.Duration) error { return nil })
	return e
}

func TestEndpoint_PostsTheBodyWithItsHeadersAndHandsTheAnswerToRead(t *testing.T) {
	var gotBody, gotType, gotKey, gotMethod string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotType, gotKey, gotMethod = string(b), r.Header.Get("Content-Type"), r.Header.Get("X-Key"), r.Method
		io.WriteString(w, "streamed")
	}))
	defer srv.Close()
	header := http.Header{"X-Key": {"k1"}}
	e := newEndpoint(t, srv.URL+"/v1/x", header)
	header.Set("X-Key", "changed later") // the endpoint keeps its own copy

	var got string
	err := e.Stream(context.Background(), []byte(`{"a":1}`), func(r io.Reader) error {
		b, err := io.ReadAll(r)
		got = string(b)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, "streamed", got)
	assert.Equal(t, `{"a":1}`, gotBody)
	assert.Equal(t, http.MethodPost, gotMethod)
	assert.Equal(t, "application/json", gotType)
	assert.Equal(t, "k1", gotKey)
}

func TestEndpoint_Non2xxIsAnAPIErrorOfTheProviderAndReadIsNotCalled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		io.WriteString(w, `{"error":{"type":"not_found_error","message":"model 'x' not found"}}`)
	}))
	defer srv.Close()
	err := newEndpoint(t, srv.URL, nil).Stream(context.Background(), nil, func(io.Reader) error {
		t.Error("read called for an error answer")
		return nil
	})
	var ae *providers.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "acme", ae.Provider)
	assert.Equal(t, 404, ae.StatusCode)
	assert.ErrorIs(t, err, providers.ErrModelNotFound)
}

func TestEndpoint_UnreachableServerIsErrUnreachableNamingTheURLOnceWithoutItsQuery(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	err = newEndpoint(t, "http://user:pw@"+addr+"/v1/messages?key=secret", nil).Stream(context.Background(), nil, func(io.Reader) error { return nil })
	require.Error(t, err)
	assert.ErrorIs(t, err, providers.ErrUnreachable)
	var op *net.OpError
	assert.ErrorAs(t, err, &op, "the network error is kept")
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, "acme: cannot reach http://"+addr+"/v1/messages: "), msg)
	assert.Equal(t, 1, strings.Count(msg, "/v1/messages"), msg)
	assert.NotContains(t, msg, "secret")
	assert.NotContains(t, msg, "pw")
}

func TestEndpoint_CancelledWhileReadingKeepsTheContextErrorAndItsCause(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	stop := errors.New("user pressed stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	err := newEndpoint(t, srv.URL, nil).Stream(ctx, nil, func(r io.Reader) error {
		buf := make([]byte, 5)
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		cancel(stop)
		_, err := io.ReadAll(r)
		return err
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, stop)
	assert.Contains(t, err.Error(), "acme: request cancelled")
}

func TestEndpoint_CancelledBeforeTheAnswerKeepsTheCause(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	deadline := errors.New("budget spent")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(deadline)
	err := newEndpoint(t, srv.URL, nil).Stream(ctx, nil, func(io.Reader) error { return nil })
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, deadline)
}

func TestEndpoint_ReadErrorIsReturnedAsItIs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "x") }))
	defer srv.Close()
	bad := errors.New("acme: malformed event")
	err := newEndpoint(t, srv.URL, nil).Stream(context.Background(), nil, func(io.Reader) error { return bad })
	assert.Same(t, bad, err)
}

func TestEndedEarlyAndStreamBrokenWrapErrUnexpectedEOFWithDifferentWords(t *testing.T) {
	early := httpx.EndedEarly("acme", "a finish reason")
	assert.ErrorIs(t, early, io.ErrUnexpectedEOF)
	assert.Equal(t, "acme: the server ended the stream before a finish reason: unexpected EOF", early.Error())
	assert.NotContains(t, early.Error(), "connection")

	broken := httpx.StreamBroken("acme", io.ErrUnexpectedEOF)
	assert.ErrorIs(t, broken, io.ErrUnexpectedEOF)
	assert.Contains(t, broken.Error(), "connection lost")
}

func TestNewEndpointAndBaseURLRefuseWhatCannotWork(t *testing.T) {
	_, err := httpx.NewEndpoint(httpx.EndpointConfig{URL: "http://x"})
	assert.ErrorContains(t, err, "Provider")
	_, err = httpx.NewEndpoint(httpx.EndpointConfig{Provider: "acme", URL: "ftp://x"})
	assert.ErrorContains(t, err, `acme: "ftp://x" is not an http(s) URL`)
	_, err = httpx.NewEndpoint(httpx.EndpointConfig{Provider: "acme", URL: "http://x", MaxAttempts: -1})
	assert.ErrorContains(t, err, "MaxAttempts -1 is negative")

	base, err := httpx.BaseURL("acme", "Config.BaseURL", "", "https://api.example.com/v1/")
	require.NoError(t, err)
	assert.Equal(t, "https://api.example.com/v1", base)
	_, err = httpx.BaseURL("acme", "Config.BaseURL", "localhost:11434", "https://d")
	assert.EqualError(t, err, `acme: Config.BaseURL "localhost:11434" is not an http(s) URL`)
}
