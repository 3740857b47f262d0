package aisdk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
)

// Defaults used when the matching [Handler] field is zero.
const (
	DefaultMaxRunTime = 10 * time.Minute
	DefaultKeepAlive  = 15 * time.Second
)

// Handler serves the AI SDK chat route (POST, usually mounted at
// /api/chat): it decodes the body that useChat or assistant-ui sends,
// rebuilds the history ([ToHistory]), runs the agent, and streams the run
// as a UI message stream ([Mapper], [Writer]).
//
// Without a Store the client's messages are the whole state (the
// stateless mode): a client tool round trip or an approval needs nothing
// on the server. The client can then write anything into the history,
// including results of server tools; configure a Store when that matters.
//
// Per request: the body's "tools" become client tools for the run (a tool
// named like one of the agent's tools, or with an invalid schema, is a
// 400); "system" and system messages are used only with AllowClientSystem;
// "callSettings" only with AllowClientSettings. A continuation (the last
// posted message is an assistant message) reuses that message's id in the
// start chunk. When the client goes away the run is cancelled.
//
// A GET whose path ends in "/stream" (useChat's resume request, when the
// handler is also mounted at "{api}/") gets 204 No Content: streams are not
// kept for resumption.
//
// Errors before the stream starts are JSON bodies {"error": "…"}: 405 for a
// method other than POST, 413 for a body over MaxBodyBytes, 400 for a body
// that cannot be used (the message names the problem), 409 for a request
// that does not match the stored chat or a chat that has a run in
// progress, and the status of an [*HTTPError] returned by Prepare (500 for
// other errors). Once streaming, a failure is an error chunk.
//
// A Handler must not be modified while it serves requests; it is safe for
// concurrent use.
type Handler struct {
	// Agent runs the requests. Required.
	Agent *agentloop.Agent

	// Prepare, if set, is called for each request after it was decoded. It
	// returns extra run options (tools or a system prompt for this user,
	// hooks for this chat…), or an error that refuses the request: an
	// [*HTTPError] gives the status and message, any other error a 500.
	Prepare func(r *http.Request, req *ChatRequest) ([]agentloop.Option, error)

	// Store, when set, makes the stored history authoritative: the
	// request's messages are checked with [Reconcile] (a mismatch is a
	// 409) and the run starts from the stored history plus what the client
	// may add. A "regenerate-message" request first drops the stored
	// answer it regenerates ([ForRegenerate]), and an edit (a last user
	// message named by "messageId") drops the stored messages from the
	// edited one on ([ForEdit]). After the run the store gets the run's history (from its
	// Final or Pending item, or the history its error carries) before the
	// response's last chunk is written. Requests need a chat id, and one
	// chat serves one request at a time (409 otherwise).
	Store ChatStore

	// MaxBodyBytes bounds the request body; 0 means DefaultMaxBodyBytes,
	// negative means no limit.
	MaxBodyBytes int64
	// MaxMessages bounds the number of posted messages; 0 means
	// DefaultMaxMessages, negative means no limit.
	MaxMessages int
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

	// ErrorText turns a run's error into the text of the error chunk the
	// client shows. Nil means err.Error().
	ErrorText func(error) string
	// NewMessageID returns the id of a new assistant message. Nil means a
	// random "msg-" id.
	NewMessageID func() string

	busyMu sync.Mutex
	busy   map[string]bool
}

// HTTPError is an error with the HTTP status to answer it with. Prepare may
// return one to refuse a request (401, 403, 429…).
type HTTPError struct {
	Status  int
	Message string
}

func (e *HTTPError) Error() string { return e.Message }

// toolNameRe is what LLM providers accept as a function name.
var toolNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

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
		writeJSONError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed; POST the chat request", r.Method))
		return
	}
	if h.Agent == nil {
		writeJSONError(w, http.StatusInternalServerError, "aisdk: Handler.Agent is nil")
		return
	}
	limits := Limits{MaxBodyBytes: h.MaxBodyBytes, MaxMessages: h.MaxMessages}.withDefaults()
	body := r.Body
	if limits.MaxBodyBytes > 0 {
		body = http.MaxBytesReader(w, r.Body, limits.MaxBodyBytes)
	}
	req, err := DecodeRequest(body, limits)
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, ErrTooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		writeJSONError(w, status, err.Error())
		return
	}

	history, opts, herr := h.prepare(r, req)
	if herr != nil {
		writeJSONError(w, herr.Status, herr.Message)
		return
	}
	release := func() {}
	if h.Store != nil {
		if req.ID == "" {
			writeJSONError(w, http.StatusBadRequest, `the request has no chat "id", which the chat store needs`)
			return
		}
		if !h.acquire(req.ID) {
			writeJSONError(w, http.StatusConflict, fmt.Sprintf("chat %q already has a run in progress", req.ID))
			return
		}
		var once sync.Once
		release = func() { once.Do(func() { h.release(req.ID) }) }
		defer release()
		if history, herr = h.reconcile(r, req, history); herr != nil {
			writeJSONError(w, herr.Status, herr.Message)
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

// prepare rebuilds the posted history and collects the run's options: the
// client's (tools, system prompt, settings) and Prepare's.
func (h *Handler) prepare(r *http.Request, req *ChatRequest) (agentloop.History, []agentloop.Option, *HTTPError) {
	msgs := req.Messages
	if !h.AllowClientSystem || h.Store != nil {
		msgs = withoutSystem(msgs)
	}
	history, err := ToHistory(msgs)
	if err != nil {
		return nil, nil, &HTTPError{Status: http.StatusBadRequest, Message: err.Error()}
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
			return nil, nil, &HTTPError{Status: http.StatusInternalServerError, Message: err.Error()}
		}
		opts = append(opts, more...)
	}
	return history, opts, nil
}

// reconcile returns the history to run in the store mode: the stored one
// (cut for a regenerate or an edit) plus what the request may add.
func (h *Handler) reconcile(r *http.Request, req *ChatRequest, posted agentloop.History) (agentloop.History, *HTTPError) {
	stored, err := h.Store.Load(r.Context(), req.ID)
	if err != nil {
		return nil, &HTTPError{Status: http.StatusInternalServerError, Message: fmt.Sprintf("loading chat %q: %v", req.ID, err)}
	}
	last := agentloop.Message{}
	if len(posted) > 0 {
		last = posted[len(posted)-1]
	}
	switch {
	case req.Trigger == TriggerRegenerate:
		stored = ForRegenerate(stored, posted)
	case req.MessageID != "" && last.Role == agentloop.RoleUser && last.ID == req.MessageID:
		stored = ForEdit(stored, req.MessageID)
	}
	history, err := Reconcile(stored, posted)
	if err != nil {
		return nil, &HTTPError{Status: http.StatusConflict, Message: err.Error()}
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
	sw.NoFlush = true
	m := NewMapper(messageID)
	m.ErrorText = h.ErrorText
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
				chunks = m.End(chunks)
				if write() {
					_ = sw.Done()
				}
				return
			}
			if h.Store != nil && !m.Done() {
				if err := h.save(r, req, history, p, messageID); err != nil {
					p = runPair{err: err}
				}
				if isTerminal(p) {
					release()
				}
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
func (h *Handler) save(r *http.Request, req *ChatRequest, base agentloop.History, p runPair, messageID string) error {
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
		return h.NewMessageID()
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "msg-" + hex.EncodeToString(b[:])
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
