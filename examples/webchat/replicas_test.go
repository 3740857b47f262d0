package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/internal/syncbuf"
)

// postgresEnv names the PostgreSQL server of the replica tests, as for
// store/pgstore's tests (.ci/run starts one and sets it).
const postgresEnv = "AGENTLOOP_TEST_POSTGRES"

// postgresDB returns the URL of a fresh schema on the test server (dropped
// when t ends), or skips t without a server, except under CI=true, where
// it fails.
func postgresDB(t *testing.T) string {
	t.Helper()
	server := os.Getenv(postgresEnv)
	if server == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI must start a PostgreSQL server for the replica tests (.ci/run's PostgreSQL step does)", postgresEnv)
		}
		t.Skipf("no PostgreSQL server: set %s=postgres://user@127.0.0.1:5432/db?sslmode=disable to run the replica tests", postgresEnv)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := fmt.Sprintf("webchat_test_%x", b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("%s: %v", postgresEnv, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("%s: %v", postgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema) // a startup parameter: the webchat's tables go there
	u.RawQuery = q.Encode()
	return u.String()
}

// buildWebchat builds the webchat command into a temporary folder of t.
func buildWebchat(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "webchat")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// process is a webchat server running as a process of its own.
type process struct {
	url    string
	cmd    *exec.Cmd
	logs   *syncbuf.Buffer
	logged chan struct{} // gets a value (if it has room) after each line logged
	done   chan struct{} // closed when the process exited
}

// waitLog waits until p logged a line that contains text, failing t if p
// ends first.
func (p *process) waitLog(t *testing.T, text string) {
	t.Helper()
	for !strings.Contains(p.logs.String(), text) {
		select {
		case <-p.logged:
		case <-p.done:
			if !strings.Contains(p.logs.String(), text) {
				t.Fatalf("the webchat process ended without logging %q:\n%s", text, p.logs)
			}
		}
	}
}

// startProcess runs the webchat command bin with args on a free loopback
// port, stopped (SIGTERM, then waited for) when t ends.
func startProcess(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "OTEL_SDK_DISABLED=true")
	dieWithTest(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, logs: &syncbuf.Buffer{}, logged: make(chan struct{}, 1), done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		defer close(addr)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.logs, line)
			select {
			case p.logged <- struct{}{}:
			default:
			}
			if a, ok := strings.CutPrefix(line, "webchat: serving http://"); ok {
				addr <- strings.Fields(a)[0]
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
		if t.Failed() {
			t.Logf("webchat %v log:\n%s", args, p.logs)
		}
	})
	a, ok := <-addr
	if !ok {
		<-p.done
		t.Fatalf("webchat %v did not start:\n%s", args, p.logs)
	}
	p.url = "http://" + a
	return p
}

// kill ends the process at once, as a crash does: nothing is saved or
// released.
func (p *process) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// Two webchat processes share one PostgreSQL, as replicas behind a load
// balancer: a run started on A is resumed on B after its client went
// away, a stop sent to B cancels it on A, and once A is killed (kill -9)
// mid-run, B serves the chat's next message from a consistent history.
func TestReplicas_TwoProcessesShareOnePostgreSQL(t *testing.T) {
	db := postgresDB(t)
	dir := t.TempDir()
	script := func(name, turns string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(`{"turns":[`+turns+`]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	bin := buildWebchat(t)
	a := startProcess(t, bin, "-db", db, "-lease", "1s", "-script", script("a.json", `
		{"expect":{"user":"Hello"},"reply":[{"text":"Working on it"},{"hang":true}]},
		{"expect":{"user":"Weather?"},"reply":[{"text":"Checking."},{"tool_call":{"id":"w","name":"get_weather","args":{"city":"Oslo"}}}]},
		{"reply":[{"text":"Still working"},{"hang":true}]}`))
	b := startProcess(t, bin, "-db", db, "-lease", "1s", "-script", script("b.json", `
		{"expect":{"user":"Are you there?"},"reply":[{"text":"Yes: B answers."}]}`))

	// A run starts on A; its client goes away.
	ctx, drop := context.WithCancel(context.Background())
	defer drop()
	onA := &aisdktest.ChatClient{URL: a.url + "/api/chat", ChatID: "c1", OnChunk: func(_ int, data json.RawMessage) {
		if strings.Contains(string(data), `"text-delta"`) {
			drop()
		}
	}}
	if _, err := onA.Send(ctx, "Hello"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the client should have gone away: %v", err)
	}

	// The client resumes the stream on B, which follows the run on A.
	following := make(chan struct{})
	var once sync.Once
	onB := &aisdktest.ChatClient{URL: b.url + "/api/chat", ChatID: "c1", OnChunk: func(_ int, data json.RawMessage) {
		if strings.Contains(string(data), `"text-delta"`) {
			once.Do(func() { close(following) }) // the replay reached what A streamed
		}
	}}
	onB.SetMessages(onA.Messages()[:1])
	type result struct {
		resumed bool
		err     error
	}
	resumed := make(chan result, 1)
	go func() {
		ok, err := onB.Resume(context.Background())
		resumed <- result{ok, err}
	}()
	select {
	case <-following:
	case r := <-resumed:
		t.Fatalf("the resume on B ended before it replayed the run: %+v", r)
	}

	// A stop sent to B cancels the run on A; the resumed stream ends.
	if err := onB.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := <-resumed; !r.resumed || r.err != nil {
		t.Fatalf("the resume on B: %+v", r)
	}
	if msgs := onB.Messages(); len(msgs) != 2 || !strings.Contains(fmt.Sprint(msgs[1].Parts), "Working on it") {
		t.Errorf("the resumed chat on B: %+v", msgs)
	}
	view := getChat(t, b.url, "c1")
	if view.Streaming || len(view.Messages) != 2 {
		t.Errorf("chat c1 after the stop: %+v", view)
	}

	// A is killed mid-run, after a server tool ran; B serves the next
	// message once A's lease ran out.
	ctx2, drop2 := context.WithCancel(context.Background())
	defer drop2()
	killed := make(chan struct{})
	var killOnce sync.Once
	var killedAt time.Time
	client := &aisdktest.ChatClient{URL: a.url + "/api/chat", ChatID: "c2", OnChunk: func(_ int, data json.RawMessage) {
		if strings.Contains(string(data), "Still") {
			killOnce.Do(func() {
				a.kill(t)
				killedAt = time.Now()
				close(killed)
			})
		}
	}}
	if _, err := client.Send(ctx2, "Weather?"); err == nil {
		t.Fatal("the run on A ended, though A was killed in it")
	}
	<-killed
	client.URL = b.url + "/api/chat"
	if _, err := client.Send(context.Background(), "Are you there?"); err != nil {
		t.Fatalf("B refused the next message: %v\nB's log:\n%s", err, b.logs)
	}
	t.Logf("B answered the next message %v after A was killed (-lease 1s)", time.Since(killedAt).Round(time.Millisecond))
	view = getChat(t, b.url, "c2")
	var texts []string
	results := 0
	for _, m := range view.Messages {
		for _, p := range m.Parts {
			switch {
			case p.Type == "text":
				texts = append(texts, p.Text)
			case p.ToolCallID == "w" && p.State == aisdk.StateOutputAvailable:
				results++
			}
		}
	}
	want := []string{"Weather?", "Checking.", "Are you there?", "Yes: B answers."}
	if fmt.Sprint(texts) != fmt.Sprint(want) || results != 1 || view.Streaming {
		t.Errorf("chat c2 on B: texts %q (want %q), %d results of get_weather (want 1), streaming %v", texts, want, results, view.Streaming)
	}
}
