package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Keys of the attributes LogHandler adds.
const (
	LogKeyTraceID = "trace_id"
	LogKeySpanID  = "span_id"
)

// LogHandler returns a slog.Handler that adds the trace id and span id of
// the span in each record's context (LogKeyTraceID, LogKeySpanID, in hex)
// to the record, then passes it to next. Records logged without a context,
// or with one that holds no valid span, pass unchanged. Give it to
// [agentloop.Agent.Logger]: the loop logs with the run's context, so tool
// panics and hook errors carry the ids of the run's span. Like any
// slog.Handler it is safe for concurrent use if next is; the ids go into
// the group the handler is in (after WithGroup), as every added attribute
// does.
func LogHandler(next slog.Handler) slog.Handler {
	return logHandler{next: next}
}

type logHandler struct{ next slog.Handler }

func (h logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			r = r.Clone()
			r.AddAttrs(slog.String(LogKeyTraceID, sc.TraceID().String()), slog.String(LogKeySpanID, sc.SpanID().String()))
		}
	}
	return h.next.Handle(ctx, r)
}

func (h logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{next: h.next.WithAttrs(attrs)}
}

func (h logHandler) WithGroup(name string) slog.Handler {
	return logHandler{next: h.next.WithGroup(name)}
}
