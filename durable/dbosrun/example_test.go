package dbosrun_test

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/dbos-inc/dbos-transact-golang/dbos/driver/sqlite" // DBOS on SQLite

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/dbosrun"
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
