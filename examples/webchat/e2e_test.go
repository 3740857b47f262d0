package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/syncbuf"
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

// testServer is a webchat server that a test runs on a loopback port.
type testServer struct {
	URL  string
	logs *syncbuf.Buffer
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
	s := &testServer{logs: &syncbuf.Buffer{}}
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-db", memoryDB}, args...), s.logs, ready)
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

// screenshots are the states e2e/e2e.mjs saves, at each size
// (<size>-<name>.png); the desktop alone also saves desktopOnlyShots.
var (
	screenshots = []string{
		"00-welcome", "01-markdown", "02-markdown-dark", "03-scrolled-up", "04-long-word",
		"05-editing", "06-edited", "07-regenerated", "07a-branches-reloaded", "08-form", "09-approval", "10-final-approve",
		"11-tool-failed", "13-running", "14-stopped", "15-error",
		"18-resumed", "19-chat-list", "20-reloaded-approval", "21-stopped-reloaded", "22a-undo", "22-deleted", "23-chat-gone",
		"24-text-stopped-reloaded", "25-attachments", "26-attachment-sent",
		"25-feedback", "26-rename", "27-renamed",
		"18-subagent-approval", "19-subagent-done", "20-agent-name", "28-chat-days",
	}
	desktopOnlyShots = []string{"10-final-deny", "10-final-cancel", "12-tool-reset", "16-preliminary", "17-unreachable"}
)

// TestBrowser_PageAtDesktopAndPhoneSizes drives the embedded page in
// headless Chromium (e2e/e2e.mjs) at 1280×800 and 390×844, checking on
// every screen that nothing overflows sideways, that the chat column
// keeps 300 px on the phone, that the page's Content-Security-Policy
// refused nothing (the server's own headers, checked on every page load),
// and that axe-core finds no serious or critical violation. Against the built-in demo (unpaced): the
// scripts and style sheets served compressed and cacheable for a year,
// the HTML revalidated; the welcome screen's suggestion, Markdown (bold, a table, a highlighted code block,
// safe links) in light and dark mode, scroll-to-bottom, Shift+Enter and a
// long word that wraps, edit and resend, regenerate, the create_record
// form edited and submitted, approve, deny and cancel; the researcher
// sub-agent's group, its call approved in the page; a generated title,
// rename and thumbs stored across a reload; chats listed under Today,
// Yesterday and Earlier (a canned list); headings h1 > h2 > h3 (a
// canned answer); and, with a canned
// response, an answer after a handoff naming its agent; with a canned
// response, a tool's preliminary output and a javascript: link dropped;
// a server that cannot be reached gets its own short sentence.
// Against e2e/toolstates.json (one server per size): three failures mark
// get_weather failed in the tool-state panel (a drawer on the phone),
// Reset clears it, a tool call shows its running state until Stop (the
// button on the desktop, Escape on the phone) stops the hanging run on the
// server, which its log must confirm, the reply is marked stopped, and a
// model error shows as one short sentence. Against the demo at a pace slow
// enough to act mid-run (one server per size, so each starts with no
// chats): two chats in the chat list (a drawer on the phone), switch, Back
// and Forward, reload (each chat comes back with its messages and its tool
// calls' states, a pending form and a pending approval included), a reload
// mid-run that resumes the live stream, a view that says a run is in
// progress whose stream is gone (loaded again, once), Stop after a reload
// (the run stops on the server, and the reply is still marked stopped
// after another reload), delete, and the address of a deleted chat.
// Against e2e/attachments.json (whose turn expects the image dot.png):
// files picked, pasted and dropped show as chips, two are removed, one
// over the 5 MB limit is refused with a sentence, the sent image shows in
// the user's message, reaches the model, is still there after a reload
// and goes with the message when it is edited; axe finds no violation of
// any impact there.
// Screenshots go to a temporary folder, or to E2E_SCREENSHOTS when set
// (e.g. e2e/screenshots to refresh the committed ones). It skips when
// node, e2e/node_modules or Chromium is missing, except under CI=true,
// where it fails.
func TestBrowser_PageAtDesktopAndPhoneSizes(t *testing.T) {
	if missing := browserTestPrereqs(); missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("browser test needs: %s", missing)
		}
		t.Skipf("browser test skipped; missing: %s", missing)
	}
	demo := startServer(t, "-pace", "0")
	script := filepath.Join("e2e", "toolstates.json")
	failing := []*testServer{startServer(t, "-script", script), startServer(t, "-script", script)}
	// The paced demo streams a word every 70 ms and its get_weather takes
	// 10.5 s: time enough to reload the page mid-run.
	paced := []*testServer{startServer(t, "-pace", "70ms"), startServer(t, "-pace", "70ms")}
	// Its one turn expects the image dot.png; it plays per chat.
	attach := startServer(t, "-script", filepath.Join("e2e", "attachments.json"))

	shots := os.Getenv("E2E_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if abs, err := filepath.Abs(shots); err == nil {
		shots = abs
	}
	// A safety net for a hung browser, not a time limit: about 2.5 minutes
	// on a quiet 2-core machine, over 6 on a loaded one (every step at two
	// sizes, a dozen servers).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "e2e.mjs")
	cmd.Dir = "e2e"
	cmd.Env = append(os.Environ(),
		"WEBCHAT_URL="+demo.URL,
		"WEBCHAT_FAIL_URLS="+failing[0].URL+","+failing[1].URL,
		"WEBCHAT_PACED_URLS="+paced[0].URL+","+paced[1].URL,
		"WEBCHAT_ATTACH_URL="+attach.URL,
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
	for _, want := range []string{
		"PASS desktop welcome-markdown-edit-regenerate", "PASS phone welcome-markdown-edit-regenerate",
		"PASS desktop form-and-approve", "PASS phone form-and-approve", "PASS desktop form-and-deny",
		"PASS desktop title-rename-feedback", "PASS phone title-rename-feedback",
		"PASS desktop subagent-approval", "PASS phone subagent-approval",
		"PASS desktop handoff-agent-name", "PASS phone handoff-agent-name",
		"PASS desktop chat-list-days", "PASS phone chat-list-days",
		"PASS desktop markdown-headings", "PASS phone markdown-headings",
		"PASS desktop form-cancel", "PASS desktop preliminary-output-and-unsafe-link",
		"PASS desktop tool-states-stop-error", "PASS phone tool-states-stop-error",
		"PASS desktop chats-reload-resume-delete", "PASS phone chats-reload-resume-delete",
		"PASS desktop attachments", "PASS phone attachments", "all passed",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("e2e.mjs output lacks %q", want)
		}
	}
	var names []string
	for _, size := range []string{"desktop", "phone"} {
		for _, n := range screenshots {
			names = append(names, size+"-"+n)
		}
	}
	for _, n := range desktopOnlyShots {
		names = append(names, "desktop-"+n)
	}
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(shots, name+".png")); err != nil {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
	// Stop must stop the run on the server (POST /api/chat/{id}/stop), not
	// only close its stream, which no longer cancels a stored run: the run
	// is stopped before the next message, which then has none to stop.
	for i, s := range append(failing, paced...) {
		log := s.Stop(t)
		if !strings.Contains(log, "run cancelled: stopped") {
			t.Errorf("after Stop, server %d's log does not report a stopped run:\n%s", i, log)
		}
		if strings.Contains(log, "a new request stops the chat's run in progress") {
			t.Errorf("server %d: a run went on after Stop until the next message stopped it:\n%s", i, log)
		}
	}
}
