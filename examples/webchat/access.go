package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentloop/agentloop/aisdk"
)

// This file decides who may use the server: which Host names it answers
// for (DNS rebinding) and which origins may change anything (CSRF), for
// every route alike.

// access is the server's one rule for who may use it.
type access struct {
	// authorize guards every route that names a chat (the chat routes and
	// the tool states) and, with chat id "", every other route.
	authorize func(r *http.Request, chatID string) error
	// origins refuses a browser's cross-origin request that changes
	// something, on every route.
	origins *http.CrossOriginProtection
}

// newAccess returns the rule cfg asks for: a loopback server answers for
// loopback names only (aisdk.LoopbackOnly); a -public one for the
// -allowed-hosts, or for any Host without them. Only the page's own origin
// may post, delete or reset.
func newAccess(cfg config) access {
	a := access{origins: http.NewCrossOriginProtection()}
	switch {
	case !cfg.public:
		a.authorize = aisdk.LoopbackOnly
	case len(cfg.allowedHosts) > 0:
		a.authorize = aisdk.AllowHosts(cfg.allowedHosts...)
	default:
		a.authorize = func(*http.Request, string) error { return nil }
	}
	a.origins.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusForbidden, fmt.Sprintf("cross-origin request from %q refused: the origin is not allowed", r.Header.Get("Origin")))
	}))
	return a
}

// guard serves next to the requests the rule allows, and refuses the others
// with a JSON error (403, or the status of an aisdk.HTTPError).
func (a access) guard(next http.Handler) http.Handler {
	return a.origins.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.authorize(r, ""); err != nil {
			status := http.StatusForbidden
			var he *aisdk.HTTPError
			if errors.As(err, &he) {
				status = he.Status
			}
			writeJSONError(w, status, err.Error())
			return
		}
		next.ServeHTTP(w, r)
	}))
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// hostList is the value of -allowed-hosts: host names separated by commas.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name == "" {
			return errors.New("an empty host name")
		}
		*h = append(*h, name)
	}
	return nil
}
