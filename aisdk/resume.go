package aisdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentloop/agentloop/store"
)

// This file serves useChat's resume request and the stop request of the
// stored mode.

// interruptedText ends a resumed stream whose run stopped without ending
// its response: its server died (the lease ran out) or could no longer
// write the log.
const interruptedText = "The answer was interrupted: the server writing it stopped."

// serveResume answers GET …/{chatID}/stream: the chat's active stream,
// replayed from its start and followed live to its end, or 204 No Content
// when there is none.
func (h *ChatServer) serveResume(w http.ResponseWriter, r *http.Request) {
	chatID := r.PathValue("id")
	if !h.ready(w, r) {
		return
	}
	release, ok := h.running(w, r)
	if !ok {
		return
	}
	defer release()
	if err := h.authorize(r, chatID); err != nil {
		h.fail(w, r, err)
		return
	}
	s, err := h.Store.ActiveStream(r.Context(), chatID)
	switch {
	case errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid):
		w.WriteHeader(http.StatusNoContent)
		return
	case err != nil:
		h.internalError(w, r, fmt.Errorf("aisdk: finding the stream of chat %q: %w", chatID, err))
		return
	}
	h.followStream(w, r, chatID, s.ID, 0)
}

// followStream streams the stream streamID of chat chatID: replayed from
// its start, then followed live to its end. The restated chunks that
// follow the start chunk (restated of them: the parts of the message the
// stream continues, which a client that posted the message has) are left
// out.
func (h *ChatServer) followStream(w http.ResponseWriter, r *http.Request, chatID, streamID string, restated int) {
	type read struct {
		data []byte
		err  error
	}
	ctx, cancelCause := context.WithCancelCause(r.Context())
	defer h.runs.onShutdown(cancelCause)()
	cancel := func() { cancelCause(context.Canceled) }
	reads := make(chan read, 64)
	go func() {
		defer close(reads)
		for c, err := range h.Store.ReadStream(ctx, streamID, 0) {
			select {
			case reads <- read{c.Data, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		cancel()
		for range reads { // let the reader end
		}
	}()

	sw := h.newWriter(w)
	var tick <-chan time.Time
	if ka := h.KeepAlive; ka >= 0 {
		if ka == 0 {
			ka = DefaultKeepAlive
		}
		t := time.NewTicker(ka)
		defer t.Stop()
		tick = t.C
	}
	var last []byte
	n := 0 // the chunks read
	wrote := true
	for {
		select {
		case rd, ok := <-reads:
			if !ok {
				if !isTerminal(last) {
					// The run ended without ending its response.
					_ = sw.WriteChunk(ErrorChunk{ErrorText: interruptedText})
				}
				_ = sw.Close()
				return
			}
			if rd.err != nil {
				if ctx.Err() == nil {
					h.logger().LogAttrs(ctx, slog.LevelError, "aisdk: reading a stream log failed",
						slog.String("chat", chatID), slog.String("stream", streamID), slog.Any("error", rd.err))
					if !isTerminal(last) {
						_ = sw.WriteChunk(ErrorChunk{ErrorText: h.errorText(rd.err)})
					}
					_ = sw.Close()
				}
				return
			}
			last = rd.data
			if n++; n > 1 && n <= 1+restated {
				continue
			}
			if sw.writeData(rd.data) != nil {
				return
			}
			wrote = true
			if len(reads) == 0 && sw.Flush() != nil {
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

// isTerminal reports whether a logged chunk ends a response: finish, error
// or abort.
func isTerminal(data []byte) bool {
	if !bytes.Contains(data, []byte(`"type"`)) {
		return false
	}
	var c struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &c) != nil {
		return false
	}
	switch c.Type {
	case "finish", "error", "abort":
		return true
	}
	return false
}

// serveStop answers POST …/{chatID}/stop: the chat's run in progress is
// asked to stop, on whichever replica runs it (202 Accepted); 404 when it
// has none.
func (h *ChatServer) serveStop(w http.ResponseWriter, r *http.Request) {
	chatID := r.PathValue("id")
	if !h.ready(w, r) || !h.sameOrigin(w, r) {
		return
	}
	if err := h.authorize(r, chatID); err != nil {
		h.fail(w, r, err)
		return
	}
	err := h.Store.StopStream(r.Context(), chatID)
	switch {
	case errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid):
		h.refuse(w, r, http.StatusNotFound, fmt.Sprintf("chat %q has no run in progress", chatID), nil)
	case err != nil:
		h.internalError(w, r, fmt.Errorf("aisdk: stopping the run of chat %q: %w", chatID, err))
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}
