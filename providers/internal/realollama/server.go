// Package realollama runs the providers against a real Ollama server: its
// tests are the real-server integration suite, and [Start] is the harness
// that runs the server for them.
//
// The server binary is built from the Ollama module source by
// .ci/ollama.sh (a cold build takes several minutes; the binary is cached by
// version). Run the suite with:
//
//	AGENTLOOP_OLLAMA_BIN=$(bash .ci/ollama.sh) go test ./providers/internal/realollama
//
// Without AGENTLOOP_OLLAMA_BIN the suite skips, and fails when CI=true.
//
// The model is the tiny deterministic one of the tinyollama package, so
// every reply is known in advance: nothing is downloaded and the server
// runs on loopback only.
package realollama

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentloop/agentloop/providers/internal/tinyollama"
)

// EnvBinary names the environment variable that gives the server binary.
const EnvBinary = "AGENTLOOP_OLLAMA_BIN"

// Server is a running Ollama server with the tiny model's variants
// registered. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's root, "http://127.0.0.1:PORT".
	URL string
	// Log is the path of the file the server writes its log to.
	Log string

	bin      string
	dir      string
	env      []string
	cmd      *exec.Cmd
	done     chan struct{} // closed when the server and its runners have exited
	watchdog *os.File      // the write end of the watchdog's pipe
	dog      *exec.Cmd     // see startWatchdog
	once     sync.Once
}

// Start runs bin as a server on a free loopback port, with its own HOME
// and model directory under a new temporary directory, writes the tiny
// model and registers every tinyollama variant with `ollama create`. It
// returns once the server listens and the models exist; ctx bounds that
// wait. Call Close to stop the server and remove the directory.
func Start(ctx context.Context, bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "agentloop-ollama-")
	if err != nil {
		return nil, err
	}
	s, err := start(ctx, bin, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func start(ctx context.Context, bin, dir string) (*Server, error) {
	home := filepath.Join(dir, "home")
	models := filepath.Join(dir, "models")
	for _, d := range []string{home, models} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL:  "http://" + addr,
		Log:  filepath.Join(dir, "server.log"),
		bin:  bin,
		dir:  dir,
		done: make(chan struct{}),
		env: append(os.Environ(),
			"HOME="+home,
			"OLLAMA_HOST="+addr,
			"OLLAMA_MODELS="+models,
			"OLLAMA_NO_CLOUD=1",
			"OLLAMA_KEEP_ALIVE=-1",       // keep every variant loaded: loading one takes ~0.5s
			"OLLAMA_MAX_LOADED_MODELS=8", // (the default on CPU is 3, fewer than the variants)
			"OLLAMA_NUM_PARALLEL=1",
		),
	}
	logf, err := os.Create(s.Log)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = s.env
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = w, w
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Close stops the runners too
	err = s.cmd.Start()
	w.Close() // the child has its own copy
	if err != nil {
		r.Close()
		logf.Close()
		return nil, fmt.Errorf("starting %s serve: %w", bin, err)
	}

	if err := s.startWatchdog(); err != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		r.Close()
		logf.Close()
		_ = s.cmd.Wait()
		return nil, err
	}

	// The server logs "Listening on ADDR" once it accepts connections. The
	// log is copied to the file until the server and every runner (which
	// inherit the pipe) have exited.
	listening := make(chan struct{})
	go func() {
		defer close(s.done)
		defer logf.Close()
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		said := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if !said && strings.Contains(line, "Listening on") {
				said = true
				close(listening)
			}
		}
		_, _ = io.Copy(logf, r)
		_ = s.cmd.Wait()
	}()
	select {
	case <-listening:
	case <-s.done:
		log := tail(s.Log)
		s.Close()
		return nil, fmt.Errorf("the Ollama server exited before it listened; its log:\n%s", log)
	case <-ctx.Done():
		log := tail(s.Log)
		s.Close()
		return nil, fmt.Errorf("the Ollama server did not listen in time (%w); its log:\n%s", ctx.Err(), log)
	}

	paths, err := tinyollama.WriteAll(dir)
	if err != nil {
		s.Close()
		return nil, err
	}
	for _, v := range tinyollama.Variants {
		if err := s.ollama(ctx, "create", v, "-f", paths[v]); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// startWatchdog starts a shell that, as soon as it reads end-of-file on a
// pipe whose only writer is this process, kills the server's process group
// and removes the server's directory. The pipe closes when this process
// exits in any way, so a test binary killed by its -timeout leaves no
// server, runner or model files behind; Close closes it too.
func (s *Server) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	s.dog = exec.Command("sh", "-c", `read _; kill -9 -"$1" 2>/dev/null; rm -rf "$2"`, "watchdog", strconv.Itoa(s.cmd.Process.Pid), s.dir)
	s.dog.Stdin = r
	s.dog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // not killed with the server's group
	err = s.dog.Start()
	r.Close()
	if err != nil {
		w.Close()
		return fmt.Errorf("starting the server's watchdog: %w", err)
	}
	s.watchdog = w
	return nil
}

// ollama runs the ollama command line against the server.
func (s *Server) ollama(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = s.env
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ollama %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Close stops the server and the model runners it started (the whole
// process group, which shares the log pipe: Close returns once every
// process of it has closed the pipe, that is, exited), and removes the
// server's directory. It may be called more than once.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		pgid := s.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		timer := time.NewTimer(10 * time.Second)
		defer timer.Stop()
		select {
		case <-s.done:
		case <-timer.C:
			err = errors.New("the Ollama server did not stop within 10s of SIGTERM; killed")
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-s.done
		}
		s.watchdog.Close()
		_ = s.dog.Wait() // it removes the directory
		if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
			err = rmErr
		}
	})
	return err
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// tail returns the end of a log file, for error messages.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
