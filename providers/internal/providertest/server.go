package providertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Reply is one answer of a [Server]. The zero Reply is a 200 with an empty
// event stream.
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header is added to the response. Without a Content-Type in it, a 200
	// is "text/event-stream" and any other status "application/json".
	Header http.Header
	// Body is written as it is, then flushed.
	Body []byte
	// Lines writes Body line by line, flushing after each, as a server
	// that streams NDJSON does.
	Lines bool
	// Cut drops the connection after Body, without ending the response:
	// the client sees a stream cut mid-way.
	Cut bool
	// Hold keeps the response open after Body until the client goes away;
	// then [Server.Gone] is closed.
	Hold bool
}

// SSE is a 200 event stream of body: Reply{Body: body}.
func SSE(body []byte) Reply { return Reply{Body: body} }

// Request is what a [Server] received.
type Request struct {
	Method string
	URL    *url.URL // path and query as sent
	Header http.Header
	Body   []byte
}

// JSON returns the body decoded as a JSON object; it fails t if it is not
// one.
func (r Request) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &v), "request body %q", r.Body)
	return v
}

// Server is a scripted HTTP server on loopback: the n-th request gets the
// n-th Reply, the last one again when they run out, whatever the path. It
// records every request. Its methods are safe for concurrent use, also
// while requests are being served.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	replies  []Reply
	requests []Request
	gone     chan struct{}
	goneOnce sync.Once
}

// NewServer starts a Server that answers with replies in turn and closes
// it when the test ends (t.Cleanup). Without replies every answer is the
// zero Reply.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	if len(replies) == 0 {
		replies = []Reply{{}}
	}
	s := &Server{replies: replies, gone: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// NewSSEServer starts a Server that answers with each body in turn as a
// 200 event stream: NewServer with SSE(body) for each.
func NewSSEServer(t testing.TB, bodies ...[]byte) *Server {
	t.Helper()
	replies := make([]Reply, len(bodies))
	for i, b := range bodies {
		replies[i] = SSE(b)
	}
	return NewServer(t, replies...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	rep := s.replies[min(len(s.requests), len(s.replies)-1)]
	s.requests = append(s.requests, Request{Method: r.Method, URL: r.URL, Header: r.Header.Clone(), Body: body})
	s.mu.Unlock()

	for k, v := range rep.Header {
		w.Header()[k] = v
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if w.Header().Get("Content-Type") == "" {
		if status == http.StatusOK {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
	}
	w.WriteHeader(status)
	f := w.(http.Flusher)
	if rep.Lines {
		for line := range bytes.Lines(rep.Body) {
			_, _ = w.Write(line)
			f.Flush()
		}
	} else {
		_, _ = w.Write(rep.Body)
		f.Flush()
	}
	switch {
	case rep.Cut:
		panic(http.ErrAbortHandler)
	case rep.Hold:
		<-r.Context().Done()
		s.goneOnce.Do(func() { close(s.gone) })
	}
}

// Requests returns a copy of the requests received so far, in order; nil
// if there were none.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Request returns the i-th request (from 0); it fails t if fewer came.
func (s *Server) Request(t testing.TB, i int) Request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Less(t, i, len(s.requests), "requests received")
	return s.requests[i]
}

// Gone is closed when the client of a [Reply.Hold] went away (the first
// one, if several held).
func (s *Server) Gone() <-chan struct{} { return s.gone }
