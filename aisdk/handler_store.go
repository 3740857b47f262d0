package aisdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// This file is the Handler's stored mode, up to the run: the request
// reconciled with the stored chat, the chat's stream lease taken (one run
// per chat on every replica; a newer request stops the run in progress),
// and the request's additions saved before the run starts.

// maxSetupWrites bounds the read-reconcile-write attempts of one request
// whose writes keep meeting other writers.
const maxSetupWrites = 5

// writeTimeout bounds each store call a run makes on its own behalf (a
// save, a log append), since those no longer depend on the request.
const writeTimeout = 30 * time.Second

func (h *Handler) streamLease() time.Duration {
	if h.StreamLease > 0 {
		return h.StreamLease
	}
	return DefaultStreamLease
}

// serveStored serves a chat POST in the stored mode.
func (h *Handler) serveStored(w http.ResponseWriter, r *http.Request, req *ChatRequest, opts []agentloop.Option) {
	ctx := r.Context()
	owner, err := h.owner(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// Refuse a request that does not fit the chat before writing anything,
	// unless a run of the chat is in progress: the client may have seen
	// the run's turn in flight, which is not saved yet. The run is stopped
	// below, and the request checked again once it saved its history.
	chat, history, err := h.loadAndReconcile(r, req)
	if err != nil {
		var he *HTTPError
		if !errors.As(err, &he) || he.Status != http.StatusConflict || !h.hasRun(ctx, req.ID) {
			h.fail(w, r, err)
			return
		}
	}
	created := false
	if err == nil && chat.Version == 0 {
		chat.Owner, chat.Title, chat.History = owner, chatTitle(history), history
		err := h.Store.PutChat(ctx, chat)
		switch {
		case err == nil:
			created = true
		case errors.Is(err, store.ErrConflict):
			// Another request made the chat meanwhile: it is no longer
			// new, so ask again whether this request may use it.
			if err := h.authorize(r, req.ID); err != nil {
				h.fail(w, r, err)
				return
			}
		default:
			h.internalError(w, r, fmt.Errorf("aisdk: creating chat %q: %w", req.ID, err))
			return
		}
	}
	lease, err := h.takeStream(ctx, req.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !created {
		// Under the lease nobody else runs the chat: read it again (a run
		// may have ended since the first read) and save the request's
		// additions with the version read.
		if chat, history, err = h.saveRequest(r, req); err != nil {
			h.endSetup(r, lease)
			h.fail(w, r, err)
			return
		}
	}

	var messageID string
	if req.Messages[len(req.Messages)-1].Role == "assistant" {
		// A continuation goes on with the stored assistant message.
		if i := lastAssistant(history); i >= 0 && history[i].ID != "" {
			messageID = history[i].ID
		} else {
			messageID = req.Messages[len(req.Messages)-1].ID
		}
	} else {
		messageID = h.newMessageID()
	}
	sr := newStoredRun(h, r, *chat, lease, history, messageID)
	h.stream(w, r, req, history, opts, messageID, sr)
}

// hasRun reports whether the chat has a run in progress.
func (h *Handler) hasRun(ctx context.Context, chatID string) bool {
	_, err := h.Store.ActiveStream(ctx, chatID)
	return err == nil
}

// loadAndReconcile reads the chat (a new one has Version 0) and returns it
// with the history the request runs on. Refusals are *HTTPErrors.
func (h *Handler) loadAndReconcile(r *http.Request, req *ChatRequest) (*store.Chat, agentloop.History, error) {
	chat, err := h.Store.GetChat(r.Context(), req.ID)
	var stored agentloop.History
	var corrupt *store.CorruptError
	switch {
	case errors.Is(err, store.ErrNotFound):
		chat = &store.Chat{ID: req.ID}
	case errors.As(err, &corrupt) && chat != nil:
		// The stored history does not decode: the chat starts afresh from
		// the request's new user message, written over the corrupt one.
		h.logger().LogAttrs(r.Context(), slog.LevelWarn, "aisdk: the stored chat does not decode; it starts afresh",
			slog.String("chat", req.ID), slog.Any("error", err))
		last := req.Messages[len(req.Messages)-1]
		if last.Role != "user" {
			return nil, nil, &HTTPError{Status: http.StatusConflict, Message: fmt.Sprintf("chat %q could not be read and starts afresh: send a new message", req.ID)}
		}
		fresh := *req
		fresh.Messages, fresh.Trigger, fresh.MessageID = []UIMessage{last}, TriggerSubmit, ""
		req = &fresh
	case err != nil:
		return nil, nil, fmt.Errorf("aisdk: loading chat %q: %w", req.ID, err)
	default:
		stored = chat.History
	}
	history, err := Reconcile(stored, req)
	switch {
	case errors.Is(err, ErrConflict):
		return nil, nil, &HTTPError{Status: http.StatusConflict, Message: err.Error()}
	case err != nil:
		return nil, nil, &HTTPError{Status: http.StatusBadRequest, Message: err.Error()}
	}
	return chat, history, nil
}

// saveRequest reads the chat, reconciles the request with it and saves the
// result, with the version read, trying again when another writer got in
// between.
func (h *Handler) saveRequest(r *http.Request, req *ChatRequest) (*store.Chat, agentloop.History, error) {
	for range maxSetupWrites {
		chat, history, err := h.loadAndReconcile(r, req)
		if err != nil {
			return nil, nil, err
		}
		if chat.Version == 0 {
			return nil, nil, &HTTPError{Status: http.StatusConflict, Message: fmt.Sprintf("chat %q was deleted while this request was being served", req.ID)}
		}
		chat.History = history
		if chat.Title == "" {
			chat.Title = chatTitle(history)
		}
		err = h.Store.PutChat(r.Context(), chat)
		if err == nil {
			return chat, history, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return nil, nil, fmt.Errorf("aisdk: saving chat %q: %w", req.ID, err)
		}
	}
	return nil, nil, &HTTPError{Status: http.StatusConflict, Message: fmt.Sprintf("chat %q keeps changing while this request is saved; try again", req.ID)}
}

// takeStream takes the chat's stream lease. When a run of the chat is in
// progress (on this replica or another), the newest request wins: it asks
// that run to stop, waits for its end (it saves the chat first), and
// takes the lease then.
func (h *Handler) takeStream(ctx context.Context, chatID string) (store.Lease, error) {
	for range 3 {
		l, err := h.Store.StartStream(ctx, chatID, h.streamLease())
		var active *store.ActiveStreamError
		if !errors.As(err, &active) {
			if errors.Is(err, store.ErrNotFound) {
				return l, &HTTPError{Status: http.StatusConflict, Message: fmt.Sprintf("chat %q was deleted while this request was being served", chatID)}
			}
			if err != nil {
				return l, fmt.Errorf("aisdk: starting the stream of chat %q: %w", chatID, err)
			}
			return l, nil
		}
		h.logger().LogAttrs(ctx, slog.LevelInfo, "aisdk: a new request stops the chat's run in progress",
			slog.String("chat", chatID), slog.String("stream", active.StreamID))
		if err := h.Store.StopStream(ctx, chatID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return l, fmt.Errorf("aisdk: stopping the run of chat %q: %w", chatID, err)
		}
		if err := h.waitStreamEnd(ctx, active.StreamID, 2*h.streamLease()); err != nil {
			if ctx.Err() != nil {
				return l, ctx.Err()
			}
			return l, &HTTPError{Status: http.StatusConflict, Message: fmt.Sprintf("chat %q has a run in progress that did not stop in time; try again later", chatID), Err: err}
		}
	}
	return store.Lease{}, &HTTPError{Status: http.StatusConflict, Message: fmt.Sprintf("chat %q keeps getting new runs; try again", chatID)}
}

// waitStreamEnd follows the stream until it ends (its holder ended it, or
// its lease ran out), for at most d.
func (h *Handler) waitStreamEnd(ctx context.Context, streamID string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	s, err := h.Store.GetStream(ctx, streamID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, err := range h.Store.ReadStream(ctx, streamID, s.Len) {
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// endSetup ends the stream of a request refused after it took the lease.
func (h *Handler) endSetup(r *http.Request, l store.Lease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), writeTimeout)
	defer cancel()
	if err := h.Store.EndStream(ctx, l, store.StreamFailed); err != nil && !errors.Is(err, store.ErrLeaseLost) {
		h.logger().LogAttrs(ctx, slog.LevelError, "aisdk: ending a stream", slog.String("chat", l.ChatID), slog.Any("error", err))
	}
}
