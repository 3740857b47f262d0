package aisdk

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/agentloop/agentloop/store"
)

// This file decides who may use a chat: the Handler's authorization hook,
// its loopback-only default, and a hook that gives each user their own
// chats.

// ChatStore is what a [ChatServer] needs of a versioned conversation store
// (package store): the chats, their list and their stream logs. Every
// store.Store (memstore, sqlitestore, pgstore) is one.
type ChatStore interface {
	store.Chats
	store.ChatLister
	store.Streams
}

// authorize runs the authorization for a request on chat chatID ("" for
// the chat list, or a stateless request without an id). It returns nil,
// or the refusal as an *HTTPError.
func (h *core) authorize(r *http.Request, chatID string) error {
	if chatID != "" {
		if err := checkChatID(chatID); err != nil {
			return err
		}
	}
	err := h.Authorize(r, chatID)
	if err == nil {
		return nil
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he
	}
	return &HTTPError{Status: http.StatusForbidden, Message: err.Error()}
}

// checkChatID refuses, with a 400 that names the problem, a chat id that
// no store may hold ([store.CheckID]: 1 to store.MaxIDLen bytes of UTF-8
// without NUL). Every route checks the id with it before anything reads
// the id, so that a bad id is the client's error on all of them.
func checkChatID(id string) error {
	if err := store.CheckID("chat id", id); err != nil {
		detail := strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": ")
		return &HTTPError{Status: http.StatusBadRequest, Message: fmt.Sprintf(
			"the chat id is not valid (%s): a chat id is 1 to %d bytes of UTF-8 without NUL", detail, store.MaxIDLen)}
	}
	return nil
}

// owner returns the owner of the chats the request creates and lists.
func (h *ChatServer) owner(r *http.Request) (string, error) {
	if h.Owner == nil {
		return "", nil
	}
	o, err := h.Owner(r)
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) {
			return "", he
		}
		return "", &HTTPError{Status: http.StatusForbidden, Message: err.Error()}
	}
	return o, nil
}

// LoopbackOnly is the authorization of a [ChatServer] without an
// Authorize hook, for use where the same rule must guard other routes
// (toolstate.WithAuthorize): it allows a request that reached the server
// over a TCP connection to a loopback address (127.0.0.1, ::1) and names
// a loopback host ([LoopbackHost]: localhost, 127.0.0.1, [::1]…), or that
// is served in-process (no connection, as with httptest.NewRecorder), and
// refuses any other with a 403 that says why.
//
// The Host check stops DNS rebinding: a page of another site whose name
// the attacker points at 127.0.0.1 reaches a loopback server from the
// user's browser, as its own origin, so neither the connection's address
// nor a cross-origin check ([Handler.AllowedOrigins], which compares
// Origin with Host) can tell it apart; its Host is the attacker's name.
// Behind a reverse proxy on the same host every request arrives over
// loopback: do not rely on it there.
func LoopbackOnly(r *http.Request, chatID string) error {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return nil
	}
	if tcp, ok := addr.(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		return &HTTPError{Status: http.StatusForbidden, Message: "this server serves its stored chats to loopback connections only: it has no authorization (aisdk.ChatServer.Authorize)"}
	}
	if !LoopbackHost(r.Host) {
		return &HTTPError{Status: http.StatusForbidden, Message: fmt.Sprintf(
			"host %q is not a loopback name or address: this server answers requests for localhost, 127.0.0.1 or [::1] only", r.Host)}
	}
	return nil
}

// LoopbackHost reports whether host (a request's Host, with or without a
// port) names the local machine wherever it is resolved: "localhost" or a
// name under ".localhost" (RFC 6761; browsers resolve them to loopback
// themselves), or a loopback IP address (127.0.0.0/8, ::1). Any other
// name may resolve to anything, loopback included.
func LoopbackHost(host string) bool {
	name := hostName(host)
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// hostName returns the name of a Host header value: without the port and
// the brackets of an IPv6 address, in lower case, without a final dot.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// AllowHosts returns an authorization hook, for [Handler.Authorize] and
// toolstate.WithAuthorize, that allows a request whose Host (its port
// aside, in any case) is one of hosts, and refuses any other with a 403:
// the allowed-hosts list of a server that others reach by name, which
// stops DNS rebinding as [LoopbackOnly] does for a loopback server. A host
// that starts with "." allows the names under it ("." + "example.com"
// allows "chat.example.com", not "example.com"). It checks nothing else:
// combine it with the server's own authorization.
func AllowHosts(hosts ...string) func(r *http.Request, chatID string) error {
	allowed := make([]string, 0, len(hosts))
	for _, h := range hosts {
		if strings.HasPrefix(h, ".") {
			allowed = append(allowed, "."+hostName(h[1:]))
		} else {
			allowed = append(allowed, hostName(h))
		}
	}
	return func(r *http.Request, _ string) error {
		name := hostName(r.Host)
		for _, a := range allowed {
			if name == a || (strings.HasPrefix(a, ".") && strings.HasSuffix(name, a)) {
				return nil
			}
		}
		return &HTTPError{Status: http.StatusForbidden, Message: fmt.Sprintf("host %q is not one this server answers for", r.Host)}
	}
}

// OwnerAuthorizer returns an authorization hook, for [Handler.Authorize]
// and for toolstate.WithAuthorize (they have the same shape), that gives
// each user their own chats. owner names the user of a request (set the
// same func as [ChatServer.Owner], which makes a new chat theirs); its error
// refuses the request (an [*HTTPError] with its status, such as 401, any
// other error with 403).
//
// The hook lets a request use a chat that does not exist yet (the handler
// creates it as the user's) or one whose store.Chat.Owner is the user; a
// chat of another user is a 404 "no chat", as if it did not exist, so
// that its id reveals nothing. The chat list (chatID "") is allowed: it
// shows the user's chats only. A failure to read the store is a 500.
func OwnerAuthorizer(chats store.Chats, owner func(r *http.Request) (string, error)) func(r *http.Request, chatID string) error {
	return func(r *http.Request, chatID string) error {
		user, err := owner(r)
		if err != nil {
			return err
		}
		if chatID == "" {
			return nil
		}
		c, err := chats.GetChat(r.Context(), chatID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil
		case errors.Is(err, store.ErrInvalid) && checkChatID(chatID) != nil:
			return checkChatID(chatID)
		case c == nil && err != nil:
			return &HTTPError{Status: http.StatusInternalServerError, Message: genericErrorText,
				Err: fmt.Errorf("aisdk: reading the owner of chat %q: %w", chatID, err)}
		case c.Owner != user:
			return &HTTPError{Status: http.StatusNotFound, Message: fmt.Sprintf("no chat %q", chatID)}
		}
		return nil
	}
}
