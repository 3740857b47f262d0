// Command webchat serves an agent to web chat front ends that speak the
// Vercel AI SDK UI message stream (useChat, assistant-ui).
//
//	go run ./examples/webchat                       # built-in demo script on 127.0.0.1:8080
//	go run ./examples/webchat -addr :9000           # another address
//	go run ./examples/webchat -script turns.json    # a scripted model (simtest JSON format)
//	go run ./examples/webchat -model qwen3:4b       # a real model on Ollama (OLLAMA_HOST)
//	go run ./examples/webchat -store                # the server's history is authoritative
//	go run ./examples/webchat -data ./states        # where the per-chat tool states are kept
//	go run ./examples/webchat -mcp "npx -y @modelcontextprotocol/server-everything"  # an MCP server's tools (repeatable)
//	go run ./examples/webchat -mcp-url http://127.0.0.1:3001/mcp                     # over streamable HTTP (repeatable)
//	go run ./examples/webchat -pace 0               # the built-in demo streams at once
//
// It serves POST /api/chat (the useChat route), GET /api/info (which model
// runs: {"model": "…", "simulator": true|false, "store": true|false}), the
// tool states of each chat (toolstate: GET /agents/{chat id}/tool-states and
// POST /agents/{chat id}/tool-states/reset; a backend tool that fails three
// times in a row is no longer offered in that chat until reset; the states
// are files under -data) and a page at /. A chat request whose client goes
// away (the page's Stop button) cancels its run, and the server logs that
// it did.
//
// Without -store, the server keeps no chat: the page posts the whole
// conversation, and what the server decided (its answers, tool calls, tool
// results, approval requests) comes back signed, so a forged approval or
// tool result is refused. The signing key is WEBCHAT_SECRET (at least 32
// bytes) or, when unset, a random key, which a restart forgets: chats in
// progress are then refused and must start again. Only the page's own
// origin may post chat requests. A failed run shows the page a generic
// message and logs the detail, except for the failures a simulator script
// asks for, whose text the page shows.
//
// The agent has backend tools get_weather ({"city"} → a made-up,
// deterministic forecast; an empty city is an error result, handy for
// making it fail), add ({"a","b"} → {"sum"}) and delete_record ({"id"},
// which needs the user's approval); tools the page sends in the request
// body run in the browser. Without -script and -model, a built-in demo script goes
// through a backend tool, the page's create_record form tool, an approval
// and a final answer; it streams a word at a time and its get_weather takes
// a few seconds, like a real model and tool (-pace sets the speed).
//
// Traces: OTEL_TRACES_EXPORTER=console prints each request's OpenTelemetry
// spans (the request, the run under it, its model and tool calls) to
// stderr, and OTEL_EXPORTER_OTLP_ENDPOINT sends them to a collector
// (telemetry.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/examples/internal/mcpflags"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store/memstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// -help prints the usage and exits 0.
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "webchat:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	addr   string
	script string
	model  string
	store  bool
	data   string        // tool state folder; "" keeps them in memory
	pace   time.Duration // the built-in demo's pause after each word; 0 streams at once
	mcp    *mcpflags.Flags
	hooks  *agentloop.Hooks // the agent's hooks (tracing); nil for none
	secret []byte           // signs replies without -store; nil: a random key
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("webchat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&cfg.script, "script", "", "use a scripted model from this simtest JSON file")
	fs.StringVar(&cfg.model, "model", "", "use this Ollama model (the server is OLLAMA_HOST, or Ollama's default)")
	fs.StringVar(&cfg.data, "data", filepath.Join(os.TempDir(), "agentloop-webchat", "tool-states"), "folder for the per-chat tool states (\"\" keeps them in memory)")
	fs.DurationVar(&cfg.pace, "pace", defaultPace, "the built-in demo's pause after each streamed word (its get_weather takes 70 times as long); 0 streams at once")
	fs.BoolVar(&cfg.store, "store", false, "keep each chat's history on the server (in memory) and refuse requests that edit it")
	cfg.mcp = mcpflags.Register(fs)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.pace < 0 {
		return cfg, fmt.Errorf("-pace %v: must not be negative", cfg.pace)
	}
	if cfg.script != "" && cfg.model != "" {
		return cfg, errors.New("-script and -model exclude each other")
	}
	return cfg, nil
}

// run serves until ctx is done. ready, if not nil, gets the listening
// address once the server accepts connections.
func run(ctx context.Context, args []string, stderr io.Writer, ready chan<- string) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	defer cfg.mcp.Close()
	tracing, err := startTracing(ctx, stderr)
	if err != nil {
		return err
	}
	defer tracing.stop(ctx, stderr)
	cfg.hooks = tracing.agentHooks()
	if secret := os.Getenv("WEBCHAT_SECRET"); secret != "" {
		if len(secret) < aisdk.MinSecretSize {
			return fmt.Errorf("WEBCHAT_SECRET has %d bytes; it needs at least %d random ones", len(secret), aisdk.MinSecretSize)
		}
		cfg.secret = []byte(secret)
	} else if !cfg.store {
		fmt.Fprintln(stderr, "webchat: replies are signed with a random key, which a restart forgets (set WEBCHAT_SECRET to keep chats across restarts)")
	}
	handler, describe, err := newServer(cfg, stderr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := httpServer(tracing.handler(handler))
	fmt.Fprintf(stderr, "webchat: %s\nwebchat: serving http://%s (POST /api/chat)\n", describe, ln.Addr())
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// httpServer returns the server for handler, with timeouts that suit
// answers streamed for as long as a run takes: a bound on the request
// headers and on idle keep-alive connections, but no ReadTimeout (its
// deadline would also cancel a running answer) and no WriteTimeout (it
// would cut the stream). The chat handler bounds each request body
// (aisdk.Handler.BodyTimeout) and each run (MaxRunTime) itself.
func httpServer(handler http.Handler) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

// newServer builds the HTTP handler for cfg and says which model it uses.
// Problems that do not stop the server (tool state store errors) are
// logged to logw.
func newServer(cfg config, logw io.Writer) (http.Handler, string, error) {
	model, describe, err := chooseModel(cfg)
	if err != nil {
		return nil, "", err
	}
	tools, err := backendTools()
	if err != nil {
		return nil, "", err
	}
	demoPacing(cfg).slowTool(tools, "get_weather")
	if tools, err = cfg.mcp.Tools(context.Background(), tools, logw); err != nil {
		return nil, "", err
	}
	agent := &agentloop.Agent{
		Model: model,
		System: "You are the agentloop web chat demo. Use the tools when they help. " +
			"create_record shows the user a form in the browser; delete_record needs the user's approval.",
		Tools:    tools,
		MaxTurns: 8,
		Hooks:    cfg.hooks,
	}
	states, err := newToolStates(cfg.data, tools, logw)
	if err != nil {
		return nil, "", err
	}
	chat := &aisdk.Handler{
		Agent:          agent,
		Prepare:        withConversationID(states.prepare),
		Secret:         cfg.secret,
		AllowedOrigins: []string{}, // the page's own origin only
		ErrorText:      scriptedErrorText,
		Logger:         slog.New(slog.NewTextHandler(logw, nil)),
	}
	if cfg.store {
		chat.Store = memstore.New(memstore.Options{})
	}
	info, err := json.Marshal(map[string]any{"model": describe, "simulator": cfg.model == "", "store": cfg.store})
	if err != nil {
		return nil, "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/info", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(info)
	})
	// POST /api/chat, GET /api/chat/{id}/stream (resume), POST
	// /api/chat/{id}/stop, GET /api/chats, GET and DELETE /api/chats/{id}
	// (the chats routes need -store).
	mux.Handle("/api/", reportCancelled(chat.Routes("/api"), logw))
	mux.Handle("/agents/", states.api) // GET /agents/{chat id}/tool-states, POST …/tool-states/reset
	mux.Handle("/", pageHandler())
	return mux, describe, nil
}

// chooseModel returns the model the flags ask for.
func chooseModel(cfg config) (agentloop.Model, string, error) {
	switch {
	case cfg.script != "":
		turns, err := simtest.LoadScript(cfg.script)
		if err != nil {
			return nil, "", err
		}
		noun := "turns"
		if len(turns) == 1 {
			noun = "turn"
		}
		return simtest.NewModel(turns...), fmt.Sprintf("scripted model from %s (%d %s, for the whole server)", cfg.script, len(turns), noun), nil
	case cfg.model != "":
		return realModel(cfg.model)
	}
	return demoModel(demoPacing(cfg)), "built-in demo script (" + strings.Join([]string{"get_weather", "create_record", "delete_record approval", "answer"}, " → ") + ")", nil
}

// scriptedErrorText is what the page shows of a failed run: the message of
// a failure a simulator script asks for ({"error": "…"}), which hides
// nothing, and a generic text for anything else (the log has the detail).
func scriptedErrorText(err error) string {
	var se *simtest.ScriptError
	if errors.As(err, &se) {
		return "The simulated model failed: " + se.Message
	}
	return "The server could not complete the answer; its log says why."
}

// reportCancelled logs each chat request whose client went away before
// its answer was complete (the page's Stop button, a closed tab). The
// handler returns only once the run it cancelled has ended, so the line
// also says the run stopped on the server.
func reportCancelled(next http.Handler, logw io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		if err := r.Context().Err(); err != nil {
			fmt.Fprintf(logw, "webchat: %s %s: the client went away; its run was cancelled (%v)\n", r.Method, r.URL.Path, err)
		}
	})
}
