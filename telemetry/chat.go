package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop"
)

// beforeModelCall opens the chat span of a model call. The request is read
// again when the call ends, so the span records it as every hook left it.
func (r *recorder) beforeModelCall(ctx context.Context, req *agentloop.Request) error {
	st := r.runOf(ctx)
	if st == nil {
		return nil
	}
	st.endLeftovers() // none, unless a hook broke the pairing
	attrs := st.genAIAttrs(opChat, keyRequestStream.Bool(true))
	if st.conversationID != "" {
		attrs = append(attrs, keyConversationID.String(st.conversationID))
	}
	st.chatStart = time.Now()
	_, st.chat = r.tracer.Start(ctx, spanName(opChat, st.info.Model),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(st.chatStart), trace.WithAttributes(attrs...))
	st.chatReq, st.seenChunk, st.hasTTFC = req, false, false
	return nil
}

// onText notes the time to the first chunk of the model call in flight.
// Every later delta costs a context lookup and a comparison: no allocation,
// whether or not the span records.
func (r *recorder) onText(ctx context.Context, _ string) error {
	if st := r.runOf(ctx); st != nil && !st.seenChunk {
		st.firstChunk()
	}
	return nil
}

func (r *recorder) onToolCallDelta(ctx context.Context, _ agentloop.ToolCallDelta) error {
	if st := r.runOf(ctx); st != nil && !st.seenChunk {
		st.firstChunk()
	}
	return nil
}

func (st *run) firstChunk() {
	st.seenChunk = true
	if st.chat != nil {
		st.ttfc, st.hasTTFC = time.Since(st.chatStart), true
	}
}

// turnEnd ends the chat span of the model call that end describes and
// records its metrics.
func (r *recorder) turnEnd(ctx context.Context, end agentloop.TurnEnd) error {
	st := r.runOf(ctx)
	if st == nil || st.chat == nil {
		return nil
	}
	now := time.Now()
	span, req := st.chat, st.chatReq
	st.chat, st.chatReq, st.lastFinish = nil, nil, end.FinishReason
	st.mu.Lock()
	st.defs = req.Tools
	st.mu.Unlock()

	if span.IsRecording() {
		span.SetAttributes(keyResponseFinish.StringSlice([]string{finishReason(end.FinishReason)}))
		if end.Usage != (agentloop.Usage{}) {
			span.SetAttributes(usageAttrs(end.Usage)...)
		}
		span.SetAttributes(settingsAttrs(req.Settings)...)
		if st.hasTTFC {
			span.SetAttributes(keyResponseTTFC.Float64(st.ttfc.Seconds()))
		}
		if r.content != nil {
			span.SetAttributes(
				keyInputMessages.String(r.content.input(ctx, req.Messages)),
				keyOutputMessages.String(r.content.output(ctx, end.Message, end.FinishReason)),
			)
			if s := r.content.system(ctx, req.System); s != "" {
				span.SetAttributes(keySystemInstructions.String(s))
			}
		}
	}
	var errType string
	if end.Err != nil {
		errType = errorType(end.Err)
		setError(span, errType, end.Err)
	}
	span.End(trace.WithTimestamp(now)) // the span's times are those of its duration and time to first chunk

	r.duration.Record(ctx, now.Sub(st.chatStart).Seconds(), measured(st.chatSet, errType))
	if st.hasTTFC {
		r.ttfc.Record(ctx, st.ttfc.Seconds(), metric.WithAttributeSet(st.chatSet))
	}
	if end.Usage != (agentloop.Usage{}) {
		r.tokens.Record(ctx, int64(end.Usage.Input), metric.WithAttributeSet(st.inputSet))
		r.tokens.Record(ctx, int64(end.Usage.Output), metric.WithAttributeSet(st.outputSet))
	}
	return nil
}

// usageAttrs returns the gen_ai.usage.* attributes of u: input and output
// tokens always, the cache and reasoning counts (parts of those, as the
// conventions want them) when not zero.
func usageAttrs(u agentloop.Usage) []attribute.KeyValue {
	attrs := []attribute.KeyValue{keyUsageInputTokens.Int(u.Input), keyUsageOutputTokens.Int(u.Output)}
	if u.CacheRead != 0 {
		attrs = append(attrs, keyUsageCacheRead.Int(u.CacheRead))
	}
	if u.CacheWrite != 0 {
		attrs = append(attrs, keyUsageCacheCreation.Int(u.CacheWrite))
	}
	if u.Reasoning != 0 {
		attrs = append(attrs, keyUsageReasoning.Int(u.Reasoning))
	}
	return attrs
}

// settingsAttrs returns the gen_ai.request.* attributes of the settings
// that are set.
func settingsAttrs(s agentloop.Settings) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if s.MaxTokens > 0 {
		attrs = append(attrs, keyRequestMaxTokens.Int(s.MaxTokens))
	}
	if s.Temperature != nil {
		attrs = append(attrs, keyRequestTemperature.Float64(*s.Temperature))
	}
	if s.TopP != nil {
		attrs = append(attrs, keyRequestTopP.Float64(*s.TopP))
	}
	if s.Seed != nil {
		attrs = append(attrs, keyRequestSeed.Int(*s.Seed))
	}
	if len(s.Stop) > 0 {
		attrs = append(attrs, keyRequestStopSeqs.StringSlice(s.Stop))
	}
	return attrs
}
