package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/store/storetest"
)

// A store in memory, with a clock the test moves on to expire a lease.
func Example() {
	ctx := context.Background()
	clock := storetest.NewClock()
	s := memstore.New(memstore.Options{Now: clock.Now})
	defer s.Close()

	_ = s.PutChat(ctx, &store.Chat{ID: "chat-1", History: agentloop.History{agentloop.UserMessage("Hi")}})
	lease, _ := s.StartStream(ctx, "chat-1", 30*time.Second)
	_, err := s.StartStream(ctx, "chat-1", 30*time.Second)
	fmt.Println("second run:", err != nil)

	clock.Advance(time.Minute) // the first run's process died
	_, err = s.StartStream(ctx, "chat-1", 30*time.Second)
	fmt.Println("after the lease expired:", err)
	old, _ := s.GetStream(ctx, lease.StreamID)
	fmt.Println("the old stream:", old.State)
	// Output:
	// second run: true
	// after the lease expired: <nil>
	// the old stream: interrupted
}
