package aisdk

import (
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/agentloop/agentloop/store"
)

// This file decides who may use a chat: the Handler's authorization hook,
// its loopback-only default, and a hook that gives each user their own
// chats.

// ChatStore is what a [Handler] needs of a versioned conversation store
// (package store): the chats, their list and their stream logs. Every
// store.Store (memstore, sqlitestore, pgstore) is one.
type ChatStore interface {
	store.Chats
	store.ChatLister
	store.Streams
}

// authorize runs the Handler's authorization for a request on chat chatID
// ("" for the chat list). It returns nil, or the refusal as an *HTTPError.
func (h *Handler) authorize(r *http.Request, chatID string) error {
	var err error
	switch {
	case h.Authorize != nil:
		err = h.Authorize(r, chatID)
	case h.Store != nil:
		err = LoopbackOnly(r, chatID)
	}
	if err == nil {
		return nil
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he
	}
	return &HTTPError{Status: http.StatusForbidden, Message: err.Error()}
}

// owner returns the owner of the chats the request creates and lists.
func (h *Handler) owner(r *http.Request) (string, error) {
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

// LoopbackOnly is the authorization of a [Handler] with a Store and no
// Authorize hook, for use where the same rule must guard other routes
// (toolstate.WithAuthorize): it allows a request that reached the server
// over a TCP connection to a loopback address (127.0.0.1, ::1), or that is
// served in-process (no connection, as with httptest.NewRecorder), and
// refuses any other with a 403 that says why. Behind a reverse proxy on
// the same host every request arrives over loopback: do not rely on it
// there.
func LoopbackOnly(r *http.Request, chatID string) error {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return nil
	}
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		return nil
	}
	return &HTTPError{Status: http.StatusForbidden, Message: "this server serves its stored chats to loopback connections only: it has no authorization (aisdk.Handler.Authorize)"}
}

// OwnerAuthorizer returns an authorization hook, for [Handler.Authorize]
// and for toolstate.WithAuthorize (they have the same shape), that gives
// each user their own chats. owner names the user of a request (set the
// same func as [Handler.Owner], which makes a new chat theirs); its error
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
		case c == nil && err != nil:
			return &HTTPError{Status: http.StatusInternalServerError, Message: genericErrorText,
				Err: fmt.Errorf("aisdk: reading the owner of chat %q: %w", chatID, err)}
		case c.Owner != user:
			return &HTTPError{Status: http.StatusNotFound, Message: fmt.Sprintf("no chat %q", chatID)}
		}
		return nil
	}
}
