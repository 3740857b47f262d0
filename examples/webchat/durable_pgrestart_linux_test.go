package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pgBinEnv names the folder of PostgreSQL's programs (initdb, pg_ctl) for
// the tests that run a cluster of their own; by default the newest
// /usr/lib/postgresql/*/bin.
const pgBinEnv = "AGENTLOOP_TEST_PG_BIN"

// pgCluster is a throwaway PostgreSQL cluster a test can restart.
type pgCluster struct {
	url        string
	bin, data  string
	as         []string // runuser -u postgres -- when the test runs as root
	logs, sock string
}

// newPGCluster starts a PostgreSQL cluster of t's own on a free loopback
// port (stopped and deleted when t ends), or skips t without PostgreSQL's
// programs, except under CI=true, where it fails.
func newPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	bin := os.Getenv(pgBinEnv)
	if bin == "" {
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
		if len(found) > 0 {
			bin = filepath.Dir(found[len(found)-1])
		}
	}
	if _, err := os.Stat(filepath.Join(bin, "pg_ctl")); bin == "" || err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no PostgreSQL programs (pg_ctl) in %s or /usr/lib/postgresql/*/bin: CI must install them (.ci/run's PostgreSQL step does)", pgBinEnv)
		}
		t.Skipf("no PostgreSQL programs: install PostgreSQL or set %s to the folder of its initdb and pg_ctl to run the database restart test", pgBinEnv)
	}
	dir, err := os.MkdirTemp("", "webchat-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &pgCluster{bin: bin, data: filepath.Join(dir, "data"), logs: filepath.Join(dir, "server.log"), sock: dir}
	if os.Geteuid() == 0 { // PostgreSQL refuses to run as root
		if err := exec.Command("chown", "postgres", dir).Run(); err != nil {
			t.Fatalf("chown postgres %s (running as root needs the postgres user): %v", dir, err)
		}
		c.as = []string{"runuser", "-u", "postgres", "--"}
	}
	t.Cleanup(func() {
		_ = c.ctl("-m", "immediate", "stop")
		os.RemoveAll(dir)
	})
	if out, err := c.run("initdb", "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := fmt.Sprintf("listen_addresses='127.0.0.1'\nport=%d\nunix_socket_directories='%s'\nfsync=off\nfull_page_writes=off\n", port, dir)
	f, err := os.OpenFile(filepath.Join(c.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conf)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ctl("start"); err != nil {
		t.Fatal(err)
	}
	c.url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return c
}

// run runs PostgreSQL's program name with args as the cluster's user.
func (c *pgCluster) run(name string, args ...string) ([]byte, error) {
	argv := append(append(append([]string{}, c.as...), filepath.Join(c.bin, name)), args...)
	return exec.Command(argv[0], argv[1:]...).CombinedOutput()
}

// ctl runs pg_ctl on the cluster, waiting for what it does.
func (c *pgCluster) ctl(args ...string) error {
	out, err := c.run("pg_ctl", append([]string{"-D", c.data, "-l", c.logs, "-w"}, args...)...)
	if err != nil {
		logs, _ := os.ReadFile(c.logs)
		return fmt.Errorf("pg_ctl %s: %w\n%s\n%s", strings.Join(args, " "), err, out, logs)
	}
	return nil
}

// PostgreSQL restarts (pg_ctl restart -m immediate: its connections cut,
// no checkpoint) while a run's slow tool runs; once the database is back,
// the run finishes: the client gets the whole answer, with no error, and
// no completed step runs again.
func TestDurable_ARunInFlightFinishesAfterADatabaseRestart(t *testing.T) {
	pg := newPGCluster(t)
	m := newMarkingRun(t, true)
	bin := buildWebchat(t)
	p := startProcess(t, bin, append([]string{"-db", pg.url, "-executor", "one"}, m.args...)...)

	client, sent := sendGo(t, context.Background(), p, m.fifo)
	restarted := time.Now()
	if err := pg.ctl("-m", "immediate", "restart"); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL restarted in %v", time.Since(restarted).Round(time.Millisecond))
	if err := os.WriteFile(m.release, nil, 0); err != nil { // the slow tool returns
		t.Fatal(err)
	}
	if err := <-sent; err != nil {
		t.Fatalf("the client's stream: %v\nlog:\n%s", err, p.logs)
	}
	t.Logf("the client got the answer %v after the restart began", time.Since(restarted).Round(time.Millisecond))
	msgs := client.Messages()
	if len(msgs) != 2 || !strings.Contains(fmt.Sprint(msgs[1].Parts), "All done.") || strings.Contains(fmt.Sprint(msgs[1].Parts), "error") {
		t.Errorf("the client got %+v; want the whole answer, with no error", msgs)
	}
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
	if fmt.Sprint(texts) != fmt.Sprint(want) || view.Streaming {
		t.Errorf("the chat: texts %q (want %q), last run %q, streaming %v\nlog:\n%s", texts, want, view.LastRun, view.Streaming, p.logs)
	}
	if got, err := os.ReadFile(m.marks); err != nil || string(got) != "mark\nslow\n" {
		t.Errorf("marks %q (%v): mark and slow must have run once each", got, err)
	}
}
