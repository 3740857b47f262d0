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
	"net/url"
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
	// DefaultWriteTimeout bounds each write of a streamed response (see
	// Handler.WriteTimeout).
	DefaultWriteTimeout = 30 * time.Second
	// DefaultStreamLease is how long a run holds its chat's stream lease
	// between renewals (see Handler.StreamLease).
	DefaultStreamLease = 20 * time.Second
)

// MinSecretSize is the shortest [Handler.Secret] accepted, in bytes.
const MinSecretSize = 32

// Handler serves the AI SDK chat route (POST, usually mounted at
// /api/chat): it decodes the body that useChat or assistant-ui sends,
// rebuilds the history ([ToHistory]), runs the agent, and streams the run
// as a UI message stream ([Mapper], [Writer]). [Handler.Routes] serves it
// with the routes around it (resume, stop, the chat list) under one prefix.
//
// Without a Store the client's messages are the whole state, and what the
// server decided is signed with Secret and checked when it comes back;
// with a Store the stored history is authoritative, runs outlive their
// client, and streams can be resumed. The package documentation says what
// each mode trusts, and what the stored mode saves when.
//
// The body's "tools" become client tools for the run (a tool named like
// one of the agent's tools, or with an invalid schema, is a 400); "system"
// and system messages are used only with AllowClientSystem, "callSettings"
// only with AllowClientSettings. A continuation (the last posted message is
// an assistant message) reuses that message's id in the start chunk.
// Without a Store, a client that goes away cancels its run.
//
// Besides the chat POST, ServeHTTP answers useChat's resume request, a GET
// whose path ends in "/{chat id}/stream" (204 No Content without a Store,
// or when the chat has no run in progress), and a POST whose path ends in
// "/{chat id}/stop" (with a Store; see the package documentation).
//
// Errors before the stream starts are JSON bodies {"error": "…"} that name
// the problem: 405 (not a POST), 403 (AllowedOrigins, Authorize, or a part
// that fails the signature check), 415 (not application/json), 408 (body
// not read within BodyTimeout), 413 (over Limits.MaxBodyBytes), 400 (a body
// that cannot be used), 409 (a mismatch with the stored chat, or a
// repeat of results or decisions it already has: see the package
// documentation), 503 (Shutdown began), an [*HTTPError]'s
// status from Prepare, Authorize or Owner, and 500 with a generic message,
// whose detail goes to Logger. Once streaming, a failure is an error chunk with ErrorText's
// text.
//
// A server that shuts down calls [Handler.Shutdown] before
// http.Server.Shutdown: with a Store, runs outlive their requests.
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

	// Store, when set, keeps the chats (package store: memstore,
	// sqlitestore, pgstore) and makes the stored history authoritative:
	// each request is checked with [Reconcile] and runs on the stored
	// history plus what the client may add. Requests need a chat id. The
	// run is saved as it goes, outlives its client, streams its chunks to
	// the chat's stream log so that any replica can resume it, and holds
	// the chat's stream lease, so that a chat runs once at a time across
	// replicas. See the package documentation.
	Store ChatStore

	// Authorize, when set, decides whether a request may use the chat
	// chatID: the chat POST, resume, stop and the chats routes of
	// [Handler.Routes] all call it ("" for the chat list). A non-nil error
	// refuses the request: an [*HTTPError] with its status, any other error
	// with 403 and the error's text. It has the shape of
	// toolstate.WithAuthorize's check, so one func guards both;
	// [OwnerAuthorizer] makes one that gives each user their own chats.
	//
	// When nil, a Handler with a Store serves only requests that reach it
	// over a loopback connection for a loopback host (or in-process), and
	// refuses others with 403 ([LoopbackOnly]): stored chats are not open
	// to the network, nor to pages of DNS-rebound names, by default. Behind a
	// reverse proxy on the same host every request arrives over loopback,
	// so set Authorize there. To serve anyone, say so with a func that
	// returns nil. Without a Store, nil allows every request.
	Authorize func(r *http.Request, chatID string) error

	// Owner, when set, names the user of a request: a chat the request
	// creates gets it as its store.Chat.Owner, and the chat list shows
	// that owner's chats only. Its error refuses the request, as
	// Authorize's does. Nil means "" (chats without an owner).
	Owner func(r *http.Request) (string, error)

	// StreamLease is how long a run holds its chat's stream lease
	// without renewing it (it renews every third of it); 0 means
	// DefaultStreamLease. A replica that dies mid-run leaves its chat to
	// the next request, on any replica, once its lease ran out.
	StreamLease time.Duration

	// Secret signs, without a Store, the parts the server made. It must be
	// at least MinSecretSize random bytes, the same on every replica and
	// across restarts, and kept secret (whoever has it can sign anything).
	// Nil means a random key for this Handler: a restart, or another
	// replica, then refuses the chats in progress, as a changed Secret
	// does.
	Secret []byte

	// AllowedOrigins lists the other origins ("https://app.example.com")
	// whose browsers may change something. Every request that changes
	// something (the chat POST, stop, delete) from a browser on another
	// origin is refused (403) unless its origin is listed, with
	// [http.CrossOriginProtection] (Sec-Fetch-Site, then Origin against
	// Host); same-origin requests, and requests with neither header (not
	// from a browser), pass. Nil or empty: the page's own origin only, so
	// that no page of another site can post, stop or delete, even with a
	// bodiless request that no content-type check guards.
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
	// chunk. With a Store it also bounds how long a run whose client went
	// away goes on.
	MaxRunTime time.Duration
	// KeepAlive is the idle time after which a keep-alive comment is sent
	// (while a tool runs long, for example); 0 means DefaultKeepAlive,
	// negative means never.
	KeepAlive time.Duration

	// WriteTimeout bounds each write of a streamed response to its client
	// (a per-write deadline through [http.ResponseController]): a client
	// that stops reading is dropped once a write waited that long, and its
	// memory with it; a stored run goes on without it and is saved. 0 means
	// DefaultWriteTimeout, negative means no limit. Unlike
	// http.Server.WriteTimeout it never cuts a stream that is read.
	WriteTimeout time.Duration

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
	// Info when the client went away or the run was stopped, else Error),
	// the detail of every 500, requests refused with a 403 (Warn) or a 409
	// (Info). Nil
	// means slog.Default().
	Logger *slog.Logger
	// NewMessageID returns the id of a new assistant message, which must
	// be unique: signatures bind parts to it. Nil, or an empty result,
	// means a random "msg-" id.
	NewMessageID func() string

	runs     runSet // the requests that Shutdown ends
	initOnce sync.Once
	initErr  error
	initLog  sync.Once // logs initErr once
	signer   *signer
	origins  *http.CrossOriginProtection // the same origin and AllowedOrigins
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
	h.initOnce.Do(func() {
		if h.Agent == nil {
			h.initErr = errors.New("aisdk: Handler.Agent is nil: set it to the agent that answers the chats")
			return
		}
		if h.StreamLease < 0 {
			h.initErr = fmt.Errorf("aisdk: Handler.StreamLease is %v; it must not be negative (0 means DefaultStreamLease, %v)", h.StreamLease, DefaultStreamLease)
			return
		}
		if h.Store == nil {
			secret := h.Secret
			if secret == nil {
				secret = make([]byte, MinSecretSize)
				_, _ = rand.Read(secret)
			} else if len(secret) < MinSecretSize {
				h.initErr = fmt.Errorf("aisdk: Handler.Secret has %d bytes; it needs at least %d random bytes: "+
					"make them once (crypto/rand.Read, or openssl rand -base64 %d decoded) and give every replica the same, "+
					"or leave Secret nil for a random key of this process", len(secret), MinSecretSize, MinSecretSize)
				return
			}
			h.signer = newSigner(secret)
		}
		h.origins = http.NewCrossOriginProtection()
		for _, o := range h.AllowedOrigins {
			if err := h.origins.AddTrustedOrigin(o); err != nil {
				h.initErr = fmt.Errorf("aisdk: Handler.AllowedOrigins: %w", err)
				return
			}
		}
	})
	return h.initErr
}

// Validate reports what keeps the Handler from serving: no Agent, a
// negative StreamLease, a Secret shorter than [MinSecretSize], an
// AllowedOrigins entry that is not an origin. Its error names the field
// and says what to do. Call it when the server starts, so that such a
// mistake stops the server rather than its requests; it is safe to call
// more than once and concurrently with requests.
//
// A Handler that is served without that check answers every request with
// a 500 that says the server is misconfigured, and logs the error (Logger,
// level Error) on the first request.
func (h *Handler) Validate() error { return h.init() }

// ready answers a request with a 500 when the Handler's configuration is
// wrong (see Validate), and returns false.
func (h *Handler) ready(w http.ResponseWriter, r *http.Request) bool {
	err := h.init()
	if err == nil {
		return true
	}
	h.initLog.Do(func() {
		h.logger().LogAttrs(r.Context(), slog.LevelError, "aisdk: the handler is misconfigured and answers every request with 500",
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
	if !h.ready(w, r) {
		return
	}
	if r.Method == http.MethodGet {
		if id, ok := chatIDBefore(r, "/stream"); ok {
			if release, ok := h.running(w, r); ok {
				defer release()
				h.serveResume(w, r, id)
			}
			return
		}
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed; POST the chat request", r.Method), nil)
		return
	}
	if !h.sameOrigin(w, r) {
		return
	}
	if id, ok := chatIDBefore(r, "/stop"); ok {
		h.serveStop(w, r, id)
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
	if h.Store != nil && req.ID == "" {
		h.refuse(w, r, http.StatusBadRequest, `the request has no chat "id", which the chat store needs`, nil)
		return
	}
	if err := h.authorize(r, req.ID); err != nil {
		h.fail(w, r, err)
		return
	}

	history, opts, err := h.prepare(r, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	release, ok := h.running(w, r)
	if !ok {
		return
	}
	defer release()
	if h.Store != nil {
		h.serveStored(w, r, req, opts)
		return
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
	h.stream(w, r, req, history, opts, messageID, nil)
}

// running registers a request that runs or follows a run with Shutdown;
// once Shutdown began it answers 503 and returns false.
func (h *Handler) running(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	release, ok = h.runs.add()
	if !ok {
		w.Header().Set("Retry-After", "1")
		h.refuse(w, r, http.StatusServiceUnavailable, "the server is shutting down; try again", nil)
	}
	return release, ok
}

// sameOrigin refuses a browser's request from an origin other than the
// server's own and AllowedOrigins; a refused one is answered (so is one
// to a misconfigured Handler), and false returned.
func (h *Handler) sameOrigin(w http.ResponseWriter, r *http.Request) bool {
	if !h.ready(w, r) {
		return false
	}
	if h.origins.Check(r) != nil {
		h.refuse(w, r, http.StatusForbidden, fmt.Sprintf("cross-origin request from %q refused: the origin is not allowed", r.Header.Get("Origin")), nil)
		return false
	}
	return true
}

// chatIDBefore returns the chat id of a path that ends in
// "/{chat id}"+suffix, as useChat builds it (the id escaped with
// encodeURIComponent, so it may hold an escaped "/").
func chatIDBefore(r *http.Request, suffix string) (string, bool) {
	p, ok := strings.CutSuffix(r.URL.EscapedPath(), suffix)
	if !ok {
		return "", false
	}
	seg := p[strings.LastIndexByte(p, '/')+1:]
	id, err := url.PathUnescape(seg)
	if err != nil || id == "" || !strings.Contains(p, "/") {
		return "", false
	}
	return id, true
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

// logRunError logs the error a run ended with, at level.
func (h *Handler) logRunError(r *http.Request, req *ChatRequest, err error, level slog.Level) {
	h.logger().LogAttrs(context.WithoutCancel(r.Context()), level, "aisdk: chat run failed",
		slog.String("chat", req.ID), slog.String("path", r.URL.Path), slog.Any("error", err))
}

// fail answers an error of prepare or reconcile: an *HTTPError as it says,
// any other error with a 500.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
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
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, msg string, err error) {
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
