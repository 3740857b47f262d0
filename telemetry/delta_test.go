package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/telemetry"
)

// inModelCall returns the hooks and a run context that is in the middle of
// a model call whose first chunk has come, as the loop's delta hooks see
// them.
func inModelCall(t testing.TB, hooks *agentloop.Hooks) context.Context {
	t.Helper()
	agent := &agentloop.Agent{Model: simtest.NewModel()}
	ctx, err := hooks.OnRunStart(context.Background(), agentloop.RunStart{Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	if err := hooks.BeforeModelCall(ctx, &agentloop.Request{Turn: 1}); err != nil {
		t.Fatal(err)
	}
	if err := hooks.OnTextDelta(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	return ctx
}

func TestTextDeltasAllocateNothing(t *testing.T) {
	recording := newHarness(t, telemetry.Options{}).hooks
	off, err := telemetry.NewHooks(telemetry.Options{TracerProvider: noop.NewTracerProvider()})
	if err != nil {
		t.Fatal(err)
	}
	for name, hooks := range map[string]*agentloop.Hooks{"recording": recording, "not recording": off} {
		ctx := inModelCall(t, hooks)
		delta := agentloop.ToolCallDelta{Index: 0, ID: "c1", Args: `{"a"`}
		allocs := testing.AllocsPerRun(1000, func() {
			_ = hooks.OnTextDelta(ctx, "word ")
			_ = hooks.OnReasoningDelta(ctx, "thought ")
			_ = hooks.OnToolCallDelta(ctx, delta)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per three deltas, want 0", name, allocs)
		}
	}
}
