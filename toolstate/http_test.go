package toolstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/toolstate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func do(t *testing.T, h http.Handler, method, path, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	}
	return rec.Code, out
}

func seeded(t *testing.T) (*memstore.Store, *clock) {
	clk := newClock()
	store := newDocs(t)
	require.NoError(t, toolstate.Update(context.Background(), store, "chat-1", func(s *toolstate.State) error {
		s.RecordSuccess("ok_tool", clk.Now())
		for range 3 {
			s.RecordFailure("failing_tool", "boom", clk.Now())
		}
		return nil
	}))
	return store, clk
}

func TestHandler_GetReturnsTheDocumentedShape(t *testing.T) {
	store, clk := seeded(t)
	h := toolstate.NewHandler(store, toolstate.HandlerOptions{Now: clk.Now})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/agents/chat-1/tool-states", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	want := `{"success":true,"data":{"agentId":"chat-1","toolStates":{
		"failing_tool":{"status":"failed","reason":"3 consecutive failures; last: boom","lastUpdated":"2026-01-02T03:04:05Z"},
		"ok_tool":{"status":"available","reason":"","lastUpdated":"2026-01-02T03:04:05Z"}},
		"timestamp":"2026-01-02T03:04:05Z"}}`
	assert.JSONEq(t, want, rec.Body.String())
}

func TestHandler_GetOfUnknownConversationShowsGivenToolsFresh(t *testing.T) {
	clk := newClock()
	h := toolstate.NewHandler(newDocs(t), toolstate.HandlerOptions{Now: clk.Now, Tools: []string{"a", "b"}, Config: &toolstate.Config{Dependencies: map[string][]string{"b": {"a"}}}})
	code, out := do(t, h, "GET", "/agents/new/tool-states", "")
	require.Equal(t, http.StatusOK, code)
	states := out["data"].(map[string]any)["toolStates"].(map[string]any)
	assert.Equal(t, "available", states["a"].(map[string]any)["status"])
	assert.Equal(t, "waiting", states["b"].(map[string]any)["status"])
}

func TestHandler_ResetOneToolMakesItAvailable(t *testing.T) {
	store, clk := seeded(t)
	h := toolstate.NewHandler(store, toolstate.HandlerOptions{Now: clk.Now})
	code, out := do(t, h, "POST", "/agents/chat-1/tool-states/reset", `{"toolName":"failing_tool"}`)
	require.Equal(t, http.StatusOK, code, out)
	data := out["data"].(map[string]any)
	assert.Equal(t, []any{"failing_tool"}, data["reset"])
	assert.Equal(t, "available", data["toolStates"].(map[string]any)["failing_tool"].(map[string]any)["status"])
	s, err := toolstate.Load(context.Background(), store, "chat-1")
	require.NoError(t, err)
	assert.Zero(t, s.Tools["failing_tool"].ConsecutiveFailures)
}

func TestHandler_ResetWithoutBodyResetsAll(t *testing.T) {
	for _, body := range []string{"", "{}", " \n"} {
		store, clk := seeded(t)
		h := toolstate.NewHandler(store, toolstate.HandlerOptions{Now: clk.Now})
		code, out := do(t, h, "POST", "/agents/chat-1/tool-states/reset", body)
		require.Equal(t, http.StatusOK, code, out)
		assert.Equal(t, []any{"failing_tool", "ok_tool"}, out["data"].(map[string]any)["reset"], "body %q", body)
	}
}

func TestHandler_ErrorsHaveStatusAndMessage(t *testing.T) {
	store, clk := seeded(t)
	h := toolstate.NewHandler(store, toolstate.HandlerOptions{Now: clk.Now})
	tests := []struct {
		name, method, path, body string
		code                     int
		msg                      string
	}{
		{"unknown tool", "POST", "/agents/chat-1/tool-states/reset", `{"toolName":"ghost"}`, 404, "no tool named ghost"},
		{"bad json", "POST", "/agents/chat-1/tool-states/reset", `{"toolName":`, 400, "not a JSON object"},
		{"wrong type", "POST", "/agents/chat-1/tool-states/reset", `{"toolName":3}`, 400, "not a JSON object"},
		{"empty name", "POST", "/agents/chat-1/tool-states/reset", `{"toolName":""}`, 400, "toolName is empty"},
		{"misspelt field", "POST", "/agents/chat-1/tool-states/reset", `{"tool":"failing_tool"}`, 400, `unknown field "tool"`},
		{"null", "POST", "/agents/chat-1/tool-states/reset", `null`, 400, "not an object"},
		{"two objects", "POST", "/agents/chat-1/tool-states/reset", `{} {}`, 400, "data after the object"},
		{"stray brace", "POST", "/agents/chat-1/tool-states/reset", `{} }`, 400, "data after the object"},
		{"too large", "POST", "/agents/chat-1/tool-states/reset", `{"toolName":"` + strings.Repeat("x", 70<<10) + `"}`, 413, "request body too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := do(t, h, tt.method, tt.path, tt.body)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, false, out["success"])
			assert.Contains(t, out["error"], tt.msg)
		})
	}
	code, _ := do(t, h, "DELETE", "/agents/chat-1/tool-states", "")
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	s, err := toolstate.Load(context.Background(), store, "chat-1")
	require.NoError(t, err)
	assert.Equal(t, toolstate.StatusFailed, s.Tools["failing_tool"].Status, "a refused request resets nothing")
}

func TestHandler_AuthorizeRefusesOtherUsersConversations(t *testing.T) {
	store, clk := seeded(t)
	h := toolstate.NewHandler(store, toolstate.HandlerOptions{Now: clk.Now, Authorize: func(r *http.Request, id string) error {
		if r.Header.Get("X-User") != "alice" || id != "chat-1" {
			return errors.New("not your conversation")
		}
		return nil
	}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, user := range []string{"bob", "alice"} {
		req, err := http.NewRequest("POST", srv.URL+"/agents/chat-1/tool-states/reset", nil)
		require.NoError(t, err)
		req.Header.Set("X-User", user)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if user == "bob" {
			assert.Equal(t, http.StatusForbidden, resp.StatusCode)
			assert.JSONEq(t, `{"success":false,"error":"not your conversation"}`, string(body))
			s, err := toolstate.Load(context.Background(), store, "chat-1")
			require.NoError(t, err)
			assert.Equal(t, toolstate.StatusFailed, s.Tools["failing_tool"].Status, "a refused reset changes nothing")
		} else {
			assert.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		}
	}
}

func TestHandler_CorruptStateShowsFreshAndResetRepairsIt(t *testing.T) {
	st := newDocs(t)
	corrupt(t, st, "c", "{{{")
	h := toolstate.NewHandler(st, toolstate.HandlerOptions{Tools: []string{"a"}})
	code, out := do(t, h, "GET", "/agents/c/tool-states", "")
	require.Equal(t, http.StatusOK, code, out)
	code, out = do(t, h, "POST", "/agents/c/tool-states/reset", "")
	require.Equal(t, http.StatusOK, code, out)
	_, err := toolstate.Load(context.Background(), st, "c")
	require.NoError(t, err)
}
