package telemetry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop"
)

// runStart opens the run's invoke_agent span and puts it, with the run's
// state, in the context the run uses from then on.
func (r *recorder) runStart(ctx context.Context, start agentloop.RunStart) (context.Context, error) {
	a := start.Agent
	st := &run{
		start:          time.Now(),
		log:            r.log,
		info:           modelInfo(a.Model),
		conversationID: start.ConversationID,
		tools:          make(map[string]toolSpan),
		agentTools:     a.Tools,
	}
	if st.log == nil {
		st.log = a.Logger
	}
	st.initSets()
	attrs := st.genAIAttrs(opInvokeAgent)
	if a.Name != "" {
		attrs = append(attrs, keyAgentName.String(a.Name))
	}
	if st.conversationID != "" {
		attrs = append(attrs, keyConversationID.String(st.conversationID))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	if start.Resumed {
		attrs = append(attrs, keyRunResumed.Bool(true))
		opts = append(opts, trace.WithLinks(r.pausedRuns(ctx, st, start.History)...))
	}
	ctx, st.span = r.tracer.Start(ctx, spanName(opInvokeAgent, a.Name), append(opts, trace.WithAttributes(attrs...))...)
	if r.content != nil && st.span.IsRecording() {
		st.span.SetAttributes(keyInputMessages.String(r.content.input(ctx, start.History)))
	}
	return context.WithValue(context.WithValue(ctx, anyRunKey{}, st), runKey{r}, st), nil
}

// pausedRuns returns links to the spans of the runs that paused for the
// calls of the last assistant message of h, which a resumed run continues.
func (r *recorder) pausedRuns(ctx context.Context, st *run, h agentloop.History) []trace.Link {
	var calls []agentloop.ToolCall
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == agentloop.RoleAssistant {
			calls = h[i].ToolCalls()
			break
		}
	}
	if r.pauses == nil || len(calls) == 0 {
		return nil
	}
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.ID
	}
	sc, err := loadPause(ctx, r.pauses, st.conversationID, ids)
	if err != nil {
		st.logf(ctx, "telemetry: could not load the span of a paused run; the resumed run is not linked to it",
			"calls", ids, "err", err)
		return nil
	}
	if !sc.IsValid() {
		return nil
	}
	return []trace.Link{{SpanContext: sc, Attributes: []attribute.KeyValue{keyLinkPaused.Bool(true)}}}
}

// runEnd ends the run's span: with an error status for a failed run, with
// agentloop.run.paused for a paused one (and saves it for the run that
// resumes it).
func (r *recorder) runEnd(ctx context.Context, end agentloop.RunEnd) {
	st := r.runOf(ctx)
	if st == nil {
		return
	}
	now := time.Now()
	st.endLeftovers()
	span := st.span
	span.SetAttributes(usageAttrs(end.Usage)...)
	span.SetAttributes(keyRunTurns.Int(end.Turns))
	var errType string
	switch last := end.Last.(type) {
	case nil:
		err := end.Err
		if err == nil {
			err = errors.New("the run ended without a result")
		}
		errType = errorType(err)
		setError(span, errType, err)
	case agentloop.Pending:
		r.paused(ctx, st, last)
	case agentloop.Final:
		if r.content != nil && span.IsRecording() && len(last.History) > 0 {
			m := last.History[len(last.History)-1]
			span.SetAttributes(keyOutputMessages.String(r.content.output(ctx, m, st.lastFinish)))
		}
	}
	span.End()
	r.duration.Record(ctx, now.Sub(st.start).Seconds(), measured(st.runSet, errType))
}

// paused marks the span of a run that ended with p and saves it under the
// keys of the calls p waits for.
func (r *recorder) paused(ctx context.Context, st *run, p agentloop.Pending) {
	ids := make([]string, 0, len(p.ClientCalls)+len(p.Approvals))
	for _, c := range p.ClientCalls {
		ids = append(ids, c.ID)
	}
	for _, c := range p.Approvals {
		ids = append(ids, c.ID)
	}
	st.span.SetAttributes(
		keyRunPaused.Bool(true),
		keyPendingCallIDs.StringSlice(ids),
		keyPendingClientCalls.Int(len(p.ClientCalls)),
		keyPendingApprovals.Int(len(p.Approvals)),
	)
	sc := st.span.SpanContext()
	if !sc.IsValid() || r.pauses == nil {
		return
	}
	if err := savePause(context.WithoutCancel(ctx), r.pauses, st.conversationID, sc, ids); err != nil {
		st.logf(ctx, "telemetry: could not save the span of a paused run; the run that resumes it will not link to it",
			"calls", ids, "err", err)
	}
}

// endLeftovers ends spans whose closing hook did not come, which the
// loop's pairing guarantees rule out; it keeps a broken promise from
// leaking spans.
func (st *run) endLeftovers() {
	if st.chat != nil {
		st.chat.End()
		st.chat = nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, t := range st.tools {
		t.span.End()
		delete(st.tools, id)
	}
}

// setError marks span as failed with err, classified as errType.
func setError(span trace.Span, errType string, err error) {
	span.SetStatus(codes.Error, err.Error())
	span.SetAttributes(keyErrorType.String(errType))
	var pe *agentloop.ToolPanicError
	if errors.As(err, &pe) {
		span.AddEvent("exception", trace.WithAttributes(
			keyExceptionType.String(fmt.Sprintf("%T", pe)),
			keyExceptionMessage.String(pe.Error()),
			keyExceptionStacktrace.String(string(pe.Stack)),
		))
	}
}
