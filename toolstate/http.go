package toolstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	chatstore "github.com/agentloop/agentloop/store"
)

// HandlerOptions configures [NewHandler]. The zero value is useful: every request allowed, logs to slog.Default(),
// the default cross-origin check, no tools named ahead, time.Now, and the
// stored config. NewHandler copies what it needs; changing the options after
// the call has no effect.
type HandlerOptions struct {
	// Authorize, when set, is run before every request with the {id} of
	// the path: a non-nil error refuses the request with 403 and the
	// error's text as message, or with the status of an error that has a
	// StatusCode() int method (aisdk.HTTPError has; a status of 500 or more
	// sends a generic message and logs the error). Use it to refuse other
	// users' conversations. Nil allows every request.
	Authorize func(r *http.Request, agentID string) error

	// Logger receives what clients are not told: the detail of every 500
	// (a store failure). Nil means slog.Default().
	Logger *slog.Logger

	// CrossOriginProtection refuses (403) a browser's cross-origin reset.
	// Pass the one that guards the application's other routes, with the
	// origins it trusts. Nil means an [http.CrossOriginProtection] without
	// trusted origins, which lets through same-origin requests and
	// requests not made by a browser.
	CrossOriginProtection *http.CrossOriginProtection

	// Tools names tools that every conversation shows even before they
	// were seen (see [Names]); they appear available, or waiting.
	Tools []string

	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Config, when set, is the config in force, as [Tracker.Config] is: it
	// replaces the stored config when a state is shown or reset. Nil keeps
	// the stored one.
	Config *Config
}

type handler struct {
	docs      chatstore.Docs
	authorize func(*http.Request, string) error
	tools     []string
	now       func() time.Time
	config    *Config
	logger    *slog.Logger
	origins   *http.CrossOriginProtection
	mux       *http.ServeMux
}

// NewHandler returns an http.Handler for
//
//	GET  /agents/{id}/tool-states        the states of conversation {id}
//	POST /agents/{id}/tool-states/reset  reset one tool ({"toolName": "…"}) or all (no body, or {})
//
// where {id} is the conversation id (one path segment). Mount it at the
// root of the path, e.g. mux.Handle("/agents/", h). Both answer JSON:
//
//	{"success": true, "data": {"agentId": id, "toolStates": {name: {"status", "reason", "lastUpdated"}}, "timestamp"}}
//
// (a reset's data also has "reset": the names reset), or
// {"success": false, "error": message} with 400 for a bad body (one
// with a field other than "toolName" included; 413 past 64 KiB) or a bad
// id (the rule of chat ids, store.CheckID: 1 to 512 bytes of UTF-8
// without NUL), 403 when the authorize check refuses or a browser posts a
// reset from another origin (see [HandlerOptions.CrossOriginProtection]), 404 for an
// unknown tool, 415 for a reset whose Content-Type is neither
// application/json nor absent (an HTML form's), and 500 for a store
// failure, with a generic message (the detail goes to
// [HandlerOptions.Logger]). A corrupt stored state is shown as a fresh one; a reset sets it
// aside ([Discard]) and starts the conversation fresh. The states are the
// conversations' documents in docs, as [Load] and [Update] read and write
// them. The handler is safe for concurrent use.
func NewHandler(docs chatstore.Docs, opts HandlerOptions) http.Handler {
	h := &handler{docs: docs, authorize: opts.Authorize, tools: slices.Clone(opts.Tools),
		now: opts.Now, logger: opts.Logger, origins: opts.CrossOriginProtection}
	if h.now == nil {
		h.now = time.Now
	}
	if h.logger == nil {
		h.logger = slog.Default()
	}
	if h.origins == nil {
		h.origins = http.NewCrossOriginProtection()
	}
	if opts.Config != nil {
		c := opts.Config.clone()
		h.config = &c
	}
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /agents/{id}/tool-states", h.get)
	h.mux.HandleFunc("POST /agents/{id}/tool-states/reset", h.reset)
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// view is a tool state as the API shows it.
type view struct {
	Status      Status    `json:"status"`
	Reason      string    `json:"reason"`
	LastUpdated time.Time `json:"lastUpdated"`
}

type data struct {
	AgentID    string          `json:"agentId"`
	ToolStates map[string]view `json:"toolStates"`
	Reset      []string        `json:"reset,omitempty"`
	Timestamp  time.Time       `json:"timestamp"`
}

func (h *handler) allowed(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if err := chatstore.CheckID("conversation id", id); err != nil {
		writeError(w, http.StatusBadRequest, strings.TrimPrefix(err.Error(), chatstore.ErrInvalid.Error()+": ")+
			fmt.Sprintf(": an id is 1 to %d bytes of UTF-8 without NUL", chatstore.MaxIDLen))
		return "", false
	}
	if h.authorize != nil {
		if err := h.authorize(r, id); err != nil {
			status := http.StatusForbidden
			var sc interface{ StatusCode() int }
			if errors.As(err, &sc) && sc.StatusCode() >= 400 {
				status = sc.StatusCode()
			}
			if status >= 500 {
				h.internalError(w, r, id, fmt.Errorf("toolstate: authorizing: %w", err))
			} else {
				writeError(w, status, err.Error())
			}
			return "", false
		}
	}
	return id, true
}

// internalError answers a 500 with a generic message and logs err.
func (h *handler) internalError(w http.ResponseWriter, r *http.Request, id string, err error) {
	if h.logger != nil {
		h.logger.LogAttrs(r.Context(), slog.LevelError, "toolstate: request failed",
			slog.String("conversation", id), slog.String("path", r.URL.Path), slog.Any("error", err))
	}
	writeError(w, http.StatusInternalServerError, "the tool states could not be read or written; the server log says why")
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	id, ok := h.allowed(w, r)
	if !ok {
		return
	}
	s, err := Load(r.Context(), h.docs, id)
	if undecodable(err) {
		s, err = NewState(Config{}), nil
	}
	if err != nil {
		h.internalError(w, r, id, err)
		return
	}
	h.writeState(w, id, s, nil)
}

func (h *handler) reset(w http.ResponseWriter, r *http.Request) {
	if h.origins != nil && h.origins.Check(r) != nil {
		writeError(w, http.StatusForbidden, fmt.Sprintf("cross-origin request from %q refused: the origin is not allowed", r.Header.Get("Origin")))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt != "application/json" {
			w.Header().Set("Accept-Post", "application/json")
			writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("the body must be application/json (or absent), not %q", ct))
			return
		}
	}
	id, ok := h.allowed(w, r)
	if !ok {
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxResetBody))
	if err != nil {
		status := http.StatusBadRequest
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, "reading the body: "+err.Error())
		return
	}
	toolName, err := decodeReset(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var (
		result *State
		names  []string
	)
	update := func(s *State) error {
		h.prepare(s)
		now := h.now()
		if toolName == nil {
			names = s.ResetAll(now)
		} else {
			if err := s.Reset(*toolName, now); err != nil {
				return err
			}
			names = []string{*toolName}
		}
		result = s.Clone()
		return nil
	}
	err = Update(r.Context(), h.docs, id, update)
	if undecodable(err) {
		// Resetting a corrupt state starts it fresh.
		if err = Discard(r.Context(), h.docs, id); err == nil {
			err = Update(r.Context(), h.docs, id, update)
		}
	}
	switch {
	case errors.Is(err, ErrUntrackedTool):
		writeError(w, http.StatusNotFound, "conversation "+id+" has no tool named "+*toolName)
		return
	case err != nil:
		h.internalError(w, r, id, err)
		return
	}
	h.writeState(w, id, result, names)
}

// maxResetBody bounds the body of a reset request.
const maxResetBody = 64 << 10

// decodeReset decodes a reset body: empty, or an object with an optional
// "toolName". Unknown fields are refused, so that a misspelt "toolName"
// cannot reset every tool.
func decodeReset(raw []byte) (*string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	var body struct {
		ToolName *string `json:"toolName"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&body)
	if err == nil && raw[0] != '{' {
		err = errors.New("not an object")
	}
	if err == nil {
		if _, tail := dec.Token(); tail != io.EOF {
			err = errors.New("data after the object")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the body is not a JSON object {\"toolName\": \"…\"}: %w", err)
	}
	if body.ToolName != nil && *body.ToolName == "" {
		return nil, errors.New("toolName is empty; leave it out to reset all tools")
	}
	return body.ToolName, nil
}

// prepare applies the handler's config and tool names to s.
func (h *handler) prepare(s *State) {
	if h.config != nil {
		s.Config = h.config.clone()
	}
	s.Sync(h.now(), h.tools...)
}

func (h *handler) writeState(w http.ResponseWriter, id string, s *State, reset []string) {
	h.prepare(s)
	now := h.now()
	d := data{AgentID: id, ToolStates: make(map[string]view, len(s.Tools)), Reset: reset, Timestamp: now}
	for _, name := range slices.Sorted(maps.Keys(s.Tools)) {
		ts := s.Tools[name]
		d.ToolStates[name] = view{Status: ts.Status, Reason: ts.Reason, LastUpdated: ts.LastUpdated}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": d})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"success": false, "error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"success":false,"error":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
