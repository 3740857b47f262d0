package aisdk

import (
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

// Defaults used when the matching [Handler] field is zero.
const (
	DefaultMaxRunTime  = 10 * time.Minute
	DefaultKeepAlive   = 15 * time.Second
	DefaultBodyTimeout = time.Minute
)

// MinSecretSize is the shortest [Handler.Secret] accepted, in bytes.
const MinSecretSize = 32

// Handler serves the AI SDK chat route (POST, usually mounted at
// /api/chat): it decodes the body that useChat or assistant-ui sends,
// rebuilds the history ([ToHistory]), runs the agent, and streams the run
// as a UI message stream ([Mapper], [Writer]).
//
// Without a Store the client's messages are the whole state, and what the
// server decided is signed with Secret and checked when it comes back;
// with a Store the stored history is authoritative. The package
// documentation says what each mode trusts.
//
// The body's "tools" become client tools for the run (a tool named like
// one of the agent's tools, or with an invalid schema, is a 400); "system"
// and system messages are used only with AllowClientSystem, "callSettings"
// only with AllowClientSettings. A continuation (the last posted message is
// an assistant message) reuses that message's id in the start chunk. When
// the client goes away the run is cancelled. A GET whose path ends in
// "/stream" (useChat's resume request) gets 204 No Content: streams are not
// kept for resumption.
//
// Errors before the stream starts are JSON bodies {"error": "…"} that name
// the problem: 405 (not a POST), 403 (AllowedOrigins, or a part that fails
// the signature check), 415 (not application/json), 408 (body not read
// within BodyTimeout), 413 (over Limits.MaxBodyBytes), 400 (a body that
// cannot be used), 409 (a mismatch with the stored chat, or a run of the
// chat in progress), an [*HTTPError]'s status from Prepare, and 500 with a
// generic message, whose detail goes to Logger. Once streaming, a failure
// is an error chunk with ErrorText's text.
//
// A Handler must not be modified once it serves requests; it is safe for
// concurrent use.
type Handler struct {
	// Agent runs the requests. Required.
	Agent *agentloop.Agent

	// Prepare, if set, is called for each request after it was decoded and
	// checked. It returns extra run options (tools or a system prompt for
	// this user, hooks for this chat…), or an error that refuses the
	// request: an [*HTTPError] gives the status and message, any other
	// error a 500 (its text is logged, not sent).
	Prepare func(r *http.Request, req *ChatRequest) ([]agentloop.Option, error)

	// Store, when set, makes the stored history authoritative: each
	// request is checked with [Reconcile] and the run starts from the
	// stored history plus what the client may add. The run's history is
	// saved before the response's last chunk is written. Requests need a
	// chat id, and a chat serves one request at a time.
	Store ChatStore

	// Secret signs, without a Store, the parts the server made. It must be
	// at least MinSecretSize random bytes, the same on every replica and
	// across restarts, and kept secret (whoever has it can sign anything).
	// Nil means a random key for this Handler: a restart, or another
	// replica, then refuses the chats in progress, as a changed Secret
	// does.
	Secret []byte

	// AllowedOrigins, when non-nil, refuses (403) a browser request from
	// another origin unless its origin ("https://app.example.com") is
	// listed, with [http.CrossOriginProtection] (Sec-Fetch-Site, then
	// Origin against Host); same-origin requests, and requests with
	// neither header (not from a browser), pass. Nil checks nothing.
	AllowedOrigins []string

	// Limits bound the request body: its size, its messages and their
	// parts. Zero fields mean the Default* limits.
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

	// AllowClientSystem lets the client set the system prompt: the body's
	// "system" replaces the agent's for the run, and system messages in
	// "messages" are kept (without a Store; with one they are always
	// dropped, since they are not part of the stored chat). Off by default,
	// because the client is not trusted: without it both are ignored.
	AllowClientSystem bool
	// AllowClientSettings lets the body's "callSettings" (maxTokens,
	// temperature, topP, seed) replace the agent's settings for the run.
	// Off by default.
	AllowClientSettings bool

	// ErrorText turns a run's error into the error chunk's text. Nil means
	// a generic text; the error goes to Logger. To show clients the detail
	// (in development), return err.Error().
	ErrorText func(error) string
	// Logger receives what clients are not told: every run's error (level
	// Info when the client went away, else Error), the detail of every
	// 500, and requests refused with a 403 (Warn). Nil means
	// slog.Default().
	Logger *slog.Logger
	// NewMessageID returns the id of a new assistant message, which must
	// be unique: signatures bind parts to it. Nil, or an empty result,
	// means a random "msg-" id.
	NewMessageID func() string

	initOnce sync.Once
	initErr  error
	signer   *signer
	origins  *http.CrossOriginProtection // AllowedOrigins; nil: no check

	busyMu sync.Mutex
	busy   map[string]bool
}

// HTTPError is an error with the HTTP status to answer it with. Prepare may
// return one to refuse a request (401, 403, 429…); its Message is sent to
// the client as is.
type HTTPError struct {
	Status  int
	Message string
}

func (e *HTTPError) Error() string { return e.Message }

// genericErrorText is what clients see of a run's error, and of a 500,
// unless ErrorText says otherwise.
const genericErrorText = "The server could not complete the answer."

// init prepares what the Handler derives from its fields, once.
func (h *Handler) init() error {
	h.initOnce.Do(func() {
		if h.Agent == nil {
			h.initErr = errors.New("aisdk: Handler.Agent is nil")
			return
		}
		if h.Store == nil {
			secret := h.Secret
			if secret == nil {
				secret = make([]byte, MinSecretSize)
				_, _ = rand.Read(secret)
			} else if len(secret) < MinSecretSize {
				h.initErr = fmt.Errorf("aisdk: Handler.Secret has %d bytes; it needs at least %d random bytes", len(secret), MinSecretSize)
				return
			}
			h.signer = newSigner(secret)
		}
		if h.AllowedOrigins != nil {
			h.origins = http.NewCrossOriginProtection()
			for _, o := range h.AllowedOrigins {
				if err := h.origins.AddTrustedOrigin(o); err != nil {
					h.initErr = fmt.Errorf("aisdk: Handler.AllowedOrigins: %w", err)
					return
				}
			}
		}
	})
	return h.initErr
}

// ServeHTTP serves one chat request; see [Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/stream") {
		// useChat's resume request (GET {api}/{chatId}/stream): streams are
		// not kept for resumption, so there is never an active one.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed; POST the chat request", r.Method), nil)
		return
	}
	if err := h.init(); err != nil {
		h.internalError(w, r, err)
		return
	}
	if h.origins != nil && h.origins.Check(r) != nil {
		h.refuse(w, r, http.StatusForbidden, fmt.Sprintf("cross-origin request from %q refused: the origin is not allowed", r.Header.Get("Origin")), nil)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		w.Header().Set("Accept-Post", "application/json")
		w.Header().Set("Connection", "close")
		h.refuse(w, r, http.StatusUnsupportedMediaType, fmt.Sprintf("the body must be application/json, not %q", r.Header.Get("Content-Type")), nil)
		return
	}
	req, status, err := h.readRequest(w, r)
	if err != nil {
		w.Header().Set("Connection", "close") // the body may not be read to its end
		h.refuse(w, r, status, err.Error(), err)
		return
	}

	history, opts, err := h.prepare(r, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	release := func() {}
	if h.Store != nil {
		if req.ID == "" {
			h.refuse(w, r, http.StatusBadRequest, `the request has no chat "id", which the chat store needs`, nil)
			return
		}
		if !h.acquire(req.ID) {
			h.refuse(w, r, http.StatusConflict, fmt.Sprintf("chat %q already has a run in progress", req.ID), nil)
			return
		}
		var once sync.Once
		release = func() { once.Do(func() { h.release(req.ID) }) }
		defer release()
		if history, err = h.reconcile(r, req); err != nil {
			h.fail(w, r, err)
			return
		}
	}

	// A continuation (the last posted message is the assistant's) must
	// repeat that message's id, or leave it out when the client sent none:
	// any other id makes the client show a second assistant message.
	var messageID string
	if last := req.Messages[len(req.Messages)-1]; last.Role == "assistant" {
		messageID = last.ID
	} else {
		messageID = h.newMessageID()
	}
	h.stream(w, r, req, history, opts, messageID, release)
}

func (h *Handler) newMessageID() string {
	if h.NewMessageID != nil {
		if id := h.NewMessageID(); id != "" {
			return id
		}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "msg-" + hex.EncodeToString(b[:])
}

func (h *Handler) errorText(err error) string {
	if h.ErrorText != nil {
		return h.ErrorText(err)
	}
	return genericErrorText
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// logRunError logs the error a run ended with.
func (h *Handler) logRunError(r *http.Request, req *ChatRequest, err error) {
	level := slog.LevelError
	if r.Context().Err() != nil {
		level = slog.LevelInfo // the client went away; the run was cancelled for it
	}
	h.logger().LogAttrs(r.Context(), level, "aisdk: chat run failed",
		slog.String("chat", req.ID), slog.String("path", r.URL.Path), slog.Any("error", err))
}

// fail answers an error of prepare or reconcile: an *HTTPError as it says,
// any other error with a 500.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *HTTPError
	if errors.As(err, &he) {
		h.refuse(w, r, he.Status, he.Message, nil)
		return
	}
	h.internalError(w, r, err)
}

// refuse answers a request the client got wrong; the message names the
// problem. Signature failures are logged, as they may be attacks.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, msg string, err error) {
	if status == http.StatusForbidden {
		h.logger().LogAttrs(r.Context(), slog.LevelWarn, "aisdk: chat request refused",
			slog.Int("status", status), slog.String("path", r.URL.Path), slog.String("reason", msg))
	}
	writeJSONError(w, status, msg)
}

// internalError answers a 500 with a generic message and logs err.
func (h *Handler) internalError(w http.ResponseWriter, r *http.Request, err error) {
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
