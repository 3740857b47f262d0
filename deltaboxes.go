package agentloop

// DeltaBoxes makes a model's text and reasoning deltas into [Chunk] values
// without an allocation per delta. A TextDelta converted to a Chunk is
// copied to the heap, one allocation per delta; DeltaBoxes stores the
// deltas in batches (of 4 values at first, doubling up to 64) and makes
// each Chunk point into its batch. The loop yields the same box as the
// item, so a delta costs the stream no allocation of its own (design.md
// §19.7).
//
// The chunks are ordinary [TextDelta] and [ReasoningDelta] values (type
// switches, ==, reflect see no difference); the one cost is memory: an
// item a consumer keeps keeps its batch, and the texts of the batch's
// other deltas, alive.
//
// The zero value is ready to use. A DeltaBoxes is not safe for concurrent
// use: a provider keeps one per model call (per [Model.Stream] call).
type DeltaBoxes struct {
	text      *slab[Chunk, TextDelta]
	reasoning *slab[Chunk, ReasoningDelta]
}

// Text returns TextDelta{Text: s} as a Chunk.
func (b *DeltaBoxes) Text(s string) Chunk {
	if b.text == nil {
		b.text = newSlab[Chunk, TextDelta]()
	}
	return b.text.box(TextDelta{Text: s})
}

// Reasoning returns ReasoningDelta{Text: s} as a Chunk.
func (b *DeltaBoxes) Reasoning(s string) Chunk {
	if b.reasoning == nil {
		b.reasoning = newSlab[Chunk, ReasoningDelta]()
	}
	return b.reasoning.box(ReasoningDelta{Text: s})
}
