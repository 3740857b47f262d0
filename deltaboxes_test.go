package agentloop_test

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

// A model that makes its deltas with DeltaBoxes streams the same items as
// one that converts them: the boxes are ordinary TextDelta and
// ReasoningDelta values.
func TestDeltaBoxes_StreamTheItemsConvertedDeltasStream(t *testing.T) {
	words := make([]string, 300)
	for i := range words {
		words[i] = fmt.Sprintf("w%d ", i)
	}
	model := func(boxed bool) agentloop.Model {
		return agentloop.ModelFunc(func(ctx context.Context, _ *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				var b agentloop.DeltaBoxes
				for i, w := range words {
					var c agentloop.Chunk
					switch {
					case boxed && i < 100:
						c = b.Reasoning(w)
					case boxed:
						c = b.Text(w)
					case i < 100:
						c = agentloop.ReasoningDelta{Text: w}
					default:
						c = agentloop.TextDelta{Text: w}
					}
					if !yield(c, nil) {
						return
					}
				}
			}
		})
	}
	want, err := collect((&agentloop.Agent{Model: model(false)}).Stream(context.Background(), user("x"), nil))
	require.NoError(t, err)
	got, err := collect((&agentloop.Agent{Model: model(true)}).Stream(context.Background(), user("x"), nil))
	require.NoError(t, err)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("items (-converted +boxed):\n%s", d)
	}
	for i, it := range got {
		if d, ok := it.(agentloop.TextDelta); ok {
			assert.True(t, it == agentloop.Item(d), "item %d is not == to its value", i)
		}
	}
}

// DeltaBoxes allocates per batch, not per delta.
func TestDeltaBoxes_AllocatePerBatch(t *testing.T) {
	allocs := testing.AllocsPerRun(10, func() {
		var b agentloop.DeltaBoxes
		for range 1000 {
			_ = b.Text("x")
		}
	})
	assert.LessOrEqual(t, allocs, 21.0) // 4 small batches, 15 of 64, the slab
}
