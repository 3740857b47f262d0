package dbosrun_test

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/dbos-inc/dbos-transact-golang/dbos/driver/sqlite" // DBOS on SQLite

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/durable/dbosrun"
	"github.com/agentloop/agentloop/store/memstore"
)

// A run on DBOS with SQLite: register the runner before Launch (on every
// start, so that Launch recovers the runs a dead process left), then
// stream runs by id.
func Example() {
	dir, err := os.MkdirTemp("", "dbosrun-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	d, err := dbos.NewContext(ctx, dbos.Config{
		AppName:     "example",
		DatabaseURL: "sqlite:" + filepath.Join(dir, "dbos.db"),
		Logger:      slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer func() { _ = dbos.Shutdown(d, 5*time.Second) }()

	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) { yield(agentloop.TextDelta{Text: "Hello!"}, nil) }
	})
	agent := &agentloop.Agent{Model: model} // a provider's model in a real program
	runner, err := dbosrun.New(d, agent, dbosrun.Options{})
	if err != nil {
		panic(err)
	}
	if err := dbos.Launch(d); err != nil {
		panic(err)
	}

	run := dbosrun.Run{ID: "chat-1/stream-1", ConversationID: "chat-1", History: agentloop.History{agentloop.UserMessage("hi")}}
	for item, err := range runner.Stream(ctx, run) {
		if err != nil {
			panic(err)
		}
		if f, ok := item.(agentloop.Final); ok {
			fmt.Println(f.Text)
		}
	}
	// Output: Hello!
}

// The stored mode of aisdk on DBOS: the ChatServer's runs are workflows,
// whose items reach the ChatServer wherever DBOS runs them (OnItem), so a
// run outlives its process. Register before Launch, which recovers the
// runs this executor left.
func ExampleRunner_chatServer() {
	dir, err := os.MkdirTemp("", "dbosrun-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	d, err := dbos.NewContext(context.Background(), dbos.Config{
		AppName:     "example",
		DatabaseURL: "sqlite:" + filepath.Join(dir, "dbos.db"),
		Logger:      slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer func() { _ = dbos.Shutdown(d, 5*time.Second) }() // after chat.Shutdown: the runs are handed over

	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) { yield(agentloop.TextDelta{Text: "Hello!"}, nil) }
	})
	agent := &agentloop.Agent{Model: model}
	st := memstore.New(memstore.Options{}) // sqlitestore or pgstore in a real program
	defer st.Close()
	chat := &aisdk.ChatServer{Agent: agent, Store: st}
	runner, err := dbosrun.New(d, agent, dbosrun.Options{OnItem: chat.RunItem})
	if err != nil {
		panic(err)
	}
	chat.Runner = runner
	if err := chat.Validate(); err != nil {
		panic(err)
	}
	if err := dbos.Launch(d); err != nil {
		panic(err)
	}
	defer func() { _ = chat.Shutdown(context.Background()) }()

	srv := httptest.NewServer(chat.Routes("/api"))
	defer srv.Close()
	msgs, err := (&aisdktest.ChatClient{URL: srv.URL + "/api/chat", ChatID: "c"}).Send(context.Background(), "hi")
	if err != nil {
		panic(err)
	}
	fmt.Println(msgs[1].Parts[len(msgs[1].Parts)-1].Text)
	// Output: Hello!
}
