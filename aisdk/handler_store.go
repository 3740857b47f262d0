package aisdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentloop/agentloop"
)

// This file is the Handler's stored mode: the stored history reconciled
// with a request, the run's history saved, one run per chat.

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
