// Command webchat serves an agent to web chat front ends that speak the
// Vercel AI SDK UI message stream (useChat, assistant-ui), and keeps its
// chats in a database.
//
//	go run ./examples/webchat                       # built-in demo script on 127.0.0.1:8080
//	go run ./examples/webchat -addr :9000 -public   # another address (see Access below)
//	go run ./examples/webchat -addr :9000 -public -allowed-hosts chat.example.com  # only for that name
//	go run ./examples/webchat -script turns.json    # a scripted model (simtest JSON format)
//	go run ./examples/webchat -model qwen3:4b       # a real model on Ollama (OLLAMA_HOST)
//	go run ./examples/webchat -db ./chats.db        # the SQLite database (default: <-data>/webchat.db)
//	go run ./examples/webchat -db postgres://user@host/db  # PostgreSQL, shared by several replicas
//	go run ./examples/webchat -mcp "npx -y @modelcontextprotocol/server-everything"  # an MCP server's tools (repeatable)
//	go run ./examples/webchat -mcp-url http://127.0.0.1:3001/mcp                     # over streamable HTTP (repeatable)
//	go run ./examples/webchat -pace 0               # the built-in demo streams at once
//
// It serves the chat routes of aisdk.ChatServer.Routes under /api: POST
// /api/chat (the useChat route), GET /api/chat/{id}/stream (resume a run
// in progress: useChat's resume), POST /api/chat/{id}/stop (stop it,
// whichever replica runs it), GET /api/chats (the chat list, newest
// first), GET and DELETE /api/chats/{id}; GET /api/info, which model runs
// ({"model": "…", "simulator": true|false, "store": true, "database":
// "SQLite"|"PostgreSQL"|"memory", "durable": true|false}); the tool states of each chat
// (toolstate: GET /agents/{chat id}/tool-states and POST /agents/{chat
// id}/tool-states/reset; a backend tool that fails three times in a row is
// no longer offered in that chat until reset); and a page at /.
//
// The chats live in one database, with their tool states: an SQLite file
// by default (nothing to install; -data names its folder, by default the
// user's state folder, $XDG_STATE_HOME or ~/.local/state/agentloop-webchat;
// -db its path),
// or PostgreSQL (-db postgres://…), which several webchat processes can
// share as replicas of one service. The stored history is authoritative:
// a request may only add a user message, or answers to what the chat
// waits for. A run does not end when its client goes away (a closed tab, a
// reload): it finishes and is saved, and a reloaded page can resume its
// stream; POST /api/chat/{id}/stop (the page's Stop button), or the next
// message in the chat, stops it. A replica that dies mid-run leaves its
// chat to the others once its stream lease (-lease) runs out. Ended stream
// logs are deleted after ten minutes.
//
// Durable runs (durable.go): on SQLite and PostgreSQL each run is a DBOS
// workflow (-durable, on by default) whose model and tool calls are
// recorded steps, and each process is a DBOS executor (-executor, by
// default <host name>:<port>; replicas need different ids, and a replica
// keeps its id across restarts). A process killed mid-run (kill -9), or
// stopped by SIGTERM, goes on with its runs when it starts again with the
// same id within the stream lease, and otherwise, once the lease ran out
// (at once after a SIGTERM with -release, for rolling deploys), another
// live replica takes them over: a completed model or tool call
// does not run again, a tool call in flight does (at least once), and a
// reloaded page resumes the answer. With -drain DURATION, a SIGINT or
// SIGTERM first refuses new chats and lets the runs in progress finish
// here for up to DURATION (aisdk.ChatServer.Drain; a second signal ends
// the wait), and only then stops or hands over the rest; without it (0)
// the rest is all of them. DBOS keeps its state in the PostgreSQL database
// (in the schema of the URL's search_path, or "dbos"), or in <db>-dbos.db
// beside the SQLite file.
//
// Access: the chats have no owners and the server no login, so by default
// it serves loopback connections only: it refuses to start on an -addr
// that is not a loopback address unless -public says to serve anyone who
// can reach it (who can then read, continue and delete every chat). A
// loopback server answers for loopback names only (localhost, 127.0.0.1,
// [::1]): a page of another name that resolves to 127.0.0.1 (DNS
// rebinding) gets 403 on every route. A -public server answers for any
// Host unless -allowed-hosts lists its names (-allowed-hosts
// chat.example.com,.corp.example). Only the page's own origin may post,
// delete or reset (the chat, stop and delete routes and the tool states
// alike: a cross-origin request is a 403, a form's body a 415). A failed run shows the
// page a generic message and logs the detail, except for the failures a
// simulator script asks for, whose text the page shows.
//
// The agent has backend tools get_weather ({"city"} → a made-up,
// deterministic forecast; an empty city is an error result, handy for
// making it fail), add ({"a","b"} → {"sum"}) and delete_record ({"id"},
// which needs the user's approval), and researcher, a sub-agent
// (agentloop.AgentTool) with get_weather and save_note (which needs
// approval), whose work the page shows under its call; tools the page
// sends in the request body run in the browser. Without -script and -model, a built-in demo script goes
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
	"sync"
	"syscall"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/examples/internal/mcpflags"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/store/pgstore"
	"github.com/agentloop/agentloop/store/sqlitestore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := exitCode(run(ctx, os.Args[1:], os.Stderr, nil), os.Stderr)
	stop()
	os.Exit(code)
}

// exitCode reports err and returns the process's exit status: 0 for none
// and for -help (whose usage was printed), 2 for a bad flag (whose error
// the flag package printed, with the usage), 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	var bad flagError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &bad):
		return 2
	}
	fmt.Fprintln(stderr, "webchat:", err)
	return 1
}

// flagError is an error of the flag package, which printed it already.
type flagError struct{ error }

func (e flagError) Unwrap() error { return e.error }

// config is what the flags set.
type config struct {
	addr         string
	script       string
	model        string
	data         string        // folder of the default SQLite database
	db           string        // the database: a path, postgres://…, or ":memory:"; "" is <data>/webchat.db, or memory without data
	public       bool          // serve a non-loopback address without authorization
	allowedHosts hostList      // with public: the Host names served; none: any
	lease        time.Duration // aisdk.ChatServer.StreamLease; 0 means its default
	pace         time.Duration // the built-in demo's pause after each word; 0 streams at once
	durable      bool          // run the runs on DBOS when the database is SQLite or PostgreSQL
	executor     string        // the DBOS executor id; "" is <host>:<port>
	release      bool          // aisdk.ChatServer.ReleaseOnShutdown
	drain        time.Duration // at SIGINT/SIGTERM, how long aisdk.ChatServer.Drain may wait; 0 for no drain
	temporal     string        // the Temporal server's HOST:PORT: run the runs there; "" for none
	listen       string        // the address listened on, once known
	mcp          *mcpflags.Flags
	traces       *tracing // traces the runs; nil for none
}

// memoryDB is the -db value that keeps the chats in memory.
const memoryDB = ":memory:"

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("webchat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on (a non-loopback one needs -public)")
	fs.StringVar(&cfg.script, "script", "", "use a scripted model from this simtest JSON file")
	fs.StringVar(&cfg.model, "model", "", "use this Ollama model (the server is OLLAMA_HOST, or Ollama's default)")
	fs.StringVar(&cfg.data, "data", defaultDataDir(), "folder of the SQLite database (made if missing); the default is the user's own state folder")
	fs.StringVar(&cfg.db, "db", "", "the chat database: an SQLite file (default <data>/webchat.db), postgres://… (PostgreSQL, which replicas can share), or "+memoryDB)
	fs.BoolVar(&cfg.public, "public", false, "serve an address that is not loopback although the server has no authorization: anyone who reaches it can read, continue and delete every chat")
	fs.Var(&cfg.allowedHosts, "allowed-hosts", "with -public: the host names the server answers for, separated by commas (a leading dot allows the names under it); a request for any other Host is refused, as a page of a name rebound to this server's address sends (default: any host; without -public, loopback names only)")
	fs.DurationVar(&cfg.lease, "lease", 0, "how long a run holds its chat between renewals: a replica that dies leaves its chats to the others after this long (0: aisdk's default, 20s)")
	fs.BoolVar(&cfg.durable, "durable", true, "run each run durably (DBOS, in the chats' database) when the database is SQLite or PostgreSQL, so that a run outlives its process: a replica started again with the same -executor goes on with the runs it left; -durable=false runs them in process")
	fs.StringVar(&cfg.executor, "executor", "", "with -durable: this replica's DBOS executor id, the same across its restarts and different from every other replica's (default <host name>:<port>)")
	fs.BoolVar(&cfg.release, "release", false, "with -durable: at SIGTERM, release the stream leases of the runs handed over, so that another replica takes them over at once (a rolling deploy) rather than once the lease ran out; without it a restart of this replica goes on with them")
	fs.DurationVar(&cfg.drain, "drain", 0, "at SIGINT/SIGTERM, refuse new chats (503) and let the runs in progress finish for up to this long before stopping the rest (with -durable or -temporal: handing them over); a second signal ends the wait; 0 stops them at once")
	fs.DurationVar(&cfg.pace, "pace", defaultPace, "the built-in demo's pause after each streamed word (its get_weather takes 150 times as long); 0 streams at once")
	fs.StringVar(&cfg.temporal, "temporal", "", "run each run as a Temporal workflow on the server at this HOST:PORT (namespace \"default\", registered when missing; task queue "+temporalQueue+"), instead of on DBOS; every replica is also a worker, so another replica finishes the runs of one that died")
	cfg.mcp = mcpflags.Register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, flagError{err}
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.pace < 0 {
		return cfg, fmt.Errorf("-pace %v: must not be negative", cfg.pace)
	}
	if cfg.lease < 0 {
		return cfg, fmt.Errorf("-lease %v: must not be negative", cfg.lease)
	}
	if cfg.drain < 0 {
		return cfg, fmt.Errorf("-drain %v: must not be negative", cfg.drain)
	}
	if len(cfg.allowedHosts) > 0 && !cfg.public {
		return cfg, errors.New("-allowed-hosts needs -public: without it the server answers for loopback names only (localhost, 127.0.0.1, [::1])")
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
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && !cfg.public {
		return fmt.Errorf("-addr %s is not a loopback address, and this server has no authorization: "+
			"anyone who reaches it could read, continue and delete every chat; pass -public to serve it anyway", cfg.addr)
	}
	if cfg.public && len(cfg.allowedHosts) == 0 {
		fmt.Fprintln(stderr, "webchat: -public without -allowed-hosts answers for any host name; list this server's names to refuse pages of other names (DNS rebinding)")
	}
	tracing, err := startTracing(ctx, stderr)
	if err != nil {
		return err
	}
	defer tracing.stop(ctx, stderr)
	cfg.traces = tracing
	cfg.listen = ln.Addr().String()
	s, err := newServer(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer s.close()
	srv := httpServer(tracing.handler(s.handler))
	fmt.Fprintf(stderr, "webchat: %s; chats in %s\nwebchat: serving http://%s (POST /api/chat)\n", s.describe, s.database, ln.Addr())
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
	if cfg.drain > 0 {
		drain(s.chat, cfg.drain, stderr)
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The runs outlive their clients: end them (they save their chats)
	// before the HTTP server waits for its requests.
	if err := s.chat.Shutdown(shutdown); err != nil {
		return err
	}
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// drain lets the runs in progress finish, for up to d or until a second
// SIGINT or SIGTERM, while new chats are refused.
func drain(chat *aisdk.ChatServer, d time.Duration, stderr io.Writer) {
	// Drain refuses new chats from its call on: a first call with a done
	// context switches that on at once, so the line below is true when a
	// client reads it.
	on, switchOn := context.WithCancel(context.Background())
	switchOn()
	_ = chat.Drain(on)
	fmt.Fprintf(stderr, "webchat: draining: new chats are refused; the runs in progress have up to %v to finish\n", d)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := chat.Drain(ctx); err != nil {
		fmt.Fprintf(stderr, "webchat: drain ended (%v) with runs in progress: they are stopped or handed over\n", err)
		return
	}
	fmt.Fprintln(stderr, "webchat: drained: no run is in progress")
}

// httpServer returns the server for handler, with timeouts that suit
// answers streamed for as long as a run takes: a bound on the request
// headers and on idle keep-alive connections, but no ReadTimeout (its
// deadline would also cancel a running answer) and no WriteTimeout (it
// would cut the stream). The chat handler bounds each request body
// (aisdk.ChatServer.BodyTimeout) and each run (MaxRunTime) itself.
func httpServer(handler http.Handler) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

// server is the webchat's HTTP handler with the store it keeps the chats
// in.
type server struct {
	handler  http.Handler
	chat     *aisdk.ChatServer
	describe string // which model runs
	database string // where the chats are
	close    func() // closes the store, once its janitor stopped
}

// newServer builds the HTTP handler for cfg, with its store. Problems that
// do not stop the server (tool state store errors) are logged to logw.
// Until ctx is done (or close is called), ended stream logs are deleted.
func newServer(ctx context.Context, cfg config, logw io.Writer) (*server, error) {
	model, describe, err := chooseModel(cfg)
	if err != nil {
		return nil, err
	}
	tools, err := backendTools()
	if err != nil {
		return nil, err
	}
	demoPacing(cfg).slowTool(tools, "get_weather")
	var subModel agentloop.Model // the researcher's: the demo's script, or the real model
	if cfg.model != "" {
		subModel = model
	}
	research, err := researcherTool(subModel, tools[0], demoPacing(cfg)) // tools[0] is get_weather
	if err != nil {
		return nil, err
	}
	tools = append(tools, research)
	if tools, err = cfg.mcp.Tools(context.Background(), tools, logw); err != nil {
		return nil, err
	}
	st, database, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// One rule for every route (access.go): the Host names served and the
	// origins that may change anything; the chat routes and the tool
	// states also ask it with their chat id.
	acc := newAccess(cfg)
	states := newToolStates(st, tools, acc, logw)
	traced, err := cfg.traces.agentHooks(st)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	agent := &agentloop.Agent{
		Model: model,
		System: "You are the agentloop web chat demo. Use the tools when they help. " +
			"create_record shows the user a form in the browser; delete_record needs the user's approval.",
		Tools:    tools,
		MaxTurns: 8,
		Hooks:    agentloop.ComposeHooks(traced, states.hooks()),
	}
	logger := slog.New(slog.NewTextHandler(logw, nil))
	chat := &aisdk.ChatServer{
		Agent:          agent,
		Store:          st,
		Authorize:      acc.authorize,
		StreamLease:    cfg.lease,
		AllowedOrigins: []string{}, // the page's own origin only
		ErrorText:      scriptedErrorText,
		Logger:         logger,
	}
	chat.ReleaseOnShutdown = cfg.release
	if cfg.script == "" {
		// After the first answer the model names the chat (one short
		// request; the demo script answers it at once). A -script's
		// turns are its author's: a title request would take one, so
		// its chats keep their first words.
		chat.Title = aisdk.ModelTitle(model)
	}
	var engine *durableEngine
	var tengine *temporalEngine
	if cfg.temporal != "" {
		var runner aisdk.Runner
		tengine, runner, err = newTemporal(ctx, cfg.temporal, agent, chat.RunItem, logger)
		if err != nil {
			_ = st.Close()
			return nil, err
		}
		chat.Runner = runner
		describe += "; durable runs (Temporal " + cfg.temporal + ")"
	} else if cfg.durable && database != "memory" {
		var runner aisdk.Runner
		engine, runner, err = newEngine(ctx, cfg, database, agent, chat.RunItem, logger)
		if err != nil {
			_ = st.Close()
			return nil, err
		}
		chat.Runner = runner
		describe += "; durable runs (DBOS executor " + engine.executor + ")"
	}
	closeAll := func() {
		if engine != nil {
			engine.close()
		}
		if tengine != nil {
			tengine.close()
		}
		_ = st.Close()
	}
	if err := chat.Validate(); err != nil {
		closeAll()
		return nil, err
	}
	if tengine != nil {
		if err := tengine.start(); err != nil {
			closeAll()
			return nil, err
		}
	}
	if engine != nil {
		// Recovers the runs this executor left, which go on through chat.
		if err := engine.launch(); err != nil {
			closeAll()
			return nil, err
		}
	}
	info, err := json.Marshal(map[string]any{"model": describe, "simulator": cfg.model == "", "store": true, "database": database, "durable": engine != nil || tengine != nil})
	if err != nil {
		closeAll()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/info", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(info)
	})
	mux.Handle("/api/", reportLeaving(chat.Routes("/api"), logw))
	mux.Handle("/agents/", states.api) // GET /agents/{chat id}/tool-states, POST …/tool-states/reset
	mux.Handle("/", pageHandler())

	jctx, stop := context.WithCancel(ctx)
	janitor := make(chan struct{})
	go func() {
		defer close(janitor)
		_ = store.ExpireStreams(jctx, st, 5*time.Minute, 10*time.Minute, func(err error) {
			logger.Warn("webchat: deleting ended stream logs", "error", err)
		})
	}()
	adopter := make(chan struct{})
	go func() {
		defer close(adopter)
		if engine != nil {
			lease := cfg.lease
			if lease == 0 {
				lease = aisdk.DefaultStreamLease
			}
			engine.adopt(jctx, chat, lease, logger)
		}
	}()
	return &server{handler: acc.guard(mux), chat: chat, describe: describe, database: database, close: sync.OnceFunc(func() {
		stop()
		<-janitor
		<-adopter
		closeAll() // the engine hands its runs over before the store closes
	})}, nil
}

// openStore opens the chat database cfg names, and says which it is.
func openStore(ctx context.Context, cfg config) (store.Store, string, error) {
	switch {
	case cfg.db == memoryDB || (cfg.db == "" && cfg.data == ""):
		return memstore.New(memstore.Options{}), "memory", nil
	case strings.HasPrefix(cfg.db, "postgres://") || strings.HasPrefix(cfg.db, "postgresql://"):
		st, err := pgstore.Open(ctx, cfg.db, pgstore.Options{})
		if err != nil {
			return nil, "", fmt.Errorf("-db: %w", err)
		}
		return st, "PostgreSQL", nil
	}
	path := sqlitePath(cfg)
	if cfg.db == "" {
		if err := os.MkdirAll(cfg.data, 0o700); err != nil {
			return nil, "", fmt.Errorf("-data: %w", err)
		}
	}
	st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
	if err != nil {
		return nil, "", fmt.Errorf("-db: %w", err)
	}
	return st, "SQLite", nil
}

// sqlitePath is the path of the SQLite database of cfg.
func sqlitePath(cfg config) string {
	if cfg.db != "" {
		return cfg.db
	}
	return filepath.Join(cfg.data, "webchat.db")
}

// chooseModel returns the model the flags ask for.
func chooseModel(cfg config) (agentloop.Model, string, error) {
	switch {
	case cfg.script != "":
		script, err := simtest.LoadScript(cfg.script)
		if err != nil {
			return nil, "", err
		}
		noun := "turns"
		if len(script.Turns) == 1 {
			noun = "turn"
		}
		scope := "for the whole server"
		if script.TurnsBy == simtest.TurnsByConversation {
			scope = "for each conversation"
		}
		return script.Model(), fmt.Sprintf("scripted model from %s (%d %s, %s)", cfg.script, len(script.Turns), noun, scope), nil
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

// reportLeaving logs each chat request whose client went away before its
// answer was complete (a closed tab, a reload, or the page's Stop button,
// which also posts the stop request). The run goes on and is saved until a
// stop request or the next message stops it (the handler logs that).
func reportLeaving(next http.Handler, logw io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		if err := r.Context().Err(); err != nil && r.Method == http.MethodPost && r.URL.Path == "/api/chat" {
			fmt.Fprintf(logw, "webchat: %s %s: the client went away (%v); its run went on without it\n", r.Method, r.URL.Path, err)
		}
	})
}
