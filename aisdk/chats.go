package aisdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/agentloop/agentloop/store"
)

// This file serves the chats of the stored mode to front ends (the chat
// list, one chat's messages, deleting a chat).

// ChatList is the JSON body of GET {prefix}/chats ([ChatServer.Routes]): the
// user's chats (store.Chat.Owner is [ChatServer.Owner]'s), the most recently
// updated first.
type ChatList struct {
	Chats []ChatSummary `json:"chats"`
	// Next is the cursor of the next page, to pass as ?cursor=; absent on
	// the last page.
	Next string `json:"next,omitempty"`
}

// ChatSummary is one chat of a [ChatList].
type ChatSummary struct {
	ID string `json:"id"`
	// Title is the chat's title: the user's (a rename), the one
	// [ChatServer.Title] made after the first answer, or the start of its
	// first user message (see the package documentation); or "".
	Title string `json:"title"`
	// Updated is when the chat was last written (RFC 3339, UTC).
	Updated time.Time `json:"updated"`
}

// ChatView is the JSON body of GET {prefix}/chats/{id} ([ChatServer.Routes]):
// what a front end needs to show a chat on reload.
type ChatView struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Messages are the stored history as the client's messages
	// ([FromHistory]): each tool part in its state (input-available for a
	// browser tool that waits for its output, approval-requested for a
	// call that waits for the user's decision, output-available,
	// output-error or output-denied). A chat whose stored history does not
	// decode has none (its next request starts it afresh).
	Messages []UIMessage `json:"messages"`
	// Streaming is true while a run of the chat is in progress: the front
	// end resumes its stream (GET {prefix}/chat/{id}/stream) to show it.
	Streaming bool `json:"streaming"`
	// LastRun tells how the chat's last run ended: [RunFinished],
	// [RunStopped] or [RunFailed]; "" while a run is in progress, for a
	// chat that never ran on a [ChatServer], when the record of the end
	// could not be written, or when the ChatServer's Store is not also a
	// [store.Docs] (every store.Store is), where the record is kept. A page shows a stopped reply's mark with it
	// after a reload.
	LastRun string `json:"lastRun,omitempty"`
	// Feedback is the user's ratings of the answers shown in Messages, by
	// message id: [RatingUp] or [RatingDown] (PUT
	// {prefix}/chats/{id}/feedback/{message}); absent when there are none.
	// Ratings of answers no longer in the chat (regenerated, or dropped by
	// an edit) are not shown. They are kept in a document of the chat.
	Feedback map[string]string `json:"feedback,omitempty"`
	// Branches are the messages of the chat's other versions: those an
	// edit or a regeneration took out of it, with what followed them,
	// each with the id of the message it follows, parents first; absent
	// when there are none. A page rebuilds its branch picker from them
	// (Messages being the version on screen). They are kept in a document
	// of the chat, up to the 500 newest.
	Branches []BranchMessage `json:"branches,omitempty"`
}

// serveList answers GET {prefix}/chats.
func (h *ChatServer) serveList(w http.ResponseWriter, r *http.Request) {
	if !h.chatsReady(w, r, "") {
		return
	}
	owner, err := h.owner(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := store.ListQuery{Owner: owner, Cursor: r.URL.Query().Get("cursor")}
	if l := r.URL.Query().Get("limit"); l != "" {
		if q.Limit, err = strconv.Atoi(l); err != nil || q.Limit < 1 {
			h.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("limit %q: want a whole number from 1 to %d", l, store.MaxListLimit), nil)
			return
		}
	}
	page, err := h.Store.ListChats(r.Context(), q)
	switch {
	case errors.Is(err, store.ErrInvalid):
		h.refuse(w, r, http.StatusBadRequest, "the cursor is not one this server gave", nil)
		return
	case err != nil:
		h.internalError(w, r, fmt.Errorf("aisdk: listing chats: %w", err))
		return
	}
	out := ChatList{Chats: make([]ChatSummary, 0, len(page.Chats)), Next: page.Next}
	for _, c := range page.Chats {
		out.Chats = append(out.Chats, ChatSummary{ID: c.ID, Title: c.Title, Updated: c.Updated})
	}
	writeJSON(w, out)
}

// serveView answers GET {prefix}/chats/{id}.
func (h *ChatServer) serveView(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !h.chatsReady(w, r, id) {
		return
	}
	c, err := h.Store.GetChat(r.Context(), id)
	var corrupt *store.CorruptError
	switch {
	case errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid):
		h.refuse(w, r, http.StatusNotFound, fmt.Sprintf("no chat %q", id), nil)
		return
	case errors.As(err, &corrupt) && c != nil:
		h.logger().LogAttrs(r.Context(), slog.LevelWarn, "aisdk: the stored chat does not decode",
			slog.String("chat", id), slog.Any("error", err))
	case err != nil:
		h.internalError(w, r, fmt.Errorf("aisdk: loading chat %q: %w", id, err))
		return
	}
	v := ChatView{ID: c.ID, Title: c.Title, Created: c.Created, Updated: c.Updated, Messages: FromHistory(c.History)}
	if v.Messages == nil {
		v.Messages = []UIMessage{}
	}
	if _, err := h.Store.ActiveStream(r.Context(), id); err == nil {
		v.Streaming = true
	} else {
		v.LastRun = h.lastRun(r.Context(), id)
	}
	v.Feedback = h.feedbackOf(r.Context(), id, v.Messages)
	v.Branches = h.branchesOf(r.Context(), id, v.Messages)
	writeJSON(w, v)
}

// serveDelete answers DELETE {prefix}/chats/{id}: 204 once deleted.
func (h *ChatServer) serveDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !h.ready(w, r) || !h.sameOrigin(w, r) || !h.chatsReady(w, r, id) {
		return
	}
	for range maxSetupWrites {
		c, err := h.Store.GetChat(r.Context(), id)
		switch {
		case errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid):
			h.refuse(w, r, http.StatusNotFound, fmt.Sprintf("no chat %q", id), nil)
			return
		case c == nil:
			h.internalError(w, r, fmt.Errorf("aisdk: loading chat %q: %w", id, err))
			return
		}
		// Delete what was read: a run saving meanwhile makes this read
		// again. Deleting the chat ends its run (the run loses its lease).
		err = h.Store.DeleteChat(r.Context(), id, c.Version)
		switch {
		case err == nil, errors.Is(err, store.ErrNotFound):
			w.WriteHeader(http.StatusNoContent)
			return
		case !errors.Is(err, store.ErrConflict):
			h.internalError(w, r, fmt.Errorf("aisdk: deleting chat %q: %w", id, err))
			return
		}
	}
	h.refuse(w, r, http.StatusConflict, fmt.Sprintf("chat %q keeps changing; try again", id), nil)
}

// chatsReady checks what every chats route needs: the authorization to
// use chat id ("" for the list). A request that fails is
// answered, and false returned.
func (h *ChatServer) chatsReady(w http.ResponseWriter, r *http.Request, id string) bool {
	if !h.ready(w, r) {
		return false
	}
	if err := h.authorize(r, id); err != nil {
		h.fail(w, r, err)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}
