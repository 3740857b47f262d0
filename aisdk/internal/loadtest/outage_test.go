package loadtest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/aisdk/internal/servetest"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/pgstore"

	"github.com/agentloop/agentloop"
)

// The fault figures of issue 21 on a real PostgreSQL that the test stops
// and starts: a measurement, not a check of CI, so it runs only when asked
// for, on a throwaway server (never a shared one: it is stopped with -m
// immediate). For example, as root, with a cluster made by initdb in $d
// and listening on port 55491:
//
//	AGENTLOOP_TEST_PG_OUTAGE='postgres://postgres@127.0.0.1:55491/postgres?sslmode=disable' \
//	AGENTLOOP_TEST_PG_STOP="runuser -u postgres -- pg_ctl -D $d/data -m immediate stop" \
//	AGENTLOOP_TEST_PG_START="runuser -u postgres -- pg_ctl -D $d/data -l $d/server.log -w start -o '-c listen_addresses=127.0.0.1 -p 55491 -k $d'" \
//	go test ./aisdk/ -run TestOutage -v
//
// It logs the figures (t.Log) and fails only when the chat is left in a
// state it should not be: not free, or with a lost or doubled message.
func outageServer(t *testing.T) (dsn string, stop, start func()) {
	dsn = os.Getenv("AGENTLOOP_TEST_PG_OUTAGE")
	stopCmd, startCmd := os.Getenv("AGENTLOOP_TEST_PG_STOP"), os.Getenv("AGENTLOOP_TEST_PG_START")
	if dsn == "" || stopCmd == "" || startCmd == "" {
		t.Skip("a measurement on a throwaway PostgreSQL: set AGENTLOOP_TEST_PG_OUTAGE (its URL), AGENTLOOP_TEST_PG_STOP and AGENTLOOP_TEST_PG_START (shell commands that stop it with -m immediate and start it, waiting) to run it")
	}
	run := func(cmd string) func() {
		return func() {
			out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
			require.NoError(t, err, "%s: %s", cmd, out)
		}
	}
	return dsn, run(stopCmd), run(startCmd)
}

// outageHandler serves model with the gate's tool on a fresh schema of dsn.
func outageHandler(t *testing.T, dsn string, model agentloop.Model, g *servetest.Gate) (*aisdk.ChatServer, *pgstore.Store, string) {
	var id [6]byte
	_, _ = rand.Read(id[:])
	st, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Schema: "aisdk_outage_" + hex.EncodeToString(id[:])})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	h := &aisdk.ChatServer{
		Agent:     &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{g.Tool}},
		Store:     st,
		Authorize: func(*http.Request, string) error { return nil },
		Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)), // what failed, with the figures
		KeepAlive: -1,
	}
	srv := httptest.NewServer(h.Routes("/api"))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	return h, st, srv.URL + "/api/chat"
}

// waitFree polls the chat's stream until none is active, and returns how
// long that took (the measurement's clock; the store may fail meanwhile).
func waitFree(t *testing.T, st store.Streams, chatID string, limit time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < limit {
		_, err := st.ActiveStream(context.Background(), chatID)
		if errors.Is(err, store.ErrNotFound) {
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond) // a measurement's poll
	}
	t.Fatalf("chat %q still has an active stream after %v", chatID, limit)
	return 0
}

// outageModel calls the gate's tool for "first", answers "Done." to its
// result, and "answer to …" to any other user message.
func outageModel() *simtest.Model {
	return simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == agentloop.RoleTool:
			return []simtest.Step{simtest.Text("Done.")}, nil
		case last.Text() == "first":
			return []simtest.Step{simtest.Text("Working."), simtest.Call("", "wait_for_it", map[string]string{})}, nil
		}
		return []simtest.Step{simtest.Text("answer to " + last.Text())}, nil
	})
}

// userTexts counts the chat's user messages by text.
func userTexts(h agentloop.History) map[string]int {
	out := map[string]int{}
	for _, m := range h {
		if m.Role == agentloop.RoleUser {
			out[m.Text()]++
		}
	}
	return out
}

// (c) PostgreSQL restarts (-m immediate) while a run's tool runs: what the
// client and the chat show after, and how long until the chat takes its
// next message.
func TestOutage_PostgreSQLRestartMidRun(t *testing.T) {
	dsn, stop, start := outageServer(t)
	g := servetest.NewGate(t)
	defer g.Open()
	_, st, url := outageHandler(t, dsn, outageModel(), g)
	client := &aisdktest.ChatClient{URL: url, ChatID: "c"}
	done := make(chan error, 1)
	go func() {
		_, err := client.Send(context.Background(), "first")
		done <- err
	}()
	<-g.Started
	t0 := time.Now()
	stop()
	start()
	back := time.Now()
	t.Logf("PostgreSQL restarted in %v", back.Sub(t0).Round(time.Millisecond))
	g.Open()
	err := <-done
	chunks := client.Transcript()[0].Chunks
	t.Logf("the run's client: error %v; %d chunks, the last %s", err, len(chunks), chunks[len(chunks)-1])
	waitFree(t, st, "c", time.Minute)
	t.Logf("the chat was free %v after PostgreSQL was back", time.Since(back).Round(time.Millisecond))
	next := time.Now()
	_, err = client.Send(context.Background(), "second")
	require.NoError(t, err, "the next message after the restart")
	t.Logf("the next message was answered in %v", time.Since(next).Round(time.Millisecond))
	c, err := st.GetChat(context.Background(), "c")
	require.NoError(t, err)
	t.Logf("the stored chat: %d messages, users %v, answers %q", len(c.History), userTexts(c.History), assistantTexts(c.History))
	require.Equal(t, map[string]int{"first": 1, "second": 1}, userTexts(c.History), "no user message lost or doubled")
	require.NoError(t, c.History.Validate())
}

// (d) PostgreSQL is down when the run ends (issue 21 item 13): the run
// tries to end its stream again until the database is back; the figure is
// the time from the database back to the chat free.
func TestOutage_ARunThatEndsDuringTheOutageFreesTheChatWhenPostgreSQLIsBack(t *testing.T) {
	dsn, stop, start := outageServer(t)
	for _, outage := range []time.Duration{time.Second, 3 * time.Second, 7 * time.Second} {
		t.Run(outage.String(), func(t *testing.T) {
			g := servetest.NewGate(t)
			defer g.Open()
			_, st, url := outageHandler(t, dsn, outageModel(), g)
			client := &aisdktest.ChatClient{URL: url, ChatID: "c"}
			done := make(chan error, 1)
			var ended time.Time // when the client's response ended
			go func() {
				_, err := client.Send(context.Background(), "first")
				ended = time.Now()
				done <- err
			}()
			<-g.Started
			stop()
			opened := time.Now()
			g.Open()           // the run goes on, and ends, while the database is down
			time.Sleep(outage) // the outage goes on, whatever the run does
			start()
			free := waitFree(t, st, "c", time.Minute)
			t.Logf("after a %v outage, the chat was free %v after PostgreSQL was back (lease %v)", outage, free.Round(time.Millisecond), aisdk.DefaultStreamLease)
			err := <-done
			chunks := client.Transcript()[0].Chunks
			t.Logf("the run's client: error %v, its response ended %v after the tool was let go (negative: the run failed before), the outage lasting %v; %d chunks, the last %s", err, ended.Sub(opened).Round(time.Millisecond), outage, len(chunks), chunks[len(chunks)-1])
			_, err = client.Send(context.Background(), "second")
			require.NoError(t, err, "the next message after the outage")
			c, err := st.GetChat(context.Background(), "c")
			require.NoError(t, err)
			t.Logf("the stored chat: %d messages, users %v, answers %q", len(c.History), userTexts(c.History), assistantTexts(c.History))
			require.Equal(t, map[string]int{"first": 1, "second": 1}, userTexts(c.History), "no user message lost or doubled")
			require.NoError(t, c.History.Validate())
		})
	}
}

// assistantTexts returns the text of each assistant message of h.
func assistantTexts(h agentloop.History) []string {
	var out []string
	for _, m := range h {
		if m.Role == agentloop.RoleAssistant {
			out = append(out, m.Text())
		}
	}
	return out
}
