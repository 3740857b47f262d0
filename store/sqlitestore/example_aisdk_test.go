package sqlitestore_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/sqlitestore"
)

// The stored chat server of aisdk's package doc: each chat kept in an
// SQLite file, each user with their own chats. (Compiled, not run: it
// serves until killed.)
func Example_aisdkHandler() {
	ctx := context.Background()
	agent := &agentloop.Agent{Model: simtest.NewModel()} // a provider's model in a real server
	userOf := func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-User"); u != "" { // an app reads its session here
			return u, nil
		}
		return "", &aisdk.HTTPError{Status: http.StatusUnauthorized, Message: "log in first"}
	}

	st, err := sqlitestore.Open(ctx, "chats.db", sqlitestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	chat := &aisdk.Handler{
		Agent:     agent,
		Store:     st,
		Owner:     userOf,
		Authorize: aisdk.OwnerAuthorizer(st, userOf),
	}
	http.Handle("/api/", chat.Routes("/api")) // chat, resume, stop, chat list, chat, delete
	go store.ExpireStreams(ctx, st, time.Minute, 10*time.Minute, nil)
	log.Fatal(http.ListenAndServe("localhost:8080", nil))
}
