package sqlitestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/sqlitestore"
)

// A chat written to the file is there when the program opens it again.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "chats")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "webchat.db")

	s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	chat := &store.Chat{ID: "chat-1", Owner: "alice", Title: "Weather", History: agentloop.History{agentloop.UserMessage("Rain in Paris?")}}
	if err := s.PutChat(ctx, chat); err != nil {
		fmt.Println(err)
		return
	}
	_ = s.Close()

	s, err = sqlitestore.Open(ctx, path, sqlitestore.Options{}) // a restart
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	got, _ := s.GetChat(ctx, "chat-1")
	fmt.Println(got.Title, got.History[0].Text(), got.Version == chat.Version)
	page, _ := s.ListChats(ctx, store.ListQuery{Owner: "alice"})
	fmt.Println(len(page.Chats), page.Chats[0].ID)
	// Output:
	// Weather Rain in Paris? true
	// 1 chat-1
}
