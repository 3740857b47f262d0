package aisdk

import (
	"testing"
	"testing/synctest"

	"github.com/agentloop/agentloop"
)

func TestItemPipe_TakeGetsEveryQueuedItemInOrderAndTheClose(t *testing.T) {
	q := newItemPipe()
	stop := make(chan struct{})
	for i := range 3 {
		if !q.put(runPair{item: agentloop.TurnStart{Turn: i}}, stop) {
			t.Fatal("put refused with room left")
		}
	}
	<-q.ready
	batch, closed := q.take(nil)
	if len(batch) != 3 || closed {
		t.Fatalf("took %d items, closed %v; want 3, open", len(batch), closed)
	}
	for i, p := range batch {
		if p.item.(agentloop.TurnStart).Turn != i {
			t.Fatalf("item %d is %v: out of order", i, p.item)
		}
	}
	q.put(runPair{item: agentloop.Final{}}, stop)
	q.close()
	<-q.ready
	batch, closed = q.take(batch)
	if len(batch) != 1 || !closed {
		t.Fatalf("after close: took %d items, closed %v; want the last item and closed", len(batch), closed)
	}
}

func TestItemPipe_PutWaitsWhileFullUntilATakeOrTheStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newItemPipe()
		stop := make(chan struct{})
		for range pipeLimit {
			q.put(runPair{}, stop)
		}
		put := make(chan bool, 1)
		go func() { put <- q.put(runPair{item: agentloop.Final{}}, stop) }()
		synctest.Wait() // the put is blocked, or done
		select {
		case <-put:
			t.Fatal("put into a full pipe did not wait")
		default:
		}
		<-q.ready
		if batch, _ := q.take(nil); len(batch) != pipeLimit {
			t.Fatalf("took %d; want %d", len(batch), pipeLimit)
		}
		if !<-put {
			t.Fatal("the waiting put was refused after a take made room")
		}

		for range pipeLimit - 1 {
			q.put(runPair{}, stop)
		}
		go func() { put <- q.put(runPair{}, stop) }()
		synctest.Wait()
		close(stop)
		if <-put {
			t.Fatal("a put into the full pipe went in after the stop")
		}
	})
}
