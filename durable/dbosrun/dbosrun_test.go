package dbosrun_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/dbos-inc/dbos-transact-golang/dbos/driver/sqlite"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/dbosrun"
	"github.com/agentloop/agentloop/durable/internal/enginetest"
)

// The child process of TestRecovery_*: it runs a run until its tool b
// starts, says so on stdout and blocks there until the test kills it.
func TestMain(m *testing.M) {
	if url := os.Getenv("DBOSRUN_CHILD_URL"); url != "" {
		os.Exit(child(url, os.Getenv("DBOSRUN_CHILD_SCHEMA"), os.Getenv("DBOSRUN_CHILD_MARKS")))
	}
	os.Exit(m.Run())
}

func child(url, schema, marks string) int {
	ctx := context.Background()
	d, err := openDBOS(ctx, url, schema)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	blocked := make(chan struct{})
	agent := enginetest.MarkingAgent(marks, blocked)
	if os.Getenv("DBOSRUN_CHILD_AGENT") == "helper" {
		agent = helperMarkingAgent(marks, blocked)
	}
	r, err := dbosrun.New(d, agent, dbosrun.Options{})
	if err == nil {
		err = dbos.Launch(d)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		<-blocked
		fmt.Println("b started")
	}()
	for _, err := range r.Stream(ctx, crashRun) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

var crashRun = dbosrun.Run{ID: "chat-1/stream-1", ConversationID: "chat-1", History: agentloop.History{agentloop.UserMessage("go")}}

// backend is a database DBOS keeps its state in, for one test.
type backend struct {
	name, url, schema string
}

// backends returns SQLite, in a file of the test's, and PostgreSQL, in a
// schema of the test's own, when AGENTLOOP_TEST_POSTGRES is set (in CI,
// CI=true, it must be).
func backends(t testing.TB) []backend {
	t.Helper()
	bs := []backend{{name: "sqlite", url: "sqlite:" + filepath.Join(t.TempDir(), "dbos.db")}}
	pg := os.Getenv("AGENTLOOP_TEST_POSTGRES")
	switch {
	case pg != "":
		bs = append(bs, backend{name: "postgres", url: pg, schema: pgSchema(t, pg)})
	case os.Getenv("CI") == "true":
		t.Fatal("AGENTLOOP_TEST_POSTGRES is not set; CI runs the DBOS tests on PostgreSQL too")
	default:
		t.Log("PostgreSQL skipped: set AGENTLOOP_TEST_POSTGRES=postgres://… to run these tests on it too")
	}
	return bs
}

// freshBackend returns a database of b's kind of t's own: another SQLite
// file, or another PostgreSQL schema.
func freshBackend(t testing.TB, b backend) backend {
	t.Helper()
	if b.schema == "" {
		b.url = "sqlite:" + filepath.Join(t.TempDir(), "dbos.db")
		return b
	}
	b.schema = pgSchema(t, b.url)
	return b
}

// pgSchema names a new schema on the PostgreSQL server at url, which DBOS
// creates, and drops it when t ends (after t's DBOS contexts shut down).
func pgSchema(t testing.TB, url string) string {
	schema := fmt.Sprintf("dbosrun_test_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}

func openDBOS(ctx context.Context, url, schema string) (dbos.Context, error) {
	return dbos.NewContext(ctx, dbos.Config{
		AppName:        "agentloop-dbosrun-test",
		DatabaseURL:    url,
		DatabaseSchema: schema,
		Logger:         slog.New(slog.DiscardHandler),
	})
}

func TestRecovery_AKilledProcessesRunIsFinishedByTheNextWithoutRepeatingCompletedSteps(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testRecovery(t, b) })
	}
}

func testRecovery(t *testing.T, b backend) {
	marksPath := filepath.Join(t.TempDir(), "marks")
	crashChild(t, b, marksPath, "")

	// A new process (executor) on the same database: Launch recovers the run.
	ctx := context.Background()
	d, err := openDBOS(ctx, b.url, b.schema)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dbos.Shutdown(d, 10*time.Second) })
	var mu sync.Mutex
	var recovered []agentloop.Item
	r, err := dbosrun.New(d, enginetest.MarkingAgent(marksPath, nil), dbosrun.Options{OnItem: func(id string, it agentloop.Item, err error) {
		mu.Lock()
		defer mu.Unlock()
		recovered = append(recovered, it)
	}})
	require.NoError(t, err)
	require.NoError(t, dbos.Launch(d))

	last, err := agentloop.Drain(r.Stream(ctx, crashRun))
	require.NoError(t, err)
	f, ok := last.(agentloop.Final)
	require.Truef(t, ok, "last item %T", last)
	assert.Equal(t, "done", f.Text)
	require.Len(t, f.History, 6, "user, call a, result, call b, result, answer")
	assert.Equal(t, "b done", f.History[4].Parts[0].ToolResult.Content)

	got := enginetest.Marks(t, marksPath)
	keyA := agentloop.Step{ConversationID: "chat-1", Turn: 1, CallID: "call_0_0"}.IdempotencyKey()[:8]
	keyB := agentloop.Step{ConversationID: "chat-1", Turn: 2, CallID: "call_1_0"}.IdempotencyKey()[:8]
	assert.Equal(t, map[string]int{
		"model 0": 1, "tool a " + keyA: 1, "model 1": 1, // completed before the kill: once
		"tool b " + keyB: 2, // in flight at the kill: at least once, with the same key
		"model 2":        1,
	}, got)
}

// crashChild runs crashRun in a child process on b, with the agent named
// agent ("" for markingAgent, "helper" for helperMarkingAgent), and kills
// it (SIGKILL) once its tool b started.
func crashChild(t *testing.T, b backend, marksPath, agent string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DBOSRUN_CHILD_URL="+b.url, "DBOSRUN_CHILD_SCHEMA="+b.schema, "DBOSRUN_CHILD_MARKS="+marksPath,
		"DBOSRUN_CHILD_AGENT="+agent)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the child ended before tool b started")
	require.Equal(t, "b started\n", line)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	_, _ = io.Copy(io.Discard, out)
}
