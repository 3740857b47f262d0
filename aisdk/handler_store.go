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

// This file is the ChatServer's chat POST, up to the run: the request
// reconciled with the stored chat, the chat's stream lease taken (one run
// per chat on every replica; a newer request stops the run in progress),
// and the request's additions saved before the run starts.

// maxSetupWrites bounds the read-reconcile-write attempts of one request
// whose writes keep meeting other writers.
const maxSetupWrites = 5

// writeTimeout bounds each store call a run makes on its own behalf (a
// save, a log append), since those no longer depend on the request.
const writeTimeout = 30 * time.Second

func (h *ChatServer) streamLease() time.Duration {
	if h.StreamLease > 0 {
		return h.StreamLease
	}
	return DefaultStreamLease
}

// serveStored serves a chat POST in the stored mode.
func (h *ChatServer) serveStored(w http.ResponseWriter, r *http.Request, req *ChatRequest, opts *agentloop.RunOptions) {
	ctx := r.Context()
	owner, err := h.owner(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The run in progress when the request came, if any: the only one it
	// may stop (newer runs were started by requests that came since).
	var inProgress string
	if s, err := h.Store.ActiveStream(ctx, req.ID); err == nil {
		inProgress = s.ID
	}
	// Refuse a request that does not fit the chat before writing or
	// stopping anything.
	chat, history, unchanged, err := h.loadAndReconcile(r, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if unchanged && (inProgress != "" || endsAnswered(history)) {
		// A repeat of a request the chat already has (a retry whose first
		// attempt was saved, a decision posted twice): nothing runs.
		h.serveRepeat(w, r, req, history, inProgress)
		return
	}
	created := false
	if chat.Version == 0 {
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
	lease, err := h.takeStream(ctx, req.ID, inProgress, func() error {
		_, _, _, err := h.loadAndReconcile(r, req)
		return err
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !created {
		// Under the lease nobody else runs the chat: read it again (a run
		// may have ended since the first read) and save the request's
		// additions with the version read.
		var repeat bool
		if chat, history, repeat, err = h.saveRequest(r, req); err != nil || repeat {
			h.endSetup(r, lease)
			if err != nil {
				h.fail(w, r, err)
			} else {
				// A run that came first answered the same request.
				h.serveRepeat(w, r, req, history, "")
			}
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
	if h.Runner != nil {
		h.serveDurable(w, r, req, *chat, lease, history, opts, messageID)
		return
	}
	sr := newStoredRun(r.Context(), h, *chat, lease, history, messageID)
	h.stream(w, r, req, history, opts, h.newMapper(messageID), sr)
}

// loadAndReconcile reads the chat (a new one has Version 0) and returns it
// with the history the request runs on, and whether that is the stored
// history unchanged (the request adds nothing: see reconcileRequest).
// Refusals are *HTTPErrors.
func (h *ChatServer) loadAndReconcile(r *http.Request, req *ChatRequest) (*store.Chat, agentloop.History, bool, error) {
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
			return nil, nil, false, &HTTPError{Status: http.StatusConflict, Message: fmt.Sprintf("chat %q could not be read and starts afresh: send a new message", req.ID)}
		}
		fresh := *req
		fresh.Messages, fresh.Trigger, fresh.MessageID = []UIMessage{last}, TriggerSubmit, ""
		req = &fresh
	case err != nil:
		return nil, nil, false, fmt.Errorf("aisdk: loading chat %q: %w", req.ID, err)
	default:
		stored = chat.History
	}
	history, unchanged, err := reconcileRequest(stored, req)
	switch {
	case errors.Is(err, ErrChatMismatch):
		return nil, nil, false, &HTTPError{Status: http.StatusConflict, Message: err.Error()}
	case err != nil:
		return nil, nil, false, &HTTPError{Status: http.StatusBadRequest, Message: err.Error()}
	}
	return chat, history, unchanged && chat.Version != 0, nil
}

// saveRequest reads the chat, reconciles the request with it and saves the
// result, with the version read, trying again when another writer got in
// between. It reports a request that a run before it already answered
// (the stored history unchanged and answered) as a repeat, saving
// nothing.
func (h *ChatServer) saveRequest(r *http.Request, req *ChatRequest) (*store.Chat, agentloop.History, bool, error) {
	for range maxSetupWrites {
		chat, history, unchanged, err := h.loadAndReconcile(r, req)
		if err != nil {
			return nil, nil, false, err
		}
		if chat.Version == 0 {
			return nil, nil, false, &HTTPError{Status: http.StatusConflict, Message: fmt.Sprintf("chat %q was deleted while this request was being served", req.ID)}
		}
		if unchanged && endsAnswered(history) {
			return chat, history, true, nil
		}
		dropped := droppedBranch(chat.History, history)
		chat.History = history
		if chat.Title == "" {
			chat.Title = chatTitle(history)
		}
		err = h.Store.PutChat(r.Context(), chat)
		if err == nil {
			h.keepBranch(r.Context(), req.ID, dropped)
			return chat, history, false, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return nil, nil, false, fmt.Errorf("aisdk: saving chat %q: %w", req.ID, err)
		}
	}
	return nil, nil, false, &HTTPError{Status: http.StatusConflict, Message: fmt.Sprintf("chat %q keeps changing while this request is saved; try again", req.ID)}
}

// takeStream takes the chat's stream lease, waiting for the runs of the
// chat to end: the newest request wins, so the run that was in progress
// when the request came (inProgress, "" for none) is asked to stop first;
// a run that started since (another request that came at the same time)
// is not stopped but waited for, so that concurrent requests run one after
// the other, each to its end. Before it stops a run it calls check, which
// checks the request against the chat as it is now (the run, or the
// request that started it, may have saved since the request was first
// checked); check's error is returned, and nothing stopped. It gives up
// only when ctx is done (the client went away) or the store fails.
func (h *ChatServer) takeStream(ctx context.Context, chatID, inProgress string, check func() error) (store.Lease, error) {
	for {
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
		if active.StreamID == inProgress {
			if err := check(); err != nil {
				return l, err
			}
			h.logger().LogAttrs(ctx, slog.LevelInfo, "aisdk: a new request stops the chat's run in progress",
				slog.String("chat", chatID), slog.String("stream", active.StreamID))
			if err := h.Store.StopStream(ctx, chatID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return l, fmt.Errorf("aisdk: stopping the run of chat %q: %w", chatID, err)
			}
		}
		if err := h.waitStreamEnd(ctx, active.StreamID); err != nil {
			if ctx.Err() != nil {
				return l, ctx.Err()
			}
			return l, fmt.Errorf("aisdk: waiting for the run of chat %q: %w", chatID, err)
		}
	}
}

// waitStreamEnd follows the stream until it ends (its holder ended it, or
// its lease ran out).
func (h *ChatServer) waitStreamEnd(ctx context.Context, streamID string) error {
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
func (h *ChatServer) endSetup(r *http.Request, l store.Lease) {
	h.endStream(context.WithoutCancel(r.Context()), l, store.StreamFailed)
}
