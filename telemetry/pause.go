package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop/store"
)

// PauseDoc is the name of the document in which [Options.Pauses] keeps a
// conversation's paused run: the span of the latest run of the
// conversation that paused, and the ids of the calls it waits for. It is a
// document of the chat with the conversation's id, deleted with the chat,
// or, for a conversation that is no chat of the store, the document of no
// chat named store.ChatlessName(id, PauseDoc) (see
// [store.UpdateConversationDoc]). Runs without a conversation id share the
// conversation id "": only the latest of them that paused is linked, so
// pass a conversation id.
const PauseDoc = "telemetry.pause"

// pauseRecord is the JSON of a [PauseDoc] document.
type pauseRecord struct {
	TraceID    string   `json:"traceId"`
	SpanID     string   `json:"spanId"`
	TraceFlags byte     `json:"traceFlags"`
	TraceState string   `json:"traceState,omitempty"`
	Calls      []string `json:"calls"` // the ids of the calls the run waits for
}

// savePause replaces the conversation's record with the span of a run that
// paused for calls.
func savePause(ctx context.Context, docs store.Docs, conversationID string, sc trace.SpanContext, calls []string) error {
	data, err := json.Marshal(pauseRecord{
		TraceID:    sc.TraceID().String(),
		SpanID:     sc.SpanID().String(),
		TraceFlags: byte(sc.TraceFlags()),
		TraceState: sc.TraceState().String(),
		Calls:      calls,
	})
	if err != nil {
		return err
	}
	_, err = store.UpdateConversationDoc(ctx, docs, conversationID, PauseDoc, func(d *store.Doc) error {
		d.Data = data
		return nil
	})
	return err
}

// loadPause returns the span of the conversation's paused run if it waited
// for one of calls, and an invalid SpanContext when there is none.
func loadPause(ctx context.Context, docs store.Docs, conversationID string, calls []string) (trace.SpanContext, error) {
	d, err := store.GetConversationDoc(ctx, docs, conversationID, PauseDoc)
	if errors.Is(err, store.ErrNotFound) {
		return trace.SpanContext{}, nil
	}
	if err != nil {
		return trace.SpanContext{}, err
	}
	var rec pauseRecord
	if err := json.Unmarshal(d.Data, &rec); err != nil {
		return trace.SpanContext{}, fmt.Errorf("telemetry: the paused run of conversation %q does not decode: %w", conversationID, err)
	}
	if !slices.ContainsFunc(calls, func(id string) bool { return slices.Contains(rec.Calls, id) }) {
		return trace.SpanContext{}, nil
	}
	tid, err := trace.TraceIDFromHex(rec.TraceID)
	if err != nil {
		return trace.SpanContext{}, fmt.Errorf("telemetry: the paused run of conversation %q: %w", conversationID, err)
	}
	sid, err := trace.SpanIDFromHex(rec.SpanID)
	if err != nil {
		return trace.SpanContext{}, fmt.Errorf("telemetry: the paused run of conversation %q: %w", conversationID, err)
	}
	ts, err := trace.ParseTraceState(rec.TraceState)
	if err != nil {
		ts = trace.TraceState{} // the state is optional; the link is not
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(rec.TraceFlags), TraceState: ts, Remote: true}), nil
}
