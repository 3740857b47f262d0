package aisdk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
)

// Defaults used when the matching field of a [Handler] or a [ChatServer]
// is zero.
const (
	DefaultMaxRunTime  = 10 * time.Minute
	DefaultKeepAlive   = 15 * time.Second
	DefaultBodyTimeout = time.Minute
	// DefaultWriteTimeout bounds each write of a streamed response (see
	// Handler.WriteTimeout).
	DefaultWriteTimeout = 30 * time.Second
	// DefaultStreamLease is how long a run holds its chat's stream lease
	// between renewals (see ChatServer.StreamLease).
	DefaultStreamLease = 20 * time.Second
)

// MinSecretSize is the shortest [Handler.Secret] accepted, in bytes.
const MinSecretSize = 32

// Handler serves the AI SDK chat route of the stateless mode (POST,
// usually mounted at /api/chat): it decodes the body that useChat or
// assistant-ui sends, checks the signatures of the parts the server made
// (Secret), rebuilds the history ([ToHistory]), runs the agent, and streams
// the run as a UI message stream ([Mapper], [Writer]). The client's
// messages are the whole state: nothing is kept, and a client that goes
// away cancels its run. [ChatServer] is the stored mode. The package
// documentation says what each mode trusts.
//
// The body's "tools" become client tools for the run (a tool named like
// one of the agent's tools, or with an invalid schema, is a 400); "system"
// and system messages are used only with AllowClientSystem, "callSettings"
// only with AllowClientSettings. A continuation (the last posted message is
// an assistant message) reuses that message's id in the start chunk.
//
// Besides the chat POST, ServeHTTP answers useChat's resume request, a GET
// whose path ends in "/stream", with 204 No Content (no stream is kept),
// and a POST whose path ends in "/stop" with 404 (a run stops when its
// request is closed).
//
// Errors before the stream starts are JSON bodies {"error": "…"} that name
// the problem: 405 (not a POST), 403 (AllowedOrigins, Authorize, or a part
// that fails the signature check), 415 (not application/json), 408 (body
// not read within BodyTimeout), 413 (over Limits.MaxBodyBytes, or a file
// over Limits.MaxFileBytes), 400 (a body
// that cannot be used), 503 (Shutdown began), an [*HTTPError]'s status
// from Prepare or Authorize, and 500 with a generic message, whose detail
// goes to Logger. Once streaming, a failure is an error chunk with
// ErrorText's text.
//
// A Handler must not be modified once it serves requests; it is safe for
// concurrent use.
type Handler struct {
	// Agent runs the requests. Required.
	Agent *agentloop.Agent

	// Prepare, if set, is called for each request after it was decoded and
	// checked, with the run options the request gives (its client tools,
	// and its system prompt and settings when allowed). It may change them
	// (tools or a system prompt for this user, hooks for this chat…), or
	// return an error that refuses the request: an [*HTTPError] gives the
	// status and message, any other error a 500 (its text is logged, not
	// sent). Every run's RunOptions.ConversationID is the chat id, set
	// after Prepare.
	Prepare func(r *http.Request, req *ChatRequest, opts *agentloop.RunOptions) error

	// Authorize, when set, decides whether a request may use the chat
	// chatID (the body's "id", "" when it has none). A non-nil error
	// refuses the request: an [*HTTPError] with its status, any other error
	// with 403 and the error's text. Nil allows every request.
	Authorize func(r *http.Request, chatID string) error

	// Secret signs the parts the server made. It must be at least
	// MinSecretSize random bytes, the same on every replica and across
	// restarts, and kept secret (whoever has it can sign anything). Nil
	// means a random key for this Handler: a restart, or another replica,
	// then refuses the chats in progress, as a changed Secret does.
	Secret []byte

	// AllowedOrigins lists the other origins ("https://app.example.com")
	// whose browsers may post. A chat POST from a browser on another
	// origin is refused (403) unless its origin is listed, with
	// [http.CrossOriginProtection] (Sec-Fetch-Site, then Origin against
	// Host); same-origin requests, and requests with neither header (not
	// from a browser), pass. Nil or empty: the page's own origin only.
	AllowedOrigins []string

	// Limits bound the request body: its size, its messages and their
	// parts, the size of each file. Zero fields mean the Default* limits.
	Limits Limits
	// BodyTimeout bounds reading the request body (408 past it); 0 means
	// DefaultBodyTimeout, negative means no limit. It is lifted once the
	// body is read, so it never cuts a response short.
	BodyTimeout time.Duration
	// MaxRunTime bounds one run; 0 means DefaultMaxRunTime, negative means
	// no limit. A run that takes longer is cancelled and ends with an error
	// chunk.
	MaxRunTime time.Duration
	// KeepAlive is the idle time after which a keep-alive comment is sent
	// (while a tool runs long, for example); 0 means DefaultKeepAlive,
	// negative means never.
	KeepAlive time.Duration
	// WriteTimeout bounds each write of a streamed response to its client
	// (a per-write deadline through [http.ResponseController]): a client
	// that stops reading is dropped once a write waited that long. 0 means
	// DefaultWriteTimeout, negative means no limit. Unlike
	// http.Server.WriteTimeout it never cuts a stream that is read.
	WriteTimeout time.Duration

	// AllowClientSystem lets the client set the system prompt: the body's
	// "system" replaces the agent's for the run, and system messages in
	// "messages" are kept. Off by default, because the client is not
	// trusted: without it both are ignored.
	AllowClientSystem bool
	// AllowClientSettings lets the body's "callSettings" (maxTokens,
	// temperature, topP, seed) replace the agent's settings for the run.
	// Off by default.
	AllowClientSettings bool

	// ErrorText turns a run's error into the error chunk's text. Nil means
	// a generic text, except for a file the model cannot take
	// ([*agentloop.FileError]), which is named with the reason; the error
	// goes to Logger. To show clients the detail
	// (in development), return err.Error().
	ErrorText func(error) string
	// Logger receives what clients are not told: every run's error (level
	// Info when the client went away, else Error), the detail of every
	// 500, requests refused with a 403 (Warn). Nil means slog.Default().
	Logger *slog.Logger
	// NewMessageID returns the id of a new assistant message, which must
	// be unique: signatures bind parts to it. Nil, or an empty result,
	// means a random "msg-" id.
	NewMessageID func() string

	core
	signer *signer
}

// core is what both modes serve with: the request's decoding and checks,
// the run and its stream, the answers to refused requests, and the
// requests that Shutdown ends. Its fields are copied, once, from the
// [Handler]'s or the [ChatServer]'s, which embed it.
type core struct {
	Agent               *agentloop.Agent
	Prepare             func(r *http.Request, req *ChatRequest, opts *agentloop.RunOptions) error
	Authorize           func(r *http.Request, chatID string) error // never nil once set up
	Limits              Limits
	BodyTimeout         time.Duration
	MaxRunTime          time.Duration
	KeepAlive           time.Duration
	WriteTimeout        time.Duration
	AllowClientSystem   bool
	AllowClientSettings bool
	ErrorText           func(error) string
	Logger              *slog.Logger
	NewMessageID        func() string

	runs     runSet // the requests that Shutdown ends
	initOnce sync.Once
	initErr  error
	initLog  sync.Once                   // logs initErr once
	origins  *http.CrossOriginProtection // the same origin and AllowedOrigins
}

// setup runs configure once, then the checks both modes share; it
// returns their error.
func (c *core) setup(configure func() error, allowedOrigins []string) error {
	c.initOnce.Do(func() {
		if c.initErr = configure(); c.initErr != nil {
			return
		}
		if c.Agent == nil {
			c.initErr = errors.New("aisdk: Agent is nil: set it to the agent that answers the chats")
			return
		}
		c.origins = http.NewCrossOriginProtection()
		for _, o := range allowedOrigins {
			if err := c.origins.AddTrustedOrigin(o); err != nil {
				c.initErr = fmt.Errorf("aisdk: AllowedOrigins: %w", err)
				return
			}
		}
	})
	return c.initErr
}

// HTTPError is an error with the HTTP status to answer it with. Prepare,
// Authorize and Owner may return one to refuse a request (401, 403, 404,
// 429…); its Message is sent to the client as is.
type HTTPError struct {
	Status  int
	Message string
	// Err, if set, is the cause: it is logged (Handler.Logger), not sent.
	Err error
}

// Error returns Message.
func (e *HTTPError) Error() string { return e.Message }

// Unwrap returns Err.
func (e *HTTPError) Unwrap() error { return e.Err }

// StatusCode returns Status, for handlers that take the status of an
// error without importing aisdk (toolstate.WithAuthorize).
func (e *HTTPError) StatusCode() int { return e.Status }

// genericErrorText is what clients see of a run's error, and of a 500,
// unless ErrorText says otherwise.
const genericErrorText = "The server could not complete the answer."

// init prepares what the Handler derives from its fields, once.
func (h *Handler) init() error {
	return h.core.setup(func() error {
		h.core.Agent, h.core.Prepare, h.core.Authorize = h.Agent, h.Prepare, h.Authorize
		if h.core.Authorize == nil {
			h.core.Authorize = allowAll
		}
		h.core.Limits, h.core.BodyTimeout, h.core.MaxRunTime = h.Limits, h.BodyTimeout, h.MaxRunTime
		h.core.KeepAlive, h.core.WriteTimeout = h.KeepAlive, h.WriteTimeout
		h.core.AllowClientSystem, h.core.AllowClientSettings = h.AllowClientSystem, h.AllowClientSettings
		h.core.ErrorText, h.core.Logger, h.core.NewMessageID = h.ErrorText, h.Logger, h.NewMessageID
		secret := h.Secret
		if secret == nil {
			secret = make([]byte, MinSecretSize)
			_, _ = rand.Read(secret)
		} else if len(secret) < MinSecretSize {
			return fmt.Errorf("aisdk: Handler.Secret has %d bytes; it needs at least %d random bytes: "+
				"make them once (crypto/rand.Read, or openssl rand -base64 %d decoded) and give every replica the same, "+
				"or leave Secret nil for a random key of this process", len(secret), MinSecretSize, MinSecretSize)
		}
		h.signer = newSigner(secret)
		return nil
	}, h.AllowedOrigins)
}

// allowAll is the authorization of a Handler without Authorize.
func allowAll(*http.Request, string) error { return nil }

// Validate reports what keeps the Handler from serving: no Agent, a
// Secret shorter than [MinSecretSize], an AllowedOrigins entry that is not
// an origin. Its error names the field and says what to do. Call it when
// the server starts, so that such a mistake stops the server rather than
// its requests; it is safe to call more than once and concurrently with
// requests.
//
// A Handler that is served without that check answers every request with
// a 500 that says the server is misconfigured, and logs the error (Logger,
// level Error) on the first request.
func (h *Handler) Validate() error { return h.init() }

// Shutdown ends what the Handler serves, for a server that is shutting
// down: new chat requests are refused with 503 Service Unavailable and the
// runs in progress are cancelled with [ErrShutdown]. It returns once they
// all ended, or with ctx's error when ctx is done first. It may be called
// more than once, and concurrently with ServeHTTP; the Handler does not
// serve runs again afterwards. To let the runs in progress finish first,
// call [Handler.Drain] before it.
func (h *Handler) Shutdown(ctx context.Context) error { return h.runs.shutdown(ctx) }

// Drain lets the runs in progress finish, for a server that is about to
// shut down: from its call, new chat requests are refused with 503
// Service Unavailable and a Retry-After header, as after Shutdown, while
// the requests in progress go on (a run ends with its request: when it
// finishes, or when its client goes away). Drain returns nil once none is
// in progress, at once when none is, or ctx's error when ctx is done
// first. It cancels nothing: call Shutdown after it to cancel what is
// left. It may be called more than once and concurrently with ServeHTTP
// and Shutdown.
func (h *Handler) Drain(ctx context.Context) error { return h.runs.drain(ctx) }

// ready answers a request with a 500 when the configuration is wrong
// (err, from init), and returns false.
func (c *core) ready(w http.ResponseWriter, r *http.Request, err error) bool {
	if err == nil {
		return true
	}
	c.initLog.Do(func() {
		c.logger().LogAttrs(r.Context(), slog.LevelError, "aisdk: the handler is misconfigured and answers every request with 500",
			slog.Any("error", err))
	})
	writeJSONError(w, http.StatusInternalServerError, misconfiguredText)
	return false
}

// misconfiguredText is what clients see of a Handler that cannot serve.
const misconfiguredText = "The chat server is misconfigured; its log says why."

// ServeHTTP serves one chat request, or a resume or stop request; see
// [Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.ready(w, r, h.init()) {
		return
	}
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/stream") {
		w.WriteHeader(http.StatusNoContent) // no stream is kept
		return
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/stop") {
		if h.sameOrigin(w, r) {
			h.refuse(w, r, http.StatusNotFound, "runs are stopped by closing their request: this server keeps no chats", nil)
		}
		return
	}
	req, ok := h.readChat(w, r)
	if !ok {
		return
	}
	if err := h.authorize(r, req.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	msgs := req.Messages
	if !h.AllowClientSystem {
		msgs = withoutSystem(msgs)
	}
	msgs, err := h.signer.verify(msgs)
	if err != nil {
		h.refuse(w, r, http.StatusForbidden, err.Error(), nil)
		return
	}
	history, err := ToHistory(msgs)
	if err != nil {
		h.refuse(w, r, http.StatusBadRequest, err.Error(), nil)
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

	// A continuation (the last posted message is the assistant's) must
	// repeat that message's id, or leave it out when the client sent none:
	// any other id makes the client show a second assistant message.
	var messageID string
	if last := req.Messages[len(req.Messages)-1]; last.Role == "assistant" {
		messageID = last.ID
	} else {
		messageID = h.newMessageID()
	}
	m := h.newMapper(messageID)
	m.signWith(h.signer, history.Unanswered())
	m.sigReuse = reusedSigs.Get().(*reusedSig) // stream encodes each chunk before it maps the next
	defer m.sigReuse.release()
	h.stream(w, r, req, history, opts, m, nil)
}

// readChat checks a chat POST (its method, origin and content type),
// reads its body and asks Authorize; a request that fails is answered,
// and false returned.
func (c *core) readChat(w http.ResponseWriter, r *http.Request) (*ChatRequest, bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		c.refuse(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed; POST the chat request", r.Method), nil)
		return nil, false
	}
	if !c.sameOrigin(w, r) {
		return nil, false
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		w.Header().Set("Accept-Post", "application/json")
		w.Header().Set("Connection", "close")
		c.refuse(w, r, http.StatusUnsupportedMediaType, fmt.Sprintf("the body must be application/json, not %q", r.Header.Get("Content-Type")), nil)
		return nil, false
	}
	req, status, err := c.readRequest(w, r)
	if err != nil {
		w.Header().Set("Connection", "close") // the body may not be read to its end
		c.refuse(w, r, status, err.Error(), err)
		return nil, false
	}
	return req, true
}

// running registers a request that follows a run with Shutdown; once
// Shutdown began it answers 503 and returns false.
func (h *core) running(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	release, ok = h.runs.add()
	if !ok {
		h.refuseShuttingDown(w, r)
	}
	return release, ok
}

// startingRun registers a chat request, which starts a run, with Shutdown
// and Drain; once either began it answers 503 and returns false.
func (h *core) startingRun(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	release, ok = h.runs.addRun()
	if !ok {
		h.refuseShuttingDown(w, r)
	}
	return release, ok
}

// refuseShuttingDown answers a request that comes once the server drains
// or shuts down.
func (h *core) refuseShuttingDown(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "1")
	h.refuse(w, r, http.StatusServiceUnavailable, "the server is shutting down; try again", nil)
}

// sameOrigin refuses a browser's request from an origin other than the
// server's own and AllowedOrigins; a refused one is answered, and false
// returned.
func (h *core) sameOrigin(w http.ResponseWriter, r *http.Request) bool {
	if h.origins.Check(r) != nil {
		h.refuse(w, r, http.StatusForbidden, fmt.Sprintf("cross-origin request from %q refused: the origin is not allowed", r.Header.Get("Origin")), nil)
		return false
	}
	return true
}

func (h *core) newMessageID() string {
	if h.NewMessageID != nil {
		if id := h.NewMessageID(); id != "" {
			return id
		}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "msg-" + hex.EncodeToString(b[:])
}

func (h *core) errorText(err error) string {
	if h.ErrorText != nil {
		return h.ErrorText(err)
	}
	if fe := (*agentloop.FileError)(nil); errors.As(err, &fe) {
		// The user's own file: say which and why, so they can change it.
		return fmt.Sprintf("The model cannot take the file %q (%s): %s.", fe.Filename, fe.MediaType, fe.Reason)
	}
	return genericErrorText
}

func (h *core) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// logRunError logs the error a run ended with, at level.
func (h *core) logRunError(r *http.Request, req *ChatRequest, err error, level slog.Level) {
	h.logger().LogAttrs(context.WithoutCancel(r.Context()), level, "aisdk: chat run failed",
		slog.String("chat", req.ID), slog.String("path", r.URL.Path), slog.Any("error", err))
}

// fail answers an error of prepare or reconcile: an *HTTPError as it says,
// any other error with a 500.
func (h *core) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *HTTPError
	if errors.As(err, &he) {
		if he.Err != nil {
			level := slog.LevelWarn
			if he.Status >= 500 {
				level = slog.LevelError
			}
			h.logger().LogAttrs(r.Context(), level, "aisdk: chat request refused",
				slog.Int("status", he.Status), slog.String("path", r.URL.Path), slog.Any("error", he.Err))
		}
		h.refuse(w, r, he.Status, he.Message, nil)
		return
	}
	h.internalError(w, r, err)
}

// refuse answers a request the client got wrong; the message names the
// problem. Refusals with 403 are logged (Warn), as they may be attacks, and
// conflicts with the stored chat (Info).
func (h *core) refuse(w http.ResponseWriter, r *http.Request, status int, msg string, err error) {
	switch status {
	case http.StatusForbidden:
		h.logger().LogAttrs(r.Context(), slog.LevelWarn, "aisdk: chat request refused",
			slog.Int("status", status), slog.String("path", r.URL.Path), slog.String("reason", msg))
	case http.StatusConflict:
		h.logger().LogAttrs(r.Context(), slog.LevelInfo, "aisdk: chat request refused",
			slog.Int("status", status), slog.String("path", r.URL.Path), slog.String("reason", msg))
	}
	writeJSONError(w, status, msg)
}

// internalError answers a 500 with a generic message and logs err.
func (h *core) internalError(w http.ResponseWriter, r *http.Request, err error) {
	h.logger().LogAttrs(r.Context(), slog.LevelError, "aisdk: chat request failed",
		slog.String("path", r.URL.Path), slog.Any("error", err))
	writeJSONError(w, http.StatusInternalServerError, genericErrorText)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
