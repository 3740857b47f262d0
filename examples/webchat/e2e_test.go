package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// chromiumPath is Debian's Chromium; the browser test never downloads one.
const chromiumPath = "/usr/bin/chromium"

// browserTestPrereqs says what the browser test lacks on this machine, or "".
func browserTestPrereqs() string {
	var missing []string
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node (Node.js)")
	}
	if _, err := os.Stat(filepath.Join("e2e", "node_modules", "playwright-core")); err != nil {
		missing = append(missing, "e2e/node_modules (run `npm ci` in examples/webchat/e2e)")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		missing = append(missing, chromiumPath+" (apt-get install chromium)")
	}
	return strings.Join(missing, ", ")
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testServer is a webchat server that a test runs on a loopback port.
type testServer struct {
	URL  string
	logs *lockedBuffer
	stop func() error
}

// Stop shuts the server down, which waits for its handlers (and so their
// runs) to end, and returns its log. It may be called more than once.
func (s *testServer) Stop(t *testing.T) string {
	t.Helper()
	if err := s.stop(); err != nil {
		t.Errorf("server: %v", err)
	}
	return s.logs.String()
}

// startServer runs the webchat server with args until Stop or the end of
// the test.
func startServer(t *testing.T, args ...string) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	s := &testServer{logs: &lockedBuffer{}}
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-data", ""}, args...), s.logs, ready)
	}()
	s.stop = sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() {
		s.Stop(t)
		if t.Failed() {
			t.Logf("server %v log:\n%s", args, s.logs.String())
		}
	})
	select {
	case addr := <-ready:
		s.URL = "http://" + addr
		return s
	case err := <-done:
		t.Fatalf("server %v did not start: %v", args, err)
		return nil
	}
}

// TestBrowser_DemoFormApprovalsToolStatesAndStop drives the embedded page
// in headless Chromium (e2e/e2e.mjs) against two servers: the built-in demo
// script (streamed text, backend tool UIs, the create_record form edited
// and submitted, approve and deny) and e2e/toolstates.json (three failures
// mark get_weather failed in the tool-state panel, Reset clears it, a
// tool call shows its running state until Stop cancels the hanging run,
// which the server's log must confirm, a model error shows in the thread).
// Screenshots go to a temporary folder, or to
// E2E_SCREENSHOTS when set (e.g. e2e/screenshots to refresh the committed
// ones). It skips when node, e2e/node_modules or Chromium is missing,
// except under CI=true, where it fails.
func TestBrowser_DemoFormApprovalsToolStatesAndStop(t *testing.T) {
	if missing := browserTestPrereqs(); missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("browser test needs: %s", missing)
		}
		t.Skipf("browser test skipped; missing: %s", missing)
	}
	demo := startServer(t)
	failing := startServer(t, "-script", filepath.Join("e2e", "toolstates.json"))

	shots := os.Getenv("E2E_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if abs, err := filepath.Abs(shots); err == nil {
		shots = abs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "e2e.mjs")
	cmd.Dir = "e2e"
	cmd.Env = append(os.Environ(),
		"WEBCHAT_URL="+demo.URL,
		"WEBCHAT_FAIL_URL="+failing.URL,
		"SCREENSHOTS="+shots,
		"CHROMIUM="+chromiumPath,
	)
	out, err := cmd.CombinedOutput()
	t.Logf("e2e.mjs output:\n%s", out)
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("browser test failed (exit %d); screenshots in %s", exit.ExitCode(), shots)
		}
		t.Fatalf("running node e2e.mjs: %v", err)
	}
	for _, want := range []string{"PASS form-and-approve", "PASS form-and-deny", "PASS form-cancel", "PASS tool-states-and-stop", "all passed"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("e2e.mjs output lacks %q", want)
		}
	}
	for _, name := range []string{
		"00-start", "01-form-prefilled", "02-form-edited", "03-approval-approve", "03-approval-deny",
		"04-final-approve", "04-final-deny", "04-final-cancel", "05-tool-failed", "06-tool-reset",
		"07-running-stop", "08-stopped", "09-error",
	} {
		if _, err := os.Stat(filepath.Join(shots, name+".png")); err != nil {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
	// Stop must cancel the run on the server, not only in the page.
	if log := failing.Stop(t); !strings.Contains(log, "POST /api/chat: the client went away; its run was cancelled") {
		t.Errorf("after Stop, the server log does not report a cancelled run:\n%s", log)
	}
}
