package aisdk

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// ChatServer serves the AI SDK chat routes of the stored mode: the chats
// are kept in Store (package store: memstore, sqlitestore, pgstore), and
// the stored history is authoritative. Each chat POST is checked with
// [Reconcile] and runs on the stored history plus what the client may
// add; requests need a chat id. The run is saved as it goes, outlives its
// client (bounded by MaxRunTime), streams its chunks to the chat's stream
// log so that any replica can resume it, and holds the chat's stream
// lease, so that a chat runs once at a time across replicas. [Handler] is
// the stateless mode. The package documentation says what each mode
// trusts, and what the stored mode saves when.
//
// [ChatServer.Routes] serves the chat POST with the routes around it
// (resume, stop, the chat list, one chat, delete). The chat POST reads its
// body as [Handler] does ("tools", "system" with AllowClientSystem,
// "callSettings" with AllowClientSettings; system messages are dropped,
// since they are not part of the stored chat), and answers its errors as
// [Handler] does, with besides 409 (a mismatch with the stored chat, or a
// repeat of results or decisions it already has: see the package
// documentation) and an [*HTTPError]'s status from Owner.
//
// A server that shuts down calls [ChatServer.Shutdown] before
// http.Server.Shutdown: runs outlive their requests.
//
// A ChatServer must not be modified once it serves requests; it is safe
// for concurrent use.
type ChatServer struct {
	// Agent runs the requests. Required.
	Agent *agentloop.Agent

	// Store keeps the chats, their list and their stream logs. Required.
	Store ChatStore

	// Prepare, if set, is called for each chat POST as [Handler.Prepare]
	// is.
	Prepare func(r *http.Request, req *ChatRequest, opts *agentloop.RunOptions) error

	// Authorize, when set, decides whether a request may use the chat
	// chatID: the chat POST, resume, stop and the chats routes all call it
	// ("" for the chat list). A non-nil error refuses the request: an
	// [*HTTPError] with its status, any other error with 403 and the
	// error's text. It has the shape of toolstate's authorization check,
	// so one func guards both; [OwnerAuthorizer] makes one that gives each
	// user their own chats.
	//
	// When nil, the ChatServer serves only requests that reach it over a
	// loopback connection for a loopback host (or in-process), and refuses
	// others with 403 ([LoopbackOnly]): stored chats are not open to the
	// network, nor to pages of DNS-rebound names, by default. Behind a
	// reverse proxy on the same host every request arrives over loopback,
	// so set Authorize there. To serve anyone, say so with a func that
	// returns nil.
	Authorize func(r *http.Request, chatID string) error

	// Owner, when set, names the user of a request: a chat the request
	// creates gets it as its store.Chat.Owner, and the chat list shows
	// that owner's chats only. Its error refuses the request, as
	// Authorize's does. Nil means "" (chats without an owner).
	Owner func(r *http.Request) (string, error)

	// Title, when set, names a chat after its first answer: once a run
	// that answers the chat's first user message finishes (not one that
	// was stopped or failed, or paused for a tool), while the chat's
	// title is still the automatic one (the start of its first user
	// message: a chat the user renamed keeps its name, and a chat named
	// once is not named again), Title is called with the saved history,
	// and what it returns, made one line of at most 60 characters without
	// surrounding quotes, becomes the chat's title. It runs before the
	// answer's finish chunk is sent, so a page that reloads its chat list
	// when the answer ends shows the title, within TitleTimeout; an error,
	// or "", keeps the automatic title (an error is logged). [ModelTitle]
	// makes one that asks a model. Nil keeps the automatic titles. It may
	// be called concurrently, for different chats.
	Title func(ctx context.Context, h agentloop.History) (string, error)

	// StreamLease is how long a run holds its chat's stream lease
	// without renewing it (it renews every third of it); 0 means
	// DefaultStreamLease. A replica that dies mid-run leaves its chat to
	// the next request, on any replica, once its lease ran out.
	StreamLease time.Duration

	// Runner, when set, runs every run on a durable-execution engine, so
	// that a run outlives its process: the run, wherever the engine
	// executes it, saves the chat and writes its stream log (the engine
	// hands its items to [ChatServer.RunItem]), and the request follows
	// the stream log. A run that the engine recovers in another process
	// (or in this one, started again within the stream lease) takes its
	// stream over and goes on. Store must keep documents (store.Docs).
	// Nil runs each run in process, in the request's goroutine, as long as
	// the process lives.
	Runner Runner

	// ReleaseOnShutdown, with a Runner, makes the runs that Shutdown
	// hands over release their stream leases (they run out at once), so
	// that a live replica may take them over at once ([ChatServer.Abandoned])
	// rather than once the leases ran out: for a rolling deploy of
	// replicas. False keeps the leases, for a process that starts again to
	// go on with its own runs: a client that resumes its chat's stream in
	// between follows the stream still leased instead of finding none.
	ReleaseOnShutdown bool

	// AllowedOrigins lists the other origins whose browsers may change
	// something, as [Handler.AllowedOrigins] does; it guards the chat
	// POST, stop and delete, so that no page of another site can post,
	// stop or delete, even with a bodiless request that no content-type
	// check guards.
	AllowedOrigins []string

	// Limits, BodyTimeout, MaxRunTime, KeepAlive and WriteTimeout are
	// [Handler]'s. MaxRunTime also bounds how long a run whose client
	// went away goes on; a client that WriteTimeout drops leaves its run
	// going on without it, saved.
	Limits       Limits
	BodyTimeout  time.Duration
	MaxRunTime   time.Duration
	KeepAlive    time.Duration
	WriteTimeout time.Duration

	// AllowClientSystem lets the body's "system" replace the agent's
	// system prompt for the run; AllowClientSettings lets its
	// "callSettings" replace the agent's settings. Off by default.
	AllowClientSystem   bool
	AllowClientSettings bool

	// ErrorText, Logger and NewMessageID are [Handler]'s. Logger also
	// receives requests refused with a 409 (Info), and runs that were
	// stopped (Info).
	ErrorText    func(error) string
	Logger       *slog.Logger
	NewMessageID func() string

	core
	sinks sinks // the runs Runner executes in this process
}

// init prepares what the ChatServer derives from its fields, once.
func (h *ChatServer) init() error {
	return h.core.setup(func() error {
		h.core.Agent, h.core.Prepare, h.core.Authorize = h.Agent, h.Prepare, h.Authorize
		if h.core.Authorize == nil {
			h.core.Authorize = LoopbackOnly
		}
		h.core.Limits, h.core.BodyTimeout, h.core.MaxRunTime = h.Limits, h.BodyTimeout, h.MaxRunTime
		h.core.KeepAlive, h.core.WriteTimeout = h.KeepAlive, h.WriteTimeout
		h.core.AllowClientSystem, h.core.AllowClientSettings = h.AllowClientSystem, h.AllowClientSettings
		h.core.ErrorText, h.core.Logger, h.core.NewMessageID = h.ErrorText, h.Logger, h.NewMessageID
		if h.Store == nil {
			return fmt.Errorf("aisdk: ChatServer.Store is nil: set it to the store of the chats (memstore, sqlitestore, pgstore), or serve an aisdk.Handler, which keeps none")
		}
		if _, ok := h.Store.(store.Docs); h.Runner != nil && !ok {
			return fmt.Errorf("aisdk: ChatServer.Runner needs a Store that keeps documents (store.Docs), to record each run's stream lease; memstore, sqlitestore and pgstore do")
		}
		if h.StreamLease < 0 {
			return fmt.Errorf("aisdk: ChatServer.StreamLease is %v; it must not be negative (0 means DefaultStreamLease, %v)", h.StreamLease, DefaultStreamLease)
		}
		return nil
	}, h.AllowedOrigins)
}

// Validate reports what keeps the ChatServer from serving: no Agent, no
// Store, a negative StreamLease, an AllowedOrigins entry that is not an
// origin. Its error names the field and says what to do. Call it when the
// server starts; it is safe to call more than once and concurrently with
// requests. A ChatServer served without that check answers every request
// with a 500 that says the server is misconfigured, and logs the error
// (Logger, level Error) on the first request.
func (h *ChatServer) Validate() error { return h.init() }

// Shutdown ends what the ChatServer serves, for a server that is shutting
// down: new chat and resume requests are refused with 503 Service
// Unavailable, the runs in progress are cancelled with [ErrShutdown] (a
// run saves its history first, with an interrupted result for each call
// still running, and ends its stream), and requests that follow a stream
// end. With a Runner, the runs are the engine's: Shutdown does not cancel
// them; when the engine then shuts down, the runs it cancels are handed
// over (their chats and stream logs keep what they saved, their streams
// stay active, and the engine resumes them, in this process started again
// within the stream lease; with ReleaseOnShutdown their leases are
// released, for a live replica to take them over at once). Shutdown returns once they all ended, or with
// ctx's error when ctx is done first. Call it before http.Server.Shutdown, which would
// otherwise wait for runs that outlive their clients up to MaxRunTime. It
// may be called more than once, and concurrently with requests; the
// ChatServer does not serve runs again afterwards. To let the runs in
// progress finish first, call [ChatServer.Drain] before it.
func (h *ChatServer) Shutdown(ctx context.Context) error { return h.runs.shutdown(ctx) }

// Drain lets the runs in progress finish, for a server that is about to
// shut down (a rolling deploy): from its call, new chat requests (POST
// …/chat) are refused with 503 Service Unavailable and a Retry-After
// header, as after Shutdown, while the runs in progress go on, and the
// other routes keep working: a client may still follow its run (GET
// …/chat/{id}/stream), stop it, or read its chats. Drain returns nil once
// no run is in progress, at once when none is, or ctx's error when ctx is
// done first. It cancels nothing: call Shutdown after it (whatever it
// returned) to end or hand over what is left, as Shutdown does without
// Drain; a run that finishes within the drain saves and ends its stream
// as any finished run does (its chat's LastRun is [RunFinished]).
//
// What Drain waits for: the chat requests admitted before it, until they
// end (without a Runner, the run is its request's), and, with a Runner,
// the runs whose items this process writes through [ChatServer.RunItem]
// (those its requests started, and those the engine recovers here, also
// during the drain), until RunItem takes their final item, or until the
// run loses its stream lease (its chat was deleted or taken over: it is
// stopped, writes nothing more here, and its end may never come here). A
// run that the engine executes in another process (a Temporal worker of
// another replica) is waited for only while the chat request that started
// it here follows it; that request ends with the run or with its client.
// Not waited for: the retries, in the background, that save a run's end
// after the store failed.
//
// The application calls Drain, usually on SIGTERM, with a deadline
// shorter than its orchestrator's grace period (see examples/webchat's
// -drain flag). It may be called more than once and concurrently with
// requests and with Shutdown; after Shutdown it waits for the runs that
// Shutdown cancels.
func (h *ChatServer) Drain(ctx context.Context) error { return h.runs.drain(ctx) }

// Routes returns the routes of the chat server under prefix ("/api", or
// "" for the root; no trailing slash), for an application to mount with
// one call, mux.Handle("/api/", chat.Routes("/api")):
//
//	POST   {prefix}/chat              the chat request ([ChatServer.ServeHTTP])
//	GET    {prefix}/chat/{id}/stream  the chat's run in progress, replayed and followed (useChat's resume; 204 when none)
//	POST   {prefix}/chat/{id}/stop    stop the chat's run, wherever it runs (202; 404 when none)
//	GET    {prefix}/chats             the chat list, newest first (?limit=, ?cursor=): a [ChatList]
//	GET    {prefix}/chats/{id}        one chat, with the messages to render: a [ChatView]
//	DELETE {prefix}/chats/{id}        delete a chat, its documents and its streams
//	PATCH  {prefix}/chats/{id}        rename a chat ([TitleRequest]); 200 with its [ChatSummary]
//	PUT    {prefix}/chats/{id}/feedback/{message}  rate an answer ([FeedbackRequest]); 200 with the chat's ratings
//
// Every route with a chat id asks Authorize first (the list asks with "");
// stop, delete, rename and feedback refuse a browser's request from
// another origin, as the chat POST does (see AllowedOrigins), and rename
// and feedback take only an application/json body (415), of at most 4 KB
// (413). Errors are JSON {"error": "…"}: 400 for a bad limit, cursor or
// chat id ([store.CheckID]), an empty title or one longer than 60
// characters, or a rating other than "up", "down" or ""; 403 or the
// hook's status when refused; 404 for a chat that does not exist, or a
// message id that is no answer of the chat; 405 for another method on
// {prefix}/chat.
func (h *ChatServer) Routes(prefix string) http.Handler {
	prefix = strings.TrimSuffix(prefix, "/")
	mux := http.NewServeMux()
	mux.Handle(prefix+"/chat", h)
	mux.HandleFunc("GET "+prefix+"/chat/{id}/stream", h.serveResume)
	mux.HandleFunc("POST "+prefix+"/chat/{id}/stop", h.serveStop)
	mux.HandleFunc("GET "+prefix+"/chats", h.serveList)
	mux.HandleFunc("GET "+prefix+"/chats/{id}", h.serveView)
	mux.HandleFunc("DELETE "+prefix+"/chats/{id}", h.serveDelete)
	mux.HandleFunc("PATCH "+prefix+"/chats/{id}", h.serveRename)
	mux.HandleFunc("PUT "+prefix+"/chats/{id}/feedback/{message}", h.serveFeedback)
	return mux
}

// ready answers a request with a 500 when the ChatServer's configuration
// is wrong (see Validate), and returns false.
func (h *ChatServer) ready(w http.ResponseWriter, r *http.Request) bool {
	return h.core.ready(w, r, h.init())
}

// ServeHTTP serves the chat POST alone (see [ChatServer]); Routes serves
// it with the routes around it.
func (h *ChatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.ready(w, r) {
		return
	}
	req, ok := h.readChat(w, r)
	if !ok {
		return
	}
	if req.ID == "" {
		h.refuse(w, r, http.StatusBadRequest, `the request has no chat "id", which the chat store needs`, nil)
		return
	}
	if err := h.authorize(r, req.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	opts, err := h.options(r, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	release, ok := h.startingRun(w, r)
	if !ok {
		return
	}
	defer release()
	h.serveStored(w, r, req, opts)
}
