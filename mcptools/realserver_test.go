package mcptools_test

// Tests against real MCP servers, each started as its own process:
//
//   - the MCP Go SDK's conformance "everything" server, built from the
//     go-sdk version in go.mod, over stdio and over streamable HTTP on
//     loopback (needs only Go);
//   - the reference server @modelcontextprotocol/server-everything from npm,
//     over stdio (needs Node and `npm ci --prefix mcptools/testdata/everything`;
//     skipped without them, except under CI=true, where that fails).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/mcptools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingDir holds the pinned npm reference server (package.json,
// package-lock.json).
const everythingDir = "testdata/everything"

// missing skips the test with why and how to enable it, except under
// CI=true, where a missing dependency fails the test.
func missing(t *testing.T, why, enable string) {
	t.Helper()
	msg := why + "; " + enable
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true, so this fails instead of skipping)")
	}
	t.Skip(msg)
}

// goEverythingServer builds the go-sdk conformance everything-server (at
// the version go.mod requires) once per test binary and returns its path.
var goEverythingServer = sync.OnceValues(func() (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "mcptools-everything-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "everything-server")
	cmd := exec.Command(goTool, "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", errors.New(string(out))
	}
	return bin, nil
})

func goServerBin(t *testing.T) string {
	t.Helper()
	bin, err := goEverythingServer()
	if err != nil {
		missing(t, "cannot build the go-sdk everything-server: "+err.Error(), "run the tests with the go command on PATH")
	}
	return bin
}

// procs starts the processes of a Command dialer and remembers them, so a
// test can kill the server mid-call.
type procs struct {
	mu   sync.Mutex
	cmds []*exec.Cmd
	env  []string
}

func (p *procs) dialer(name string, args ...string) mcptools.Dialer {
	return mcptools.Command(func() *exec.Cmd {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), p.env...)
		p.mu.Lock()
		p.cmds = append(p.cmds, cmd)
		p.mu.Unlock()
		return cmd
	})
}

func (p *procs) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.cmds)
}

func (p *procs) last() *exec.Cmd {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmds[len(p.cmds)-1]
}

// wireLog is an io.Writer for mcp.LoggingTransport that tests can read
// while the session writes.
type wireLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	grew chan struct{} // closed and replaced by every write
}

func (w *wireLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.grew != nil {
		close(w.grew)
	}
	w.grew = make(chan struct{})
	return w.buf.Write(p)
}

// holds reports whether the log holds s, and returns a channel that the
// next write closes.
func (w *wireLog) holds(s string) (bool, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.grew == nil {
		w.grew = make(chan struct{})
	}
	return strings.Contains(w.buf.String(), s), w.grew
}

func (w *wireLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// logged wraps dial so that every message of its sessions is written to w.
func logged(dial mcptools.Dialer, w *wireLog) mcptools.Dialer {
	return func(ctx context.Context) (mcp.Transport, error) {
		t, err := dial(ctx)
		if err != nil {
			return nil, err
		}
		return &mcp.LoggingTransport{Transport: t, Writer: w}, nil
	}
}

// realServer says how to exercise one real server.
type realServer struct {
	dial     mcptools.Dialer
	wire     *wireLog // every message, when the dialer is logged
	listed   []string // some tools the list must hold
	text     call     // a call that returns text
	errTool  call     // a call the server answers with isError
	progress call     // a call that reports progress
	minSteps int      // progress items progress must yield at least
	slow     call     // a call that reports progress, then runs long
	extra    func(t *testing.T, tools []*agentloop.Tool)
	// exit, when set, runs the server-exits-mid-call scenario: it kills
	// the server (and, over HTTP, starts a new one at the same address),
	// and returns a check to run once the next call reconnected.
	exit func(t *testing.T) (check func(t *testing.T))
}

type call struct {
	tool string
	args map[string]any
	want string // a substring of the content
}

func exercise(t *testing.T, rs realServer) {
	s, err := mcptools.NewServer(rs.dial, mcptools.ServerOptions{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Logf("Close: %v", err) // a killed server's exit status, for one
		}
	}()
	ctx := context.Background()
	tools, err := s.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("list", func(t *testing.T) {
		names := toolNames(tools)
		for _, want := range rs.listed {
			if !containsString(names, want) {
				t.Errorf("tool %q not listed; got %v", want, names)
			}
		}
	})
	t.Run("call", func(t *testing.T) {
		res := resultOf(t, run(t, ctx, tools, rs.text.tool, rs.text.args))
		if res.IsError || !strings.Contains(res.Content, rs.text.want) {
			t.Fatalf("result = %+v; want content with %q", res, rs.text.want)
		}
	})
	t.Run("error tool", func(t *testing.T) {
		res := resultOf(t, run(t, ctx, tools, rs.errTool.tool, rs.errTool.args))
		var te *mcptools.ToolError
		if !res.IsError || !errors.As(res.Err, &te) || !strings.Contains(res.Content, rs.errTool.want) {
			t.Fatalf("result = %+v (Err %v); want an isError result with %q", res, res.Err, rs.errTool.want)
		}
	})
	t.Run("progress", func(t *testing.T) {
		items := run(t, ctx, tools, rs.progress.tool, rs.progress.args)
		got := progressOf(items)
		if len(got) < rs.minSteps {
			t.Fatalf("progress items %q; want at least %d", got, rs.minSteps)
		}
		if res := resultOf(t, items); res.IsError || !strings.Contains(res.Content, rs.progress.want) {
			t.Fatalf("result = %+v; want content with %q", res, rs.progress.want)
		}
	})
	if rs.extra != nil {
		t.Run("content", func(t *testing.T) { rs.extra(t, tools) })
	}
	t.Run("cancel mid-call", func(t *testing.T) {
		runCtx, cancel := context.WithCancelCause(ctx)
		_, err := runErr(t, runCtx, tools, rs.slow.tool, rs.slow.args, func(it agentloop.Item) {
			if _, ok := it.(agentloop.ToolProgress); ok {
				cancel(agentloop.Cancel("stop pressed"))
			}
		})
		if !errors.Is(err, agentloop.ErrCancelled) {
			t.Fatalf("run error = %v; want it cancelled", err)
		}
		if rs.wire != nil {
			waitForWire(t, rs.wire, `"method":"notifications/cancelled"`)
		}
		// The session survives a cancelled call.
		res := resultOf(t, run(t, ctx, tools, rs.text.tool, rs.text.args))
		if res.IsError {
			t.Fatalf("call after the cancel: %+v", res)
		}
	})
	if rs.exit != nil {
		t.Run("server exits mid-call", func(t *testing.T) {
			var check func(t *testing.T)
			items, err := runErr(t, ctx, tools, rs.slow.tool, rs.slow.args, func(it agentloop.Item) {
				if _, ok := it.(agentloop.ToolProgress); ok && check == nil {
					check = rs.exit(t)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			res := resultOf(t, items)
			if !res.IsError || !strings.Contains(res.Content, "was lost during the call") {
				t.Fatalf("result = %+v; want an error result that says the connection was lost", res)
			}
			res = resultOf(t, run(t, ctx, tools, rs.text.tool, rs.text.args))
			if res.IsError || !strings.Contains(res.Content, rs.text.want) {
				t.Fatalf("next call: %+v; want it to reconnect and succeed", res)
			}
			check(t)
		})
	}
}

// exitProcess is realServer.exit for a server p started: it kills the
// last one, and the check is that the reconnection started exactly one
// more.
func (p *procs) exitProcess(t *testing.T) func(t *testing.T) {
	before := p.count()
	p.last().Process.Kill()
	return func(t *testing.T) {
		if n := p.count() - before; n != 1 {
			t.Errorf("%d processes started after the exit; want 1", n)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// waitForWire waits until the wire log holds s, woken by each write. The SDK sends
// notifications/cancelled on its own goroutine right after the call
// returns, so it may lag the run's end a little.
func waitForWire(t *testing.T, w *wireLog, s string) {
	t.Helper()
	deadline := time.After(waitFor) // a guard: a passing test never waits for it
	for {
		ok, grew := w.holds(s)
		if ok {
			return
		}
		select {
		case <-grew:
		case <-deadline:
			t.Fatalf("%s never went over the wire; the log:\n%s", s, w.String())
		}
	}
}

// httpServer is the go-sdk everything-server serving streamable HTTP on
// a loopback address, which a test can kill and start again.
type httpServer struct {
	bin, addr string
	cmd       *exec.Cmd
}

// startHTTPServer starts the go-sdk everything-server on a loopback port
// and returns it once it accepts connections; the test's cleanup kills it.
func startHTTPServer(t *testing.T, bin string) *httpServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &httpServer{bin: bin, addr: l.Addr().String()}
	l.Close()
	t.Cleanup(s.kill)
	s.start(t)
	return s
}

func (s *httpServer) url() string { return "http://" + s.addr }

func (s *httpServer) kill() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// start starts the server and waits until its address accepts.
func (s *httpServer) start(t *testing.T) {
	t.Helper()
	s.cmd = exec.Command(s.bin, "-http", s.addr)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening at") {
				close(listening)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	recv(t, listening, "the HTTP server to listen")
	// It logs just before it listens: probe until the port accepts.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(waitFor)
	for {
		c, err := net.Dial("tcp", s.addr)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the HTTP server never accepted on %s: %v", s.addr, err)
		}
	}
}

// exitAndRestart is realServer.exit over HTTP: the server dies mid-call
// and a new one, which knows nothing of the old session, takes its
// address.
func (s *httpServer) exitAndRestart(t *testing.T) func(t *testing.T) {
	s.kill()
	s.start(t)
	return func(*testing.T) {}
}

// goServerCalls are the go-sdk everything-server's tools the tests call.
func goServer(dial mcptools.Dialer) realServer {
	return realServer{
		dial:     dial,
		listed:   []string{"test_simple_text", "test_error_handling", "test_tool_with_progress", "test_image_content", "json_schema_2020_12_tool"},
		text:     call{"test_simple_text", map[string]any{}, "This is a simple text response for testing."},
		errTool:  call{"test_error_handling", map[string]any{}, "this tool intentionally returns an error for testing"},
		progress: call{"test_tool_with_progress", map[string]any{}, "agentloop-"}, // it answers with the progress token
		minSteps: 2,                                                               // of 3: the last one races the result (see stepArgs.Hold)
		slow:     call{"test_tool_with_progress", map[string]any{}, ""},
		extra: func(t *testing.T, tools []*agentloop.Tool) {
			res := resultOf(t, run(t, context.Background(), tools, "test_multiple_content_types", map[string]any{}))
			want := "This is text content\n[image: image/png, "
			if res.IsError || !strings.HasPrefix(res.Content, want) || !strings.Contains(res.Content, "[resource test://embedded-in-multiple, text/plain]\nThis is an embedded resource") {
				t.Errorf("result = %+v; want text, a described image and an embedded resource", res)
			}
			// A 2020-12 schema with $defs and $ref validates our arguments.
			res = resultOf(t, run(t, context.Background(), tools, "json_schema_2020_12_tool", map[string]any{"name": "x", "email": "a@b.c"}))
			if res.IsError {
				t.Errorf("valid arguments: %+v", res)
			}
			res = resultOf(t, run(t, context.Background(), tools, "json_schema_2020_12_tool", map[string]any{"name": "x"}))
			if !res.IsError || !errors.Is(res.Err, agentloop.ErrInvalidArgs) {
				t.Errorf("arguments without phone or email: %+v; want them rejected by the server's schema", res)
			}
		},
	}
}

func TestRealGoEverythingServerOverStdio(t *testing.T) {
	bin := goServerBin(t)
	p := &procs{}
	wire := &wireLog{}
	rs := goServer(logged(p.dialer(bin), wire))
	rs.wire, rs.exit = wire, p.exitProcess
	exercise(t, rs)
}

func TestRealGoEverythingServerOverHTTP(t *testing.T) {
	srv := startHTTPServer(t, goServerBin(t))
	rs := goServer(mcptools.HTTP(srv.url(), mcptools.HTTPOptions{}))
	rs.exit = srv.exitAndRestart
	exercise(t, rs)
}

func TestRealNPMEverythingServerOverStdio(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "no node on PATH", "install Node.js and run `npm ci --prefix mcptools/testdata/everything`")
	}
	script := filepath.Join(everythingDir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		missing(t, everythingDir+"/node_modules is not installed", "run `npm ci --prefix mcptools/testdata/everything`")
	}
	p := &procs{env: []string{"GZIP_ALLOWED_DOMAINS=allowed.invalid"}}
	wire := &wireLog{}
	exercise(t, realServer{
		dial:     logged(p.dialer(node, script, "stdio"), wire),
		wire:     wire,
		listed:   []string{"echo", "get-sum", "get-structured-content", "get-tiny-image", "trigger-long-running-operation"},
		text:     call{"echo", map[string]any{"message": "hi there"}, "Echo: hi there"},
		errTool:  call{"gzip-file-as-resource", map[string]any{"data": "http://127.0.0.1/x.txt"}, "Domain 127.0.0.1 is not in the allowed domains list."},
		progress: call{"trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3}, "Long running operation completed"},
		minSteps: 2, // the last one races the result (see stepArgs.Hold)
		slow:     call{"trigger-long-running-operation", map[string]any{"duration": 20, "steps": 100}, ""},
		extra: func(t *testing.T, tools []*agentloop.Tool) {
			res := resultOf(t, run(t, context.Background(), tools, "get-structured-content", map[string]any{"location": "Chicago"}))
			if res.IsError || res.Content != `{"conditions":"Light rain / drizzle","humidity":82,"temperature":36}` {
				t.Errorf("structured: %+v; want the structuredContent as JSON", res)
			}
			res = resultOf(t, run(t, context.Background(), tools, "get-tiny-image", map[string]any{}))
			if res.IsError || !strings.Contains(res.Content, "[image: image/png, ") {
				t.Errorf("image: %+v; want the image described", res)
			}
		},
		exit: p.exitProcess,
	})
}
