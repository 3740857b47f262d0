package aisdk

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"time"

	"github.com/agentloop/agentloop"
)

// This file checks and decodes a request, and turns its body into the
// history and the options of a run: the stateless path, with the signature
// check, ends here.

// toolNameRe is what LLM providers accept as a function name.
var toolNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// readRequest reads and decodes the body within BodyTimeout and Limits. On
// failure it returns the status to answer with.
func (h *core) readRequest(w http.ResponseWriter, r *http.Request) (*ChatRequest, int, error) {
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
	// Content-Length is what the client says, so the buffer grows to it
	// as the body comes, from 64 KB (readAll).
	req, err := decodeRequest(body, r.ContentLength, 64<<10, limits)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout, fmt.Errorf("the request body was not received within %v", d)
	case errors.Is(err, ErrTooLarge), errors.Is(err, ErrFileTooLarge):
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

// options collects the run's options: the client's (tools, system prompt,
// settings) and Prepare's. A refusal is an *HTTPError; any other error is
// the server's own.
func (h *core) options(r *http.Request, req *ChatRequest) (*agentloop.RunOptions, error) {
	opts, err := h.clientOptions(req)
	if err != nil {
		return nil, &HTTPError{Status: http.StatusBadRequest, Message: err.Error()}
	}
	if h.Prepare != nil {
		if err := h.Prepare(r, req, opts); err != nil {
			var he *HTTPError
			if errors.As(err, &he) {
				return nil, he
			}
			return nil, fmt.Errorf("aisdk: Prepare: %w", err)
		}
	}
	return opts, nil
}

// clientOptions turns the body's tools, system prompt and settings into run
// options.
func (h *core) clientOptions(req *ChatRequest) (*agentloop.RunOptions, error) {
	opts := &agentloop.RunOptions{}
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
		opts.Tools = tools
	}
	if h.AllowClientSystem && req.System != "" {
		opts.System = req.System
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
		opts.Settings = &s
	}
	return opts, nil
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
