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
	"os"
	"regexp"
	"sort"
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
	// listed, reading Sec-Fetch-Site and Origin as Go 1.25's
	// http.CrossOriginProtection does; same-origin requests, and requests
	// with neither header (not from a browser), pass. Nil checks nothing.
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
	// NewMessageID returns the id of a new assistant message. Nil, or an
	// empty result, means a random "msg-" id.
	NewMessageID func() string

	initOnce sync.Once
	initErr  error
	signer   *signer
	origins  map[string]bool // AllowedOrigins, normalized; nil: no check

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

// toolNameRe is what LLM providers accept as a function name.
var toolNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

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
			h.origins = make(map[string]bool, len(h.AllowedOrigins))
			for _, o := range h.AllowedOrigins {
				n, err := normalizeOrigin(o)
				if err != nil {
					h.initErr = fmt.Errorf("aisdk: Handler.AllowedOrigins: %w", err)
					return
				}
				h.origins[n] = true
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
	if h.origins != nil && !h.originAllowed(r) {
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

// originAllowed reports whether r passes the AllowedOrigins check.
func (h *Handler) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
		if origin == "" {
			return true // not a browser, or one too old to say
		}
		if u, err := url.Parse(origin); err == nil && strings.EqualFold(u.Host, r.Host) {
			return true
		}
	}
	n, err := normalizeOrigin(origin)
	return err == nil && h.origins[n]
}

// normalizeOrigin returns an origin as scheme://host[:port] in lower case.
func normalizeOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("origin %q is not of the form scheme://host[:port]", o)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// readRequest reads and decodes the body within BodyTimeout and Limits. On
// failure it returns the status to answer with.
func (h *Handler) readRequest(w http.ResponseWriter, r *http.Request) (*ChatRequest, int, error) {
	limits := h.Limits.withDefaults()
	body := r.Body
	if limits.MaxBodyBytes > 0 {
		body = http.MaxBytesReader(w, r.Body, limits.MaxBodyBytes)
	}
	rc := http.NewResponseController(w)
	d := h.BodyTimeout
	if d == 0 {
		d = DefaultBodyTimeout
	}
	if d > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(d)) // ErrNotSupported: nothing to bound
	}
	req, err := DecodeRequest(body, limits)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout, fmt.Errorf("the request body was not received within %v", d)
	case errors.Is(err, ErrTooLarge):
		return nil, http.StatusRequestEntityTooLarge, err
	case err != nil:
		return nil, http.StatusBadRequest, err
	}
	// The body is read. A read deadline must not outlive it: the server's
	// read that watches for the client going away would fail at the
	// deadline and cancel the request's context, and the run with it.
	// (HTTP/1.1 in net/http lifts it itself when the body reaches its end;
	// this makes it so whatever the server.)
	if d > 0 {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return req, 0, nil
}

// prepare checks the posted messages (their signatures, without a Store),
// rebuilds the history, and collects the run's options: the client's
// (tools, system prompt, settings) and Prepare's. With a Store the history
// is rebuilt by reconcile instead.
//
// A refusal is an *HTTPError; any other error is the server's own.
func (h *Handler) prepare(r *http.Request, req *ChatRequest) (agentloop.History, []agentloop.Option, error) {
	var history agentloop.History
	if h.Store == nil {
		msgs := req.Messages
		if !h.AllowClientSystem {
			msgs = withoutSystem(msgs)
		}
		msgs, err := h.signer.verify(msgs)
		if err != nil {
			return nil, nil, &HTTPError{Status: http.StatusForbidden, Message: err.Error()}
		}
		if history, err = ToHistory(msgs); err != nil {
			return nil, nil, &HTTPError{Status: http.StatusBadRequest, Message: err.Error()}
		}
	}
	opts, err := h.clientOptions(req)
	if err != nil {
		return nil, nil, &HTTPError{Status: http.StatusBadRequest, Message: err.Error()}
	}
	if h.Prepare != nil {
		more, err := h.Prepare(r, req)
		if err != nil {
			var he *HTTPError
			if errors.As(err, &he) {
				return nil, nil, he
			}
			return nil, nil, fmt.Errorf("aisdk: Prepare: %w", err)
		}
		opts = append(opts, more...)
	}
	return history, opts, nil
}

// reconcile returns the history to run in the store mode: the stored one
// plus what the request may add.
func (h *Handler) reconcile(r *http.Request, req *ChatRequest) (agentloop.History, error) {
	stored, err := h.Store.Load(r.Context(), req.ID)
	if err != nil {
		return nil, fmt.Errorf("aisdk: loading chat %q: %w", req.ID, err)
	}
	history, err := Reconcile(stored, req)
	switch {
	case errors.Is(err, ErrConflict):
		return nil, &HTTPError{Status: http.StatusConflict, Message: err.Error()}
	case err != nil:
		return nil, &HTTPError{Status: http.StatusBadRequest, Message: err.Error()}
	}
	return history, nil
}

// clientOptions turns the body's tools, system prompt and settings into run
// options.
func (h *Handler) clientOptions(req *ChatRequest) ([]agentloop.Option, error) {
	var opts []agentloop.Option
	if len(req.Tools) > 0 {
		server := make(map[string]bool, len(h.Agent.Tools))
		for _, t := range h.Agent.Tools {
			if t != nil {
				server[t.Name] = true
			}
		}
		names := make([]string, 0, len(req.Tools))
		for name := range req.Tools {
			names = append(names, name)
		}
		sort.Strings(names)
		tools := make([]*agentloop.Tool, 0, len(names))
		for _, name := range names {
			if !toolNameRe.MatchString(name) {
				return nil, fmt.Errorf("%w: client tool %q: a tool name must be 1 to 64 letters, digits, '_' or '-'", ErrBadRequest, name)
			}
			if server[name] {
				return nil, fmt.Errorf("%w: client tool %q has the name of a server tool", ErrBadRequest, name)
			}
			def := req.Tools[name]
			t, err := agentloop.NewClientTool(name, def.Description, def.Parameters)
			if err != nil {
				return nil, fmt.Errorf("%w: client tool %q: %v", ErrBadRequest, name, err)
			}
			tools = append(tools, t)
		}
		opts = append(opts, agentloop.WithTools(tools...))
	}
	if h.AllowClientSystem && req.System != "" {
		opts = append(opts, agentloop.WithSystem(req.System))
	}
	if h.AllowClientSettings && req.CallSettings != nil {
		s := h.Agent.Settings
		cs := req.CallSettings
		if cs.MaxTokens != nil {
			s.MaxTokens = *cs.MaxTokens
		}
		if cs.Temperature != nil {
			s.Temperature = cs.Temperature
		}
		if cs.TopP != nil {
			s.TopP = cs.TopP
		}
		if cs.Seed != nil {
			s.Seed = cs.Seed
		}
		opts = append(opts, agentloop.WithSettings(s))
	}
	return opts, nil
}

type runPair struct {
	item agentloop.Item
	err  error
}

// stream runs the agent and writes the response. The calling goroutine is
// the only writer; the run is ranged over in a goroutine that hands its
// items over a channel, so that keep-alive comments can be written while
// the run is idle.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, req *ChatRequest, history agentloop.History, opts []agentloop.Option, messageID string, release func()) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	if d := h.MaxRunTime; d >= 0 {
		if d == 0 {
			d = DefaultMaxRunTime
		}
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, d, fmt.Errorf("the run took longer than the limit of %v", d))
		defer stop()
	}
	opts = append(opts, agentloop.WithConversationID(req.ID))

	items := make(chan runPair, 32)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(items)
		for item, err := range h.Agent.Stream(ctx, history, opts...) {
			select {
			case items <- runPair{item, err}:
			case <-stop:
				return
			}
		}
	}()
	var stopOnce sync.Once
	abandon := func() {
		stopOnce.Do(func() { close(stop) })
		cancel(errors.New("aisdk: the response could not be written"))
		<-done
	}
	defer abandon()

	sw := NewWriter(w)
	m := NewMapper(messageID)
	m.ErrorText = h.errorText
	if h.signer != nil {
		m.signWith(h.signer, history.Unanswered())
	}
	var tick <-chan time.Time
	if ka := h.KeepAlive; ka >= 0 {
		if ka == 0 {
			ka = DefaultKeepAlive
		}
		t := time.NewTicker(ka)
		defer t.Stop()
		tick = t.C
	}
	var chunks []Chunk
	wrote := true
	write := func() bool {
		for _, c := range chunks {
			if sw.WriteChunk(c) != nil {
				return false
			}
		}
		chunks = chunks[:0]
		wrote = true
		if len(items) == 0 {
			return sw.Flush() == nil
		}
		return true
	}
	for {
		select {
		case p, ok := <-items:
			if !ok {
				if !m.Done() {
					err := errors.New("aisdk: the run ended without a final item")
					h.logRunError(r, req, err)
					chunks = m.Map(chunks, nil, err)
				}
				if write() {
					_ = sw.Close()
				}
				return
			}
			if h.Store != nil && !m.Done() {
				if err := h.save(r, req, p, messageID); err != nil {
					p = runPair{err: err}
				}
				if isTerminal(p) {
					release()
				}
			}
			if p.err != nil && !m.Done() {
				h.logRunError(r, req, p.err)
			}
			chunks = m.Map(chunks, p.item, p.err)
			if !write() {
				return
			}
		case <-tick:
			if !wrote && (sw.KeepAlive() != nil || sw.Flush() != nil) {
				return
			}
			wrote = false
		}
	}
}

func isTerminal(p runPair) bool {
	if p.err != nil {
		return true
	}
	switch p.item.(type) {
	case agentloop.Final, agentloop.Pending:
		return true
	}
	return false
}

// save stores the history of a terminal pair; other pairs are left alone.
func (h *Handler) save(r *http.Request, req *ChatRequest, p runPair, messageID string) error {
	var hist agentloop.History
	switch it := p.item.(type) {
	case agentloop.Final:
		hist = it.History
	case agentloop.Pending:
		hist = it.History
	default:
		if p.err == nil {
			return nil
		}
		var ok bool
		if hist, ok = agentloop.HistoryOf(p.err); !ok {
			return nil
		}
	}
	hist = hist.Clone()
	for i := range hist {
		if hist[i].Role == agentloop.RoleAssistant && hist[i].ID == "" {
			hist[i].ID = messageID
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
	defer cancel()
	if err := h.Store.Save(ctx, req.ID, hist); err != nil {
		if p.err != nil {
			return fmt.Errorf("%w (and saving the chat failed: %v)", p.err, err)
		}
		return fmt.Errorf("saving chat %q: %w", req.ID, err)
	}
	return nil
}

func (h *Handler) acquire(chatID string) bool {
	h.busyMu.Lock()
	defer h.busyMu.Unlock()
	if h.busy[chatID] {
		return false
	}
	if h.busy == nil {
		h.busy = make(map[string]bool)
	}
	h.busy[chatID] = true
	return true
}

func (h *Handler) release(chatID string) {
	h.busyMu.Lock()
	delete(h.busy, chatID)
	h.busyMu.Unlock()
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

func withoutSystem(msgs []UIMessage) []UIMessage {
	out := msgs[:0:0]
	for _, m := range msgs {
		if m.Role != "system" {
			out = append(out, m)
		}
	}
	return out
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
