package store_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
)

// A feature keeps a note per conversation: beside the chat when the store
// has it, as a document of no chat otherwise.
func ExampleUpdateConversationDoc() {
	ctx := context.Background()
	s := memstore.New(memstore.Options{})
	defer s.Close()
	_ = s.PutChat(ctx, &store.Chat{ID: "chat-1"})

	for _, id := range []string{"chat-1", "terminal-session"} {
		d, err := store.UpdateConversationDoc(ctx, s, id, "note", func(d *store.Doc) error {
			d.Data = []byte("remember " + id)
			return nil
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("chat %q, document %q\n", d.ChatID, d.Name)
	}
	d, _ := store.GetConversationDoc(ctx, s, "terminal-session", "note")
	fmt.Println(string(d.Data))
	// Output:
	// chat "chat-1", document "note"
	// chat "", document "note/terminal-session"
	// remember terminal-session
}
