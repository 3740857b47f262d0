package agentloop

import (
	"context"
	"testing"
)

// Nested items a call handed over before it ended are yielded before its
// result, also when the end is seen before the wake (white-box: which of
// the two a select sees first is the scheduler's choice).
func TestAwait_YieldsNestedItemsLeftInTheBoxWhenTheCallEnds(t *testing.T) {
	var got []Item
	r := &run{box: newNestedBox(), yield: func(it Item, _ error) bool { got = append(got, it); return true }}
	r.ctx, r.cancel = context.WithCancelCause(context.Background())
	defer r.cancel(nil)
	r.done = r.ctx.Done()
	item := &Nested{SubAgent: &SubAgent{CallID: "c1", Agent: "sub", Depth: 1, Path: []string{"c1"}}, Item: TextDelta{Text: "x"}}
	if err := r.box.put(r.ctx, progress{job: 0, item: item}); err != nil {
		t.Fatal(err)
	}
	<-r.box.wake // the wake was taken, and the call ended
	done := make(chan struct{})
	close(done)
	if err := r.await(0, done); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].(*Nested).Item != (TextDelta{Text: "x"}) {
		t.Fatalf("yielded %v, want the nested item", got)
	}
}

// A full box makes the sub-run wait until the ranging goroutine empties it,
// or its context ends.
func TestNestedBox_PutWaitsWhileFull(t *testing.T) {
	b := newNestedBox()
	ctx, cancel := context.WithCancel(context.Background())
	for range nestedBoxSize {
		if err := b.put(ctx, progress{}); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if err := b.put(ctx, progress{}); err == nil {
		t.Fatal("put into a full box with a done context succeeded")
	}
	put := make(chan error)
	go func() { put <- b.put(context.Background(), progress{job: 7}) }()
	if n := len(b.take()); n != nestedBoxSize {
		t.Fatalf("took %d items, want %d", n, nestedBoxSize)
	}
	if err := <-put; err != nil {
		t.Fatal(err)
	}
	if items := b.take(); len(items) != 1 || items[0].job != 7 {
		t.Fatalf("took %v, want the waiting item", items)
	}
}
