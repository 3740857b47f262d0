package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// send makes a request to srv with the given Host and headers, and returns
// the status and body.
func send(t *testing.T, srv *httptest.Server, method, path, host, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Every route a page of the user's browser could read or change.
var everyRoute = []struct{ method, path string }{
	{"GET", "/"}, {"GET", "/api/info"}, {"GET", "/api/chats"}, {"GET", "/api/chats/c"},
	{"GET", "/api/chat/c/stream"}, {"POST", "/api/chat/c/stop"}, {"DELETE", "/api/chats/c"},
	{"GET", "/agents/c/tool-states"}, {"POST", "/agents/c/tool-states/reset"},
}

// A loopback server refuses, on every route, a request for a Host that is
// not a loopback name, as a page whose name was rebound to 127.0.0.1
// sends it from the user's own browser.
func TestAccess_ALoopbackServerRefusesARebindingHost(t *testing.T) {
	srv := httptest.NewServer(newTestServer(t, config{db: memoryDB}, io.Discard))
	defer srv.Close()
	for _, rt := range everyRoute {
		code, body := send(t, srv, rt.method, rt.path, "attacker.example:8080", "", nil)
		assert.Equal(t, http.StatusForbidden, code, "%s %s: %s", rt.method, rt.path, body)
		assert.Contains(t, body, "not a loopback name", "%s %s", rt.method, rt.path)
	}
	code, body := send(t, srv, "POST", "/api/chat", "attacker.example:8080", `{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}]}`,
		map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-origin", "Origin": "http://attacker.example:8080"})
	assert.Equal(t, http.StatusForbidden, code, body)
	for _, host := range []string{"", "localhost", "127.0.0.1:8080"} {
		code, body := send(t, srv, "GET", "/api/chats", host, "", nil)
		assert.Equal(t, http.StatusOK, code, "host %q: %s", host, body)
	}
}

// A -public server with -allowed-hosts answers for those names only.
func TestAccess_APublicServerAnswersForItsAllowedHosts(t *testing.T) {
	cfg, err := parseFlags([]string{"-db", memoryDB, "-public", "-allowed-hosts", "chat.example.com, .corp.example"}, io.Discard)
	require.NoError(t, err)
	srv := httptest.NewServer(newTestServer(t, cfg, io.Discard))
	defer srv.Close()
	for host, want := range map[string]int{"chat.example.com": 200, "a.corp.example:8080": 200, "evil.example": 403, "127.0.0.1": 403} {
		code, body := send(t, srv, "GET", "/api/chats", host, "", nil)
		assert.Equal(t, want, code, "host %q: %s", host, body)
	}
	_, err = parseFlags([]string{"-allowed-hosts", "chat.example.com"}, io.Discard)
	assert.ErrorContains(t, err, "-allowed-hosts needs -public")
}

// Every route that changes something refuses another origin, the tool
// states' reset included, and the reset refuses a form's body.
func TestAccess_EveryStateChangingRouteRefusesOtherOrigins(t *testing.T) {
	srv := httptest.NewServer(newTestServer(t, config{db: memoryDB}, io.Discard))
	defer srv.Close()
	crossSite := map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}
	for _, rt := range everyRoute {
		if rt.method == "GET" {
			continue
		}
		code, body := send(t, srv, rt.method, rt.path, "", "", crossSite)
		assert.Equal(t, http.StatusForbidden, code, "%s %s: %s", rt.method, rt.path, body)
		assert.Contains(t, body, "cross-origin request", "%s %s", rt.method, rt.path)
	}
	code, body := send(t, srv, "POST", "/agents/c/tool-states/reset", "", "a=b", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	assert.Equal(t, http.StatusUnsupportedMediaType, code, body)
}
