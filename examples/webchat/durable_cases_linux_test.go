package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/pgstore"
)

// markingScript is the script of the TestDurable_* runs: the tool "mark",
// then the slow tool "slow" (TestHelperMarkingMCPServer), then the answer.
const markingScript = `{"turns_by":"conversation","turns":[
	{"reply":[{"text":"Marking."},{"tool_call":{"id":"m","name":"mark","args":{}}}]},
	{"expect":{"tool_results":{"m":"marked"}},"reply":[{"text":"Now the slow one."},{"tool_call":{"id":"s","name":"slow","args":{}}}]},
	{"expect":{"tool_results":{"s":"slow done"}},"reply":[{"text":"All done."}]}]}`

// markingRun is the setup of a TestDurable_* case: a script, the marking
// MCP server's files and the webchat arguments that use them.
type markingRun struct {
	marks, fifo, again string
	release            string   // a FIFO the first slow call reads to its end when release is true
	args               []string // -script and -mcp
}

// newMarkingRun writes the script and makes the FIFOs the slow tool says
// "started" (its first call) and "again" (a later one) on.
func newMarkingRun(t *testing.T, release bool) *markingRun {
	t.Helper()
	dir := t.TempDir()
	m := &markingRun{marks: filepath.Join(dir, "marks"), fifo: filepath.Join(dir, "fifo"), again: filepath.Join(dir, "again")}
	fifos := []string{m.fifo, m.again}
	env := fmt.Sprintf("WEBCHAT_MARKS=%s WEBCHAT_FIFO=%s WEBCHAT_FIFO_AGAIN=%s", m.marks, m.fifo, m.again)
	if release {
		m.release = filepath.Join(dir, "release")
		fifos = append(fifos, m.release)
		env += " WEBCHAT_FIFO_RELEASE=" + m.release
	}
	for _, f := range fifos {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(markingScript), 0o600); err != nil {
		t.Fatal(err)
	}
	helper := fmt.Sprintf("env WEBCHAT_MARKS_HELPER=1 %s %s -test.run=^TestHelperMarkingMCPServer$", env, os.Args[0])
	m.args = []string{"-script", script, "-mcp", helper}
	return m
}

// A deploy with two replicas on one PostgreSQL (-release): A gets SIGTERM
// while a run's slow tool runs; B, which stays up, takes the run over
// without waiting out A's stream lease (A released it as it handed the run
// over), and the chat gets its answer with no new message from the
// client, and no completed step runs again.
func TestDurable_ASIGTERMedReplicasRunIsFinishedByAnotherWithoutWaitingOutItsLease(t *testing.T) {
	const lease = 30 * time.Second // B looks for abandoned runs every 10 s
	db := postgresDB(t)
	m := newMarkingRun(t, false)
	args := append([]string{"-db", db, "-lease", lease.String(), "-release"}, m.args...)
	bin := buildWebchat(t)
	a := startProcess(t, bin, append(args, "-executor", "a")...)
	b := startProcess(t, bin, append(args, "-executor", "b")...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, sent := sendGo(t, ctx, a, m.fifo)
	termed := time.Now()
	a.term(t)
	<-sent
	st, err := pgstore.Open(context.Background(), db, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.ActiveStream(context.Background(), "c")
	st.Close()
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the chat's stream is still leased once A ended (%v): A did not release the lease of the run it handed over", err)
	}
	waitFIFO(t, m.again, b) // B runs the slow tool again: it took the run over
	t.Logf("B ran the slow tool again %v after A's SIGTERM (-lease %v)", time.Since(termed).Round(time.Millisecond), lease)

	resumeOn(t, b, client)
	checkFinished(t, m.marks, b)
}

// A deploy with -drain: the process gets SIGTERM while a run's slow tool
// runs; it refuses new chats, finishes the run itself within the drain
// (its client gets the whole answer, and nothing runs twice: the run was
// not handed over), and exits 0.
func TestDurable_ASIGTERMWithDrainFinishesTheRunInProgressInTheSameProcess(t *testing.T) {
	db := filepath.Join(t.TempDir(), "chats.db")
	m := newMarkingRun(t, true)
	p := startProcess(t, buildWebchat(t), append([]string{"-db", db, "-drain", "1m", "-executor", "one"}, m.args...)...)

	client := &aisdktest.ChatClient{URL: p.url + "/api/chat", ChatID: "c"}
	sent := make(chan error, 1)
	go func() {
		_, err := client.Send(context.Background(), "Go")
		sent <- err
	}()
	waitFIFO(t, m.fifo, p) // the slow tool started
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "webchat: draining")
	_, err := (&aisdktest.ChatClient{URL: p.url + "/api/chat", ChatID: "d"}).Send(context.Background(), "Hi")
	var status *aisdktest.HTTPStatusError
	if !errors.As(err, &status) || status.Status != http.StatusServiceUnavailable {
		t.Errorf("a new chat during the drain: %v, want a 503", err)
	}
	f, err := os.OpenFile(m.release, os.O_WRONLY, 0) // the slow call returns
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := <-sent; err != nil {
		t.Fatalf("the client's answer: %v\nlog:\n%s", err, p.logs)
	}
	if msgs := client.Messages(); len(msgs) != 2 || !strings.Contains(fmt.Sprint(msgs[1].Parts), "All done.") {
		t.Errorf("the client got %+v; want the whole answer", msgs)
	}
	<-p.done
	if code := p.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(p.logs.String(), "webchat: drained") {
		t.Errorf("exit status %d, want 0 after a drain that ended the run; log:\n%s", code, p.logs)
	}

	// The chat as the next process serves it: finished, slow ran once.
	next := startProcess(t, buildWebchat(t), "-db", db, "-durable=false")
	checkRanOnce(t, m.marks, next)
}

// checkRanOnce checks that chat c, as p serves it, ended with the whole
// answer, and that mark and slow ran once each.
func checkRanOnce(t *testing.T, marks string, p *process) {
	t.Helper()
	view := getChat(t, p.url, "c")
	var texts []string
	for _, msg := range view.Messages {
		for _, part := range msg.Parts {
			if part.Type == "text" {
				texts = append(texts, part.Text)
			}
		}
	}
	want := []string{"Go", "Marking.", "Now the slow one.", "All done."}
	if fmt.Sprint(texts) != fmt.Sprint(want) || view.LastRun != aisdk.RunFinished || view.Streaming {
		t.Errorf("the chat: texts %q (want %q), last run %q, streaming %v", texts, want, view.LastRun, view.Streaming)
	}
	if got, err := os.ReadFile(marks); err != nil || string(got) != "mark\nslow\n" {
		t.Errorf("marks %q (%v): mark and slow must run once each", got, err)
	}
}
