package telemetry

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop"
)

// beforeToolCall opens the execute_tool span of a call. It runs on the
// call's goroutine, concurrently with the run's other calls; the span's
// parent is the run's span, whatever runs beside it.
func (r *recorder) beforeToolCall(ctx context.Context, call *agentloop.ToolCall) (*agentloop.ToolResult, error) {
	st := r.runOf(ctx)
	if st == nil {
		return nil, nil
	}
	t := r.startTool(ctx, st, *call, time.Now())
	st.mu.Lock()
	st.tools[call.ID] = t
	st.mu.Unlock()
	return nil, nil
}

// toolContext puts the call's execute_tool span in the context its tool
// func gets, so the spans the tool makes nest under it.
func (r *recorder) toolContext(ctx context.Context, call agentloop.ToolCall) context.Context {
	st := r.runOf(ctx)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	t, ok := st.tools[call.ID]
	st.mu.Unlock()
	if !ok {
		return nil
	}
	return trace.ContextWithSpan(ctx, t.span)
}

func (r *recorder) startTool(ctx context.Context, st *run, call agentloop.ToolCall, start time.Time) toolSpan {
	attrs := []attribute.KeyValue{
		keyOperationName.String(opExecuteTool),
		keyToolName.String(call.Name),
		keyToolCallID.String(call.ID),
	}
	if d := st.description(call.Name); d != "" {
		attrs = append(attrs, keyToolDescription.String(d))
	}
	_, span := r.tracer.Start(ctx, spanName(opExecuteTool, call.Name),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return toolSpan{span: span, start: start}
}

// afterToolCall ends the execute_tool span of a call with its result. A
// call whose BeforeToolCall did not reach these hooks (an earlier hook
// substituted a result) gets a span of its own, that starts here.
func (r *recorder) afterToolCall(ctx context.Context, call agentloop.ToolCall, res *agentloop.ToolResult) error {
	st := r.runOf(ctx)
	if st == nil {
		return nil
	}
	now := time.Now()
	st.mu.Lock()
	t, ok := st.tools[call.ID]
	delete(st.tools, call.ID)
	st.mu.Unlock()
	if !ok {
		t = r.startTool(ctx, st, call, now)
	}
	span := t.span
	if r.content != nil && span.IsRecording() {
		if args, ok := r.content.toolArgs(ctx, call); ok {
			span.SetAttributes(keyToolCallArguments.String(args))
		}
		if !res.IsError {
			if out, ok := r.content.toolResult(ctx, *res); ok {
				span.SetAttributes(keyToolCallResult.String(out))
			}
		}
	}
	var errType string
	if res.IsError {
		err := res.Err
		if err == nil { // a result written by a hook or the caller
			err = errors.New(res.Content)
		}
		errType = errorType(res.Err)
		setError(span, errType, err)
	}
	span.End()
	r.duration.Record(ctx, now.Sub(t.start).Seconds(), measured(st.toolSet(call.Name), errType))
	return nil
}

// description returns the description of the named tool: as offered on the
// last model call, or, before any (an approved call that a resumed run
// runs first), as the agent has it.
func (st *run) description(name string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, d := range st.defs {
		if d.Name == name {
			return d.Description
		}
	}
	if st.defs == nil {
		for _, t := range st.agentTools {
			if t != nil && t.Name == name {
				return t.Description
			}
		}
	}
	return ""
}
