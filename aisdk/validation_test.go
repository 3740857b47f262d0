package aisdk_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/internal/syncbuf"
	"github.com/agentloop/agentloop/store"
)

// stores returns a fresh store of each kind the package's tests run on.
// (Every backend refuses what memstore refuses: store's conformance suite
// runs the same checks on each.)
func stores(t *testing.T) map[string]aisdk.ChatStore {
	return map[string]aisdk.ChatStore{"memstore": newStore(t)}
}

// A chat id that no store can hold is a 400 that says why on every route,
// the chat POST included, and the store is never asked.
func TestValidation_ABadChatIDIsA400OnEveryRoute(t *testing.T) {
	for _, id := range []string{"nul\x00byte", strings.Repeat("x", store.MaxIDLen+1), "bad \xff utf8"} {
		for _, authorize := range []bool{false, true} {
			st := newStore(t)
			h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: st, Logger: slog.New(slog.DiscardHandler)}
			if authorize {
				owner := func(*http.Request) (string, error) { return "alice", nil }
				h.Owner, h.Authorize = owner, aisdk.OwnerAuthorizer(st, owner)
			}
			api := h.Routes("/api")
			if utf8.ValidString(id) { // JSON cannot carry invalid UTF-8
				code, body := do(api, http.MethodPost, "/api/chat", chatBody(id, "hi"))
				assert.Equal(t, http.StatusBadRequest, code, "POST /api/chat with id %q: %s", id, body)
				assert.Contains(t, body, "the chat id is not valid")
			}
			esc := url.PathEscape(id)
			for _, rt := range []struct{ method, path string }{
				{http.MethodGet, "/api/chat/" + esc + "/stream"}, {http.MethodPost, "/api/chat/" + esc + "/stop"},
				{http.MethodGet, "/api/chats/" + esc}, {http.MethodDelete, "/api/chats/" + esc},
			} {
				code, body := do(api, rt.method, rt.path, "")
				assert.Equal(t, http.StatusBadRequest, code, "%s %s (authorize %v): %s", rt.method, rt.path, authorize, body)
			}
		}
	}
	// The longest id is fine.
	h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler)}
	code, body := do(h, http.MethodPost, "/api/chat", chatBody(strings.Repeat("é", store.MaxIDLen/2), "hi"))
	assert.Equal(t, http.StatusOK, code, body)
}

// A first user message with NUL bytes, control characters or invalid
// UTF-8 makes a chat whose title is cleaned of them, on every store.
func TestValidation_AFirstMessageWithNULMakesAChat(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: st, Logger: slog.New(slog.DiscardHandler)}
			code, body := do(h, http.MethodPost, "/api/chat", chatBody("c", "a\x00b\x1bc\tnul"))
			require.Equal(t, http.StatusOK, code, body)
			c, err := st.GetChat(context.Background(), "c")
			require.NoError(t, err)
			assert.Equal(t, "a b c nul", c.Title)
			assert.Equal(t, "a\x00b\x1bc\tnul", c.History[0].Text(), "the message itself is kept as sent")
		})
	}
}

// A Secret too short is found by Validate, with what to do, and a Handler
// served with it says in each answer that it is misconfigured and logs
// the cause once.
func TestValidation_AShortSecretIsFoundByValidateAndLoggedOnce(t *testing.T) {
	var logs syncbuf.Buffer
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: echoModel()}, Secret: []byte("123456789"), Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	err := h.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Handler.Secret has 9 bytes; it needs at least 32 random bytes")
	assert.Contains(t, err.Error(), "leave Secret nil")
	for range 3 {
		code, body := do(h, http.MethodPost, "/api/chat", chatBody("c", "hi"))
		assert.Equal(t, http.StatusInternalServerError, code)
		assert.Contains(t, body, "misconfigured")
		assert.NotContains(t, body, "Secret")
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "Handler.Secret has 9 bytes"), "logged once: %s", logs.String())

	ok := &aisdk.Handler{Agent: &agentloop.Agent{Model: echoModel()}, Secret: make([]byte, aisdk.MinSecretSize)}
	assert.NoError(t, ok.Validate())
}

// withHost makes a request look as if it came over a loopback connection
// for host.
func withHost(host string) func(*http.Request) {
	return func(r *http.Request) {
		addr := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}
		*r = *r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(addr)))
		r.Host = host
	}
}

// A loopback-only server refuses a request whose Host is a name that is not
// loopback's, as a page of a rebound DNS name sends it, even though it
// comes over loopback from the user's own browser.
func TestLoopbackOnly_RefusesANonLoopbackHost(t *testing.T) {
	h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler)}
	api := h.Routes("/api")
	for _, host := range []string{"attacker.example:8080", "attacker.example", "127.0.0.1.nip.io:8080", "localhost.attacker.example", "0.0.0.0:8080", "[::ffff:8.8.8.8]:80"} {
		code, body := do(api, http.MethodGet, "/api/chats", "", withHost(host))
		assert.Equal(t, http.StatusForbidden, code, "host %q: %s", host, body)
		assert.Contains(t, body, "not a loopback name or address", "host %q", host)
		code, _ = do(api, http.MethodPost, "/api/chat", chatBody("c", "hi"), withHost(host))
		assert.Equal(t, http.StatusForbidden, code, "host %q", host)
	}
	for _, host := range []string{"127.0.0.1:8080", "localhost:8080", "LOCALHOST.", "app.localhost:3000", "[::1]:8080", "127.1.2.3", "::1"} {
		code, body := do(api, http.MethodGet, "/api/chats", "", withHost(host))
		assert.Equal(t, http.StatusOK, code, "host %q: %s", host, body)
	}
}

func TestAllowHosts_AllowsTheListedHostsOnly(t *testing.T) {
	allow := aisdk.AllowHosts("chat.example.com", ".corp.example", "10.0.0.5")
	for host, want := range map[string]bool{
		"chat.example.com": true, "CHAT.example.com:443": true, "chat.example.com.": true,
		"a.corp.example": true, "b.a.corp.example:8080": true, "corp.example": false,
		"10.0.0.5:8080": true, "evil.example": false, "example.com": false, "": false,
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = host
		err := allow(r, "")
		if assert.Equal(t, want, err == nil, "host %q: %v", host, err) && !want {
			assert.Contains(t, err.Error(), "is not one this server answers for")
		}
	}
}

// An invented cursor of the chat list is a 400, on every store.
func TestValidation_AnInventedCursorIsA400(t *testing.T) {
	for name, st := range stores(t) {
		h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: st, Logger: slog.New(slog.DiscardHandler)}
		api := h.Routes("/api")
		for _, id := range []string{"a", "b"} {
			code, body := do(api, http.MethodPost, "/api/chat", chatBody(id, "hi"))
			require.Equal(t, http.StatusOK, code, body)
		}
		code, body := do(api, http.MethodGet, "/api/chats?cursor=not-a-cursor", "")
		assert.Equal(t, http.StatusBadRequest, code, "%s: %s", name, body)
		assert.Contains(t, body, "the cursor is not one this server gave", name)
	}
}

// A ChatServer without a Store, or with a negative StreamLease, is found
// by Validate, with what to do; its routes answer that it is
// misconfigured.
func TestValidation_AChatServerNeedsAStoreAndAStreamLeaseNotNegative(t *testing.T) {
	noStore := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Logger: slog.New(slog.DiscardHandler)}
	err := noStore.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ChatServer.Store is nil")
	api := noStore.Routes("/api")
	for _, c := range []struct{ method, target, body string }{
		{http.MethodPost, "/api/chat", chatBody("c", "hi")},
		{http.MethodGet, "/api/chat/c/stream", ""},
		{http.MethodPost, "/api/chat/c/stop", ""},
		{http.MethodGet, "/api/chats", ""},
		{http.MethodGet, "/api/chats/c", ""},
		{http.MethodDelete, "/api/chats/c", ""},
	} {
		code, body := do(api, c.method, c.target, c.body)
		assert.Equal(t, http.StatusInternalServerError, code, "%s %s", c.method, c.target)
		assert.Contains(t, body, "misconfigured", "%s %s", c.method, c.target)
	}

	negative := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: newStore(t), StreamLease: -time.Second}
	err = negative.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ChatServer.StreamLease is -1s")
}

// The chat route of a ChatServer's Routes answers another method with a
// JSON 405 that says to POST, as a Handler does.
func TestValidation_TheChatRouteAnswersAnotherMethodWith405(t *testing.T) {
	h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler)}
	for _, srv := range []http.Handler{h.Routes("/api"), &aisdk.Handler{Agent: &agentloop.Agent{Model: echoModel()}}} {
		code, body := do(srv, http.MethodGet, "/api/chat", "")
		assert.Equal(t, http.StatusMethodNotAllowed, code)
		assert.Contains(t, body, `"error":"method GET is not allowed; POST the chat request"`)
	}
}

// A stateless Handler keeps no streams: useChat's resume gets 204 and a
// stop 404, which says how its runs stop.
func TestValidation_AHandlerAnswersResumeWith204AndStopWith404(t *testing.T) {
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: echoModel()}, Logger: slog.New(slog.DiscardHandler)}
	code, _ := do(h, http.MethodGet, "/api/chat/c/stream", "")
	assert.Equal(t, http.StatusNoContent, code)
	code, body := do(h, http.MethodPost, "/api/chat/c/stop", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, body, "runs are stopped by closing their request")
}
