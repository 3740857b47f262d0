package loadtest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/aisdk/internal/servetest"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/store/pgstore"
	"github.com/agentloop/agentloop/store/sqlitestore"
)

// backends opens one store of each backend: memstore, SQLite, and
// PostgreSQL when AGENTLOOP_TEST_POSTGRES names a server (else it is left
// out, and under CI=true the test fails).
func backends(t *testing.T) map[string]aisdk.ChatStore {
	t.Helper()
	ctx := context.Background()
	out := map[string]aisdk.ChatStore{}
	mem := memstore.New(memstore.Options{})
	t.Cleanup(func() { _ = mem.Close() })
	out["memstore"] = mem
	lite, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "chats.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lite.Close() })
	out["sqlite"] = lite
	server := os.Getenv("AGENTLOOP_TEST_POSTGRES")
	if server == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("AGENTLOOP_TEST_POSTGRES is not set: CI must start a PostgreSQL server (.ci/run's PostgreSQL step does)")
		}
		t.Log("no PostgreSQL server: set AGENTLOOP_TEST_POSTGRES=postgres://user@127.0.0.1:5432/db?sslmode=disable to include it")
		return out
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	schema := "aisdk_conc_" + hex.EncodeToString(id[:])
	pg, err := pgstore.Open(ctx, server, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = pg.Close()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	out["postgres"] = pg
	return out
}

// tabModel answers every user message with "echo: " and its text, in
// two steps; "wait" it answers with a call of wait_until_stopped.
func tabModel() *simtest.Model {
	return simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentloop.RoleUser && last.Text() == "wait" {
			return []simtest.Step{simtest.Text("Waiting."), simtest.Call("", "wait_until_stopped", map[string]string{})}, nil
		}
		if last.Role != agentloop.RoleUser {
			return []simtest.Step{simtest.Text("Stopped waiting.")}, nil
		}
		return []simtest.Step{simtest.Text("echo: "), simtest.Text(last.Text())}, nil
	})
}

// waitUntilStopped is a server tool that runs until its run is stopped;
// started gets a value as each call begins.
func waitUntilStopped(t *testing.T) (*agentloop.Tool, <-chan struct{}) {
	started := make(chan struct{}, 64)
	tool, err := agentloop.NewRawTool("wait_until_stopped", "Waits.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool, started
}

// postTally counts what concurrent posts to one chat got.
type postTally struct {
	answered   int // 200 and a finished answer
	stopped    int // 200, stopped by a newer request (an abort chunk)
	refused    int // 4xx
	failed     int // anything else (5xx, an error chunk, a broken stream)
	unanswered int // chats whose stored history ends with a user message
}

// concurrentPosts posts n new user messages at once to one chat, as n
// tabs of it do, for rounds chats, and tallies the answers and the chats
// left unanswered. The chat has one exchange already or, when busy, a run
// in progress that waits until it is stopped.
func concurrentPosts(t *testing.T, st aisdk.ChatStore, n, rounds int, busy bool) postTally {
	t.Helper()
	wait, started := waitUntilStopped(t)
	r := servetest.NewReplica(t, st, tabModel(), wait)
	var tally postTally
	var mu sync.Mutex
	for round := range rounds {
		chatID := fmt.Sprintf("conc-%d-%d-%v", n, round, busy)
		first := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: chatID}
		firstDone := make(chan error, 1)
		if busy {
			go func() {
				_, err := first.Send(context.Background(), "wait")
				firstDone <- err
			}()
			<-started
		} else if _, err := first.Send(context.Background(), "hello"); err != nil {
			t.Fatal(err)
		}
		firstMsgs := first.Messages()
		if busy {
			// The tabs have the user message; the run in progress is theirs
			// to stop.
			firstMsgs = []aisdk.UIMessage{{ID: "user-1", Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: "wait"}}}}
		}
		var wg sync.WaitGroup
		for i := range n {
			tab := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: chatID}
			// Every tab names its message uniquely.
			tab.SetMessages(append(append([]aisdk.UIMessage(nil), firstMsgs...), aisdk.UIMessage{
				ID: fmt.Sprintf("tab-%d", i), Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: fmt.Sprintf("tab %d", i)}},
			}))
			wg.Go(func() {
				msgs, err := tab.Resend(context.Background())
				mu.Lock()
				defer mu.Unlock()
				var status *aisdktest.HTTPStatusError
				switch {
				case errors.As(err, &status) && status.Status < 500:
					t.Logf("tab %d refused: %v", i, err)
					tally.refused++
				case err != nil:
					t.Logf("tab %d: %v", i, err)
					tally.failed++
				case len(tab.Transcript()) > 0 && isAborted(tab.Transcript()[len(tab.Transcript())-1]):
					tally.stopped++
				case msgs[len(msgs)-1].Role == "assistant":
					tally.answered++
				default:
					tally.failed++
				}
			})
		}
		wg.Wait()
		if busy {
			if err := <-firstDone; err != nil {
				t.Errorf("the run the tabs stopped: %v", err)
			}
			if !isAborted(first.Transcript()[0]) {
				t.Errorf("the run in progress was not stopped visibly")
			}
		}
		if h := servetest.History(t, st, chatID); len(h) == 0 || h[len(h)-1].Role == agentloop.RoleUser {
			tally.unanswered++
		}
	}
	return tally
}

func isAborted(ex aisdktest.Exchange) bool {
	for _, c := range ex.Chunks {
		if chunkType(c) == "abort" {
			return true
		}
	}
	return false
}

// Concurrent posts to one chat (two tabs, a double click, a retrying
// client) are all accepted and answered, one after the other, or stopped
// visibly by a newer one; none is refused, and no chat is left with an
// unanswered user message.
//
// It prints the figures of issue 21 with -v:
//
//	AGENTLOOP_TEST_POSTGRES=… go test ./aisdk/ -run TestStored_ConcurrentPostsToOneChatAreAllAnswered -v
func TestStored_ConcurrentPostsToOneChatAreAllAnswered(t *testing.T) {
	const rounds = 3
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				n    int
				busy bool
			}{{8, false}, {20, false}, {8, true}, {20, true}} {
				n := c.n
				got := concurrentPosts(t, st, n, rounds, c.busy)
				state := "at rest"
				if c.busy {
					state = "with a run in progress"
				}
				t.Logf("%s, %d posts × %d rounds to a chat %s: %d answered, %d stopped by a newer post, %d refused, %d failed; %d of %d chats unanswered",
					name, n, rounds, state, got.answered, got.stopped, got.refused, got.failed, got.unanswered, rounds)
				if got.answered+got.stopped != n*rounds || got.unanswered != 0 {
					t.Errorf("%d posts × %d rounds: %+v, want every post answered and no chat unanswered", n, rounds, got)
				}
			}
		})
	}
}

func chunkType(data json.RawMessage) string {
	var c struct{ Type string }
	_ = json.Unmarshal(data, &c)
	return c.Type
}
