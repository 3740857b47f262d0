package loadtest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store/pgstore"
	"github.com/agentloop/agentloop/store/sqlitestore"
)

// The load of issue 11: loadChats chats of loadMessages messages each, all
// chats at once, each message on the other replica than the one before.
// Every message is one request with two model turns: a server tool call,
// then the answer.
const (
	loadChats    = 200
	loadMessages = 10
)

// BenchmarkLoad_TwoReplicasOnSQLite runs the load on two replicas that
// open the same SQLite file. CI runs it once (-benchtime=1x); it reports
// the throughput of messages and the p50 and p99 of a message's request.
func BenchmarkLoad_TwoReplicasOnSQLite(b *testing.B) {
	path := filepath.Join(b.TempDir(), "chats.db")
	benchLoad(b, func() aisdk.ChatStore {
		st, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st
	})
}

// BenchmarkLoad_TwoReplicasOnPostgreSQL runs the load on two replicas
// sharing one PostgreSQL (AGENTLOOP_TEST_POSTGRES; it skips without one,
// and fails under CI=true).
func BenchmarkLoad_TwoReplicasOnPostgreSQL(b *testing.B) {
	server := os.Getenv("AGENTLOOP_TEST_POSTGRES")
	if server == "" {
		if os.Getenv("CI") == "true" {
			b.Fatal("AGENTLOOP_TEST_POSTGRES is not set: CI must start a PostgreSQL server (.ci/run's PostgreSQL step does)")
		}
		b.Skip("no PostgreSQL server: set AGENTLOOP_TEST_POSTGRES=postgres://user@127.0.0.1:5432/db?sslmode=disable to run this benchmark")
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	schema := "aisdk_load_" + hex.EncodeToString(id[:])
	b.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			b.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			b.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	benchLoad(b, func() aisdk.ChatStore {
		st, err := pgstore.Open(context.Background(), server, pgstore.Options{Schema: schema})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st
	})
}

// loadModel calls the echo tool for a user message, then answers with its
// result.
func loadModel() *simtest.Model {
	return simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentloop.RoleUser {
			return []simtest.Step{simtest.Call("", "echo", map[string]string{"text": last.Text()})}, nil
		}
		for _, p := range last.Parts {
			if p.Type == agentloop.PartToolResult {
				return []simtest.Step{simtest.Text("echo: " + p.ToolResult.Content)}, nil
			}
		}
		return nil, fmt.Errorf("unexpected request ending with a %s message", last.Role)
	})
}

func benchLoad(b *testing.B, open func() aisdk.ChatStore) {
	echo, err := agentloop.NewTool("echo", "Echo the text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	var urls []string
	for range 2 {
		h := &aisdk.Handler{
			Agent:     &agentloop.Agent{Model: loadModel(), Tools: []*agentloop.Tool{echo}},
			Store:     open(),
			Logger:    slog.New(slog.DiscardHandler),
			KeepAlive: -1,
		}
		srv := httptest.NewServer(h)
		b.Cleanup(srv.Close)
		b.Cleanup(func() { _ = h.Shutdown(context.Background()) })
		urls = append(urls, srv.URL)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadChats}}
	st := open()

	var latencies []time.Duration
	round := 0
	for b.Loop() {
		round++
		latencies = latencies[:0]
		var mu sync.Mutex
		var wg sync.WaitGroup
		errs := make(chan error, loadChats)
		for c := range loadChats {
			wg.Go(func() {
				chatID := fmt.Sprintf("r%d-c%d", round, c)
				cc := &aisdktest.ChatClient{ChatID: chatID, HTTPClient: client}
				for m := range loadMessages {
					cc.URL = urls[(c+m)%2]
					start := time.Now()
					if _, err := cc.Send(context.Background(), fmt.Sprintf("message %d", m)); err != nil {
						errs <- fmt.Errorf("chat %s, message %d: %w", chatID, m, err)
						return
					}
					d := time.Since(start)
					mu.Lock()
					latencies = append(latencies, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		b.StopTimer()
		checkLoad(b, st, round)
		b.StartTimer()
	}
	slices.Sort(latencies)
	total := time.Duration(0)
	for _, d := range latencies {
		total += d
	}
	b.ReportMetric(float64(loadChats*loadMessages*b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// checkLoad checks that every chat of the round holds its messages once
// each, in order: the user message, the tool call with its one result,
// the answer.
func checkLoad(b *testing.B, st aisdk.ChatStore, round int) {
	b.Helper()
	for c := range loadChats {
		chatID := fmt.Sprintf("r%d-c%d", round, c)
		chat, err := st.GetChat(context.Background(), chatID)
		if err != nil {
			b.Fatalf("chat %s: %v", chatID, err)
		}
		h := chat.History
		if len(h) != 4*loadMessages {
			b.Fatalf("chat %s has %d messages, want %d: %+v", chatID, len(h), 4*loadMessages, h)
		}
		seen := map[string]bool{}
		for m := range loadMessages {
			user, call, result, answer := h[4*m], h[4*m+1], h[4*m+2], h[4*m+3]
			text := fmt.Sprintf("message %d", m)
			calls := call.ToolCalls()
			if user.Text() != text || len(calls) != 1 || seen[calls[0].ID] || result.Role != agentloop.RoleTool ||
				len(result.Parts) != 1 || result.Parts[0].ToolResult.CallID != calls[0].ID || result.Parts[0].ToolResult.Content != text ||
				answer.Text() != "echo: "+text {
				b.Fatalf("chat %s, message %d is not what was sent, once: %+v", chatID, m, h[4*m:4*m+4])
			}
			seen[calls[0].ID] = true
		}
	}
}
