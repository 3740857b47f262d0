package aisdk

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/agentloop/agentloop/store"
)

// How a chat's last run ended, in [ChatView.LastRun].
const (
	RunFinished = "finished" // the run completed its reply
	RunStopped  = "stopped"  // the run was stopped (by the user, or its time limit)
	RunFailed   = "failed"   // the run failed
)

// runEndDoc names the chat document ([store.Docs]) in which a
// [ChatServer] records how the chat's last run ended. The store's stream
// records end too, but they are deleted ([store.Streams.DeleteEndedStreams])
// and are not found by chat once ended, so the view reads this document.
const runEndDoc = "aisdk.run"

// lastRunState maps a stream's end state to [ChatView.LastRun].
func lastRunState(s store.StreamState) string {
	switch s {
	case store.StreamDone:
		return RunFinished
	case store.StreamCancelled:
		return RunStopped
	default:
		return RunFailed
	}
}

// recordRunEnd writes the chat's run-end document, retrying a version
// conflict ([store.UpdateDoc]); any other failure is logged, and the chat's
// view then shows the previous run's end (or none). A chat deleted
// meanwhile is not an error.
func (h *ChatServer) recordRunEnd(ctx context.Context, chatID string, state store.StreamState) {
	docs, ok := h.Store.(store.Docs)
	if !ok {
		return
	}
	data, _ := json.Marshal(struct {
		State string `json:"state"`
	}{lastRunState(state)})
	_, err := store.UpdateDoc(ctx, docs, chatID, runEndDoc, func(d *store.Doc) error {
		d.Data = data
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.logger().LogAttrs(ctx, slog.LevelWarn, "aisdk: recording how a run ended failed",
			slog.String("chat", chatID), slog.Any("error", err))
	}
}

// lastRun reads the chat's run-end document: "" when there is none.
func (h *ChatServer) lastRun(ctx context.Context, chatID string) string {
	docs, ok := h.Store.(store.Docs)
	if !ok {
		return ""
	}
	d, err := docs.GetDoc(ctx, chatID, runEndDoc)
	if err != nil {
		return ""
	}
	var v struct {
		State string `json:"state"`
	}
	if json.Unmarshal(d.Data, &v) != nil {
		return ""
	}
	switch v.State {
	case RunFinished, RunStopped, RunFailed:
		return v.State
	}
	return ""
}
