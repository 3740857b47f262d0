package aisdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/toolstate"
)

// do sends a request to h in-process and returns the status and body.
func do(h http.Handler, method, target, body string, edit ...func(*http.Request)) (int, string) {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for _, e := range edit {
		e(r)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec.Code, rec.Body.String()
}

func chatBody(id, text string) string {
	b, _ := json.Marshal(map[string]any{"id": id, "messages": []aisdk.UIMessage{{ID: "u-" + id, Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: text}}}}})
	return string(b)
}

// echoModel answers every call with "ok".
func echoModel() agentloop.Model {
	return simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text("ok")}, nil
	})
}

func TestChats_ListShowAndDelete(t *testing.T) {
	st := newStore(t)
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: echoModel()}, Store: st, Logger: slog.New(slog.DiscardHandler)}
	api := h.Routes("/api")
	long := "Plan   a trip\nto Lisbon in May with a budget of 900 euros and a day in Sintra, please"
	for i, text := range []string{"First chat", long, "Third chat"} {
		if code, body := do(api, http.MethodPost, "/api/chat", chatBody(fmt.Sprint("c", i), text)); code != http.StatusOK {
			t.Fatalf("chat %d: %d %s", i, code, body)
		}
	}

	// Newest first, in pages.
	code, body := do(api, http.MethodGet, "/api/chats?limit=2", "")
	var page aisdk.ChatList
	if err := json.Unmarshal([]byte(body), &page); code != http.StatusOK || err != nil {
		t.Fatalf("list: %d %s", code, body)
	}
	if len(page.Chats) != 2 || page.Chats[0].ID != "c2" || page.Chats[1].ID != "c1" || page.Next == "" {
		t.Fatalf("first page %+v", page)
	}
	if got := page.Chats[1].Title; got != "Plan a trip to Lisbon in May with a budget of 900 euros and…" {
		t.Errorf("title %q", got)
	}
	_, body = do(api, http.MethodGet, "/api/chats?limit=2&cursor="+page.Next, "")
	var rest aisdk.ChatList
	_ = json.Unmarshal([]byte(body), &rest)
	if len(rest.Chats) != 1 || rest.Chats[0].ID != "c0" || rest.Next != "" || rest.Chats[0].Title != "First chat" {
		t.Errorf("last page %s", body)
	}
	for _, bad := range []string{"?limit=0", "?limit=x", "?cursor=nonsense"} {
		if code, body := do(api, http.MethodGet, "/api/chats"+bad, ""); code != http.StatusBadRequest || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}

	// One chat, to render.
	code, body = do(api, http.MethodGet, "/api/chats/c1", "")
	var view aisdk.ChatView
	if err := json.Unmarshal([]byte(body), &view); code != http.StatusOK || err != nil {
		t.Fatalf("get: %d %s", code, body)
	}
	if view.ID != "c1" || view.Streaming || len(view.Messages) != 2 || view.Messages[1].Role != "assistant" || view.Created.IsZero() {
		t.Errorf("chat %s", body)
	}

	// Delete, then it is gone.
	if code, body := do(api, http.MethodDelete, "/api/chats/c1", ""); code != http.StatusNoContent {
		t.Errorf("delete: %d %s", code, body)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		if code, _ := do(api, method, "/api/chats/c1", ""); code != http.StatusNotFound {
			t.Errorf("%s after delete: %d", method, code)
		}
	}
	if _, err := st.GetChat(context.Background(), "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the store still has it: %v", err)
	}
	if code, _ := do(api, http.MethodPut, "/api/chats/c0", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d", code)
	}
}

// A paused chat renders with its calls in the states that wait for the
// user: a browser tool's call waits for its output, a call that needs
// approval for the decision.
func TestChats_AChatRendersItsPendingCallsAndApprovals(t *testing.T) {
	form, err := agentloop.NewClientTool("form", "A form.", nil)
	if err != nil {
		t.Fatal(err)
	}
	del, err := agentloop.NewTool("delete_record", "Delete.", func(ctx context.Context, a deleteIn) (string, error) { return "deleted", nil })
	if err != nil {
		t.Fatal(err)
	}
	del.NeedsApproval = true
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{
		simtest.Call("f", "form", map[string]string{}), simtest.Call("d", "delete_record", map[string]int{"id": 1}),
		simtest.Call("w", "get_weather", map[string]string{"city": "Oslo"}),
	}})
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{form, del, jsWeatherTool(t)}}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler)}
	api := h.Routes("/api")
	if code, body := do(api, http.MethodPost, "/api/chat", chatBody("c", "go")); code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	_, body := do(api, http.MethodGet, "/api/chats/c", "")
	var view aisdk.ChatView
	if err := json.Unmarshal([]byte(body), &view); err != nil {
		t.Fatal(err)
	}
	states := map[string]aisdk.PartState{}
	for _, p := range view.Messages[1].Parts {
		if p.IsTool() {
			states[p.ToolCallID] = p.State
		}
	}
	want := map[string]aisdk.PartState{"f": aisdk.StateInputAvailable, "d": aisdk.StateApprovalRequested, "w": aisdk.StateOutputAvailable}
	if fmt.Sprint(states) != fmt.Sprint(want) {
		t.Errorf("tool states %v, want %v", states, want)
	}
}

// remote makes a request look as if it came over the network.
func remote(r *http.Request) {
	addr := &net.TCPAddr{IP: net.ParseIP("203.0.113.7"), Port: 443}
	*r = *r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(addr)))
}

// Every route asks the one authorization hook, with the chat id of the
// request ("" for the list), and a refusal stops the request before it
// reads or writes anything.
func TestAuthorize_GuardsEveryRoute(t *testing.T) {
	st := newStore(t)
	var asked []string
	h := &aisdk.Handler{
		Agent: &agentloop.Agent{Model: echoModel()}, Store: st, Logger: slog.New(slog.DiscardHandler),
		Authorize: func(r *http.Request, chatID string) error {
			asked = append(asked, r.Method+" "+chatID)
			if chatID == "secret" {
				return errors.New("not yours")
			}
			return nil
		},
	}
	api := h.Routes("/api")
	if code, body := do(api, http.MethodPost, "/api/chat", chatBody("secret", "hi"), remote); code != http.StatusForbidden || !strings.Contains(body, "not yours") {
		t.Errorf("POST chat: %d %s", code, body)
	}
	for _, rt := range []struct{ method, path string }{
		{http.MethodGet, "/api/chat/secret/stream"}, {http.MethodPost, "/api/chat/secret/stop"},
		{http.MethodGet, "/api/chats/secret"}, {http.MethodDelete, "/api/chats/secret"},
	} {
		if code, body := do(api, rt.method, rt.path, ""); code != http.StatusForbidden {
			t.Errorf("%s %s: %d %s", rt.method, rt.path, code, body)
		}
	}
	if _, err := st.GetChat(context.Background(), "secret"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused request wrote the chat: %v", err)
	}
	do(api, http.MethodGet, "/api/chats", "")
	want := "[POST secret GET secret POST secret GET secret DELETE secret GET ]"
	if got := fmt.Sprint(asked); got != want {
		t.Errorf("asked %s, want %s", got, want)
	}
}

// Without an Authorize hook a Handler with a Store serves loopback (and
// in-process) requests only; without a Store it serves everyone.
func TestAuthorize_WithoutAHookStoredChatsAreServedOverLoopbackOnly(t *testing.T) {
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: echoModel()}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler)}
	api := h.Routes("/api")
	code, body := do(api, http.MethodPost, "/api/chat", chatBody("c", "hi"), remote)
	if code != http.StatusForbidden || !strings.Contains(body, "loopback") {
		t.Errorf("a remote request: %d %s", code, body)
	}
	if code, body := do(api, http.MethodGet, "/api/chats", "", remote); code != http.StatusForbidden {
		t.Errorf("a remote list: %d %s", code, body)
	}
	srv := httptest.NewServer(api) // on 127.0.0.1
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/chats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a loopback request: %d", resp.StatusCode)
	}
	stateless := &aisdk.Handler{Agent: &agentloop.Agent{Model: echoModel()}, Logger: slog.New(slog.DiscardHandler)}
	if code, body := do(stateless, http.MethodPost, "/api/chat", chatBody("c", "hi"), remote); code != http.StatusOK {
		t.Errorf("stateless, remote: %d %s", code, body)
	}
}

// OwnerAuthorizer gives each user their own chats, on the chat routes and,
// with the same func, on toolstate's.
func TestOwnerAuthorizer_EachUserSeesOnlyTheirChats(t *testing.T) {
	st := newStore(t)
	user := func(r *http.Request) (string, error) {
		u := r.Header.Get("X-User")
		if u == "" {
			return "", &aisdk.HTTPError{Status: http.StatusUnauthorized, Message: "log in first"}
		}
		return u, nil
	}
	authorize := aisdk.OwnerAuthorizer(st, user)
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: echoModel()}, Store: st, Logger: slog.New(slog.DiscardHandler),
		Authorize: authorize, Owner: user}
	api := h.Routes("/api")
	as := func(u string) func(*http.Request) { return func(r *http.Request) { r.Header.Set("X-User", u) } }

	if code, body := do(api, http.MethodPost, "/api/chat", chatBody("alice-1", "hello"), as("alice")); code != http.StatusOK {
		t.Fatalf("alice: %d %s", code, body)
	}
	if code, body := do(api, http.MethodPost, "/api/chat", chatBody("bob-1", "hi"), as("bob")); code != http.StatusOK {
		t.Fatalf("bob: %d %s", code, body)
	}
	if c, _ := st.GetChat(context.Background(), "alice-1"); c.Owner != "alice" {
		t.Errorf("owner %q", c.Owner)
	}
	for _, rt := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/chat", chatBody("alice-1", "let me in")},
		{http.MethodGet, "/api/chats/alice-1", ""}, {http.MethodDelete, "/api/chats/alice-1", ""},
		{http.MethodGet, "/api/chat/alice-1/stream", ""}, {http.MethodPost, "/api/chat/alice-1/stop", ""},
	} {
		if code, body := do(api, rt.method, rt.path, rt.body, as("bob")); code != http.StatusNotFound {
			t.Errorf("bob %s %s: %d %s", rt.method, rt.path, code, body)
		}
	}
	_, body := do(api, http.MethodGet, "/api/chats", "", as("bob"))
	if !strings.Contains(body, "bob-1") || strings.Contains(body, "alice-1") {
		t.Errorf("bob's list %s", body)
	}
	if code, _ := do(api, http.MethodGet, "/api/chats", ""); code != http.StatusUnauthorized {
		t.Errorf("anonymous list: %d", code)
	}
	// The same hook guards the tool states.
	states := toolstate.NewHandler(st, toolstate.HandlerOptions{Authorize: authorize})
	if code, body := do(states, http.MethodGet, "/agents/alice-1/tool-states", "", as("bob")); code != http.StatusNotFound {
		t.Errorf("bob read alice's tool states: %d %s, want 404 as on the chat routes (HTTPError.StatusCode)", code, body)
	}
	if code, body := do(states, http.MethodGet, "/agents/alice-1/tool-states", "", as("alice")); code != http.StatusOK {
		t.Errorf("alice's tool states: %d %s", code, body)
	}
}
