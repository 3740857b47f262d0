package store_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
)

// Two writers read the same version of a chat; the second write is refused
// instead of overwriting the first, and UpdateChat reads again and retries.
func Example() {
	ctx := context.Background()
	var s store.Store = memstore.New(memstore.Options{}) // or sqlitestore, pgstore
	defer s.Close()

	chat := &store.Chat{ID: "chat-1", Owner: "alice", History: agentloop.History{agentloop.UserMessage("Hi")}}
	if err := s.PutChat(ctx, chat); err != nil { // version 0: create
		fmt.Println(err)
		return
	}

	a, _ := s.GetChat(ctx, "chat-1")
	b, _ := s.GetChat(ctx, "chat-1")
	a.Title = "Greetings"
	fmt.Println("a:", s.PutChat(ctx, a))
	b.Title = "Hello"
	err := s.PutChat(ctx, b)
	fmt.Println("b:", errors.Is(err, store.ErrConflict))

	c, err := store.UpdateChat(ctx, s, "chat-1", func(c *store.Chat) error {
		c.History = append(c.History, agentloop.UserMessage("Still there?"))
		return nil
	})
	fmt.Println(c.Title, len(c.History), err)
	// Output:
	// a: <nil>
	// b: true
	// Greetings 2 <nil>
}

// A run holds the chat's stream; a client follows it live, and a stop
// from anywhere reaches the run.
func Example_streams() {
	ctx := context.Background()
	s := memstore.New(memstore.Options{})
	defer s.Close()
	_ = s.PutChat(ctx, &store.Chat{ID: "chat-1"})

	lease, _ := s.StartStream(ctx, "chat-1", time.Minute)
	_, _ = s.AppendChunks(ctx, lease, []byte("data: one\n\n"), []byte("data: two\n\n"))

	stopped := make(chan error)
	go func() { stopped <- s.WaitStop(ctx, lease) }() // the run's stop button
	_ = s.StopStream(ctx, "chat-1")                   // a POST /stop, on any replica
	fmt.Println("stop reached the run:", <-stopped == nil)
	_, _ = s.AppendChunks(ctx, lease, []byte("data: [DONE]\n\n"))
	_ = s.EndStream(ctx, lease, store.StreamCancelled)

	active, err := s.ActiveStream(ctx, "chat-1")
	fmt.Println(active, errors.Is(err, store.ErrNotFound))
	for chunk, err := range s.ReadStream(ctx, lease.StreamID, 0) { // a resuming client
		fmt.Printf("%d %q %v\n", chunk.Seq, chunk.Data, err)
	}
	// Output:
	// stop reached the run: true
	// <nil> true
	// 0 "data: one\n\n" <nil>
	// 1 "data: two\n\n" <nil>
	// 2 "data: [DONE]\n\n" <nil>
}
