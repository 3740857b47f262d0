package toolstate_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/internal/syncbuf"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/toolstate"
)

// failingStore fails every call with an error that holds what a database
// error holds.
type failingStore struct{}

var errDB = errors.New(`failed to connect to user=postgres database=prod host=10.1.2.3 port=5432: server error`)

func (failingStore) GetDoc(context.Context, string, string) (*store.Doc, error) { return nil, errDB }
func (failingStore) PutDoc(context.Context, *store.Doc) error                   { return errDB }
func (failingStore) DeleteDoc(context.Context, string, string, int64) error     { return errDB }

// A store failure is a 500 with a generic message; its detail, which may
// name the database, its user and host, goes to the logger only.
func TestHandler_AStoreFailureIsAGeneric500AndTheLogGetsTheDetail(t *testing.T) {
	var logs syncbuf.Buffer
	h := toolstate.NewHandler(failingStore{}, toolstate.HandlerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, rt := range []struct{ method, path string }{{"GET", "/agents/c/tool-states"}, {"POST", "/agents/c/tool-states/reset"}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(rt.method, rt.path, nil))
		assert.Equal(t, http.StatusInternalServerError, rec.Code, rt.path)
		assert.NotContains(t, rec.Body.String(), "postgres", rt.path)
		assert.NotContains(t, rec.Body.String(), "10.1.2.3", rt.path)
		assert.Contains(t, rec.Body.String(), "the server log says why", rt.path)
	}
	assert.Equal(t, 2, strings.Count(logs.String(), "host=10.1.2.3"), logs.String())
}

// An id no chat store can hold is a 400 that says why, before the store is
// asked.
func TestHandler_ABadIDIsA400(t *testing.T) {
	h := toolstate.NewHandler(memstore.New(memstore.Options{}), toolstate.HandlerOptions{Logger: slog.New(slog.DiscardHandler)})
	for _, id := range []string{"nul%00byte", strings.Repeat("x", 513), "bad%FFutf8"} {
		for _, method := range []string{"GET", "POST"} {
			path := "/agents/" + id + "/tool-states"
			if method == "POST" {
				path += "/reset"
			}
			code, out := do(t, h, method, path, "")
			assert.Equal(t, http.StatusBadRequest, code, "%s %s: %v", method, id, out)
			assert.Contains(t, out["error"], "an id is 1 to 512 bytes", "%s %s", method, id)
		}
	}
}

// A page of another origin cannot reset a conversation's tool states: not
// with a form (a content type other than JSON is a 415), and not with a
// bodiless fetch (the cross-origin check is a 403).
func TestHandler_ACrossOriginOrFormResetChangesNothing(t *testing.T) {
	store, clk := seeded(t)
	h := toolstate.NewHandler(store, toolstate.HandlerOptions{Now: clk.Now})
	for _, tc := range []struct {
		name        string
		contentType string
		site        string
		body        string
		want        int
	}{
		{"cross-site fetch without body", "", "cross-site", "", http.StatusForbidden},
		{"cross-site JSON", "application/json", "cross-site", "{}", http.StatusForbidden},
		{"form urlencoded", "application/x-www-form-urlencoded", "", "a=b", http.StatusUnsupportedMediaType},
		{"form text/plain", "text/plain", "", `{"a":"="}`, http.StatusUnsupportedMediaType},
		{"multipart form", "multipart/form-data; boundary=x", "", "--x--", http.StatusUnsupportedMediaType},
	} {
		r := httptest.NewRequest("POST", "/agents/chat-1/tool-states/reset", strings.NewReader(tc.body))
		if tc.contentType != "" {
			r.Header.Set("Content-Type", tc.contentType)
		}
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
			r.Header.Set("Origin", "https://attacker.example")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		assert.Equal(t, tc.want, rec.Code, "%s: %s", tc.name, rec.Body.String())
	}
	s, err := toolstate.Load(context.Background(), store, "chat-1")
	require.NoError(t, err)
	assert.Equal(t, toolstate.StatusFailed, s.Tools["failing_tool"].Status, "a refused reset changes nothing")

	r := httptest.NewRequest("POST", "/agents/chat-1/tool-states/reset", strings.NewReader(`{}`))
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	assert.Equal(t, http.StatusOK, rec.Code, "the page's own JSON reset: %s", rec.Body.String())
}

type statusError struct{ status int }

func (e statusError) Error() string   { return "no chat" }
func (e statusError) StatusCode() int { return e.status }

// An authorize error with a status answers with it.
func TestHandler_AuthorizeErrorsKeepTheirStatus(t *testing.T) {
	store, _ := seeded(t)
	h := toolstate.NewHandler(store, toolstate.HandlerOptions{Logger: slog.New(slog.DiscardHandler), Authorize: func(*http.Request, string) error { return statusError{http.StatusNotFound} }})
	code, out := do(t, h, "GET", "/agents/chat-1/tool-states", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "no chat", out["error"])
}
