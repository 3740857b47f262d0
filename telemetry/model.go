package telemetry

import (
	"context"
	"iter"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop"
)

// WrapModel returns a Model that calls m with a context that holds the
// chat span of the model call, so that the spans m makes itself (an
// otelhttp transport on its HTTP client) are children of the chat span
// instead of its siblings under the run's span. Give it to
// [agentloop.Agent.Model] of an agent traced by [NewHooks]. It names
// itself as m does (see [agentloop.ModelDescriber]). In a run without the
// hooks it calls m with the context it gets. It adds no work per chunk.
func WrapModel(m agentloop.Model) agentloop.Model {
	return wrappedModel{m}
}

type wrappedModel struct{ m agentloop.Model }

func (w wrappedModel) Stream(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	if st, _ := ctx.Value(anyRunKey{}).(*run); st != nil && st.chat != nil {
		ctx = trace.ContextWithSpan(ctx, st.chat)
	}
	return w.m.Stream(ctx, req)
}

// ModelInfo returns what m says of itself, or the name NewHooks would give
// m (see the package doc).
func (w wrappedModel) ModelInfo() agentloop.ModelInfo { return modelInfo(w.m) }
