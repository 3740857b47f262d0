package sqlitestore_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/sqlitestore"
)

// The README's durable chats: the handler on an SQLite store, each user
// with their own chats, mounted with its routes.
func TestREADME_DurableChats(t *testing.T) {
	t.Chdir(t.TempDir())
	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Hello, Ada.")}})}
	userOf := func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-User"); u != "" { // an app reads its session here
			return u, nil
		}
		return "", &aisdk.HTTPError{Status: http.StatusUnauthorized, Message: "log in first"}
	}
	mux, shutdown, err := serveDurable(t.Context(), agent, userOf)
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	withUser := &http.Client{Transport: headerTransport{"X-User", "ada"}}
	client := &aisdktest.ChatClient{URL: srv.URL + "/api/chat", HTTPClient: withUser, ChatID: "c1"}
	if _, err := client.Send(t.Context(), "Hi"); err != nil {
		t.Fatal(err)
	}
	resp, err := withUser.Get(srv.URL + "/api/chats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list aisdk.ChatList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Chats) != 1 || list.Chats[0].Title != "Hi" {
		t.Errorf("the chat list: %+v, %v", list, err)
	}
}

func serveDurable(ctx context.Context, agent *agentloop.Agent, userOf func(*http.Request) (string, error)) (http.Handler, func(), error) {
	st, err := sqlitestore.Open(ctx, "chats.db", sqlitestore.Options{}) // or pgstore.Open(ctx, "postgres://…", pgstore.Options{})
	if err != nil {
		return nil, nil, err
	}
	chat := &aisdk.Handler{
		Agent:     agent,
		Store:     st,                                // the stored history is authoritative; runs outlive their clients
		Owner:     userOf,                            // names the user of a request (from your session)
		Authorize: aisdk.OwnerAuthorizer(st, userOf), // each user reaches their own chats only
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", chat.Routes("/api")) // chat, resume, stop, chat list, chat, delete

	go store.ExpireStreams(ctx, st, time.Minute, 10*time.Minute, nil) // ended stream logs go
	// On shutdown: chat.Shutdown(ctx), then srv.Shutdown(ctx), then st.Close().
	return mux, func() { _ = chat.Shutdown(context.Background()); _ = st.Close() }, nil
}

type headerTransport struct{ key, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}
