package storetest

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/store"
)

// chatlessDocTests pin the documents of no chat (store.Doc with an empty
// ChatID): they need no chat, are versioned like any document, and live
// until deleted.
var chatlessDocTests = []test{
	{"NeedNoChatAndRoundTrip", func(t *testing.T, su *suite) {
		e := su.env(t)
		d := &store.Doc{Name: "pause/1", Data: []byte("span\x00\xff")}
		mustDo(t, e.s.PutDoc(e.ctx, d), "putting a document of no chat")
		if d.Version == 0 || !d.Updated.Equal(e.clock.Now()) {
			t.Fatalf("after PutDoc: version %d, updated %v; want a version and %v", d.Version, d.Updated, e.clock.Now())
		}
		got, err := e.s.GetDoc(e.ctx, "", "pause/1")
		mustDo(t, err, "getting it")
		if got.ChatID != "" || got.Name != d.Name || got.Version != d.Version || !got.Updated.Equal(d.Updated) || !bytes.Equal(got.Data, d.Data) {
			t.Fatalf("GetDoc = %+v, want %+v", got, d)
		}
	}},
	{"MissingIsNotFound", func(t *testing.T, su *suite) {
		e := su.env(t)
		_, err := e.s.GetDoc(e.ctx, "", "pause/1")
		wantIs(t, err, store.ErrNotFound)
		if !strings.Contains(err.Error(), "pause/1") {
			t.Errorf("error %q does not name the document", err)
		}
		wantIs(t, e.s.DeleteDoc(e.ctx, "", "pause/1", 1), store.ErrNotFound)
	}},
	{"AreVersioned", func(t *testing.T, su *suite) {
		e := su.env(t)
		first := &store.Doc{Name: "n", Data: []byte("1")}
		mustDo(t, e.s.PutDoc(e.ctx, first), "creating")
		wantConflict(t, e.s.PutDoc(e.ctx, &store.Doc{Name: "n"}), store.ConflictError{Doc: "n", Want: 0, Have: first.Version})

		stale, second := *first, *first
		second.Data = []byte("2")
		e.clock.Advance(time.Minute)
		mustDo(t, e.s.PutDoc(e.ctx, &second), "replacing")
		if !second.Updated.Equal(e.clock.Now()) {
			t.Errorf("Updated = %v, want the clock's %v", second.Updated, e.clock.Now())
		}
		wantConflict(t, e.s.PutDoc(e.ctx, &stale), store.ConflictError{Doc: "n", Want: first.Version, Have: second.Version})
		wantConflict(t, e.s.DeleteDoc(e.ctx, "", "n", first.Version), store.ConflictError{Doc: "n", Want: first.Version, Have: second.Version})

		mustDo(t, e.s.DeleteDoc(e.ctx, "", "n", second.Version), "deleting")
		_, err := e.s.GetDoc(e.ctx, "", "n")
		wantIs(t, err, store.ErrNotFound)
		again := &store.Doc{Name: "n"}
		mustDo(t, e.s.PutDoc(e.ctx, again), "making it again from version 0")
		if again.Version == first.Version || again.Version == second.Version {
			t.Errorf("the document made again got version %d, used before", again.Version)
		}
	}},
	{"ShareNoNamesWithChatsDocs", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "", nil)
		mustDo(t, e.s.PutDoc(e.ctx, &store.Doc{ChatID: "chat-1", Name: "n", Data: []byte("chat")}), "a document of the chat")
		_, err := e.s.GetDoc(e.ctx, "", "n")
		wantIs(t, err, store.ErrNotFound)
		loose := &store.Doc{Name: "n", Data: []byte("none")}
		mustDo(t, e.s.PutDoc(e.ctx, loose), "a document of no chat with the same name")
		got, err := e.s.GetDoc(e.ctx, "chat-1", "n")
		mustDo(t, err, "reading the chat's")
		if string(got.Data) != "chat" {
			t.Errorf("the chat's document reads %q, want %q", got.Data, "chat")
		}
		mustDo(t, e.s.DeleteChat(e.ctx, "chat-1", c.Version), "deleting the chat")
		got, err = e.s.GetDoc(e.ctx, "", "n")
		mustDo(t, err, "a document of no chat outlives every chat")
		if string(got.Data) != "none" || got.Version != loose.Version {
			t.Errorf("the document of no chat reads %q at version %d, want %q at %d", got.Data, got.Version, "none", loose.Version)
		}
	}},
	{"AreSharedByEveryHandle", func(t *testing.T, su *suite) {
		e := su.env(t)
		s2 := su.reopen(e)
		d := &store.Doc{Name: "n", Data: []byte("x")}
		mustDo(t, e.s.PutDoc(e.ctx, d), "writing on one handle")
		got, err := s2.GetDoc(e.ctx, "", "n")
		mustDo(t, err, "reading on another")
		if got.Version != d.Version {
			t.Errorf("the other handle reads version %d, want %d", got.Version, d.Version)
		}
	}},
}

func mustDo(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one matching %v", err, target)
	}
}

func wantConflict(t *testing.T, err error, want store.ConflictError) {
	t.Helper()
	var ce *store.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("error %v, want a *store.ConflictError", err)
	}
	if *ce != want {
		t.Fatalf("conflict %+v, want %+v", *ce, want)
	}
	if !strings.Contains(err.Error(), "of no chat") {
		t.Errorf("error %q does not say the document is of no chat", err)
	}
}

// conversationDocTests pin store.UpdateConversationDoc on every backend:
// a conversation's document is its chat's while the chat exists, of no
// chat otherwise, and concurrent writers lose nothing either way.
var conversationDocTests = []test{
	{"FollowTheirChat", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		d, err := store.UpdateConversationDoc(e.ctx, e.s, "chat-1", "n", func(d *store.Doc) error { d.Data = []byte("a"); return nil })
		mustDo(t, err, "writing the chat's")
		if d.ChatID != "chat-1" {
			t.Errorf("written as a document of chat %q, want chat-1", d.ChatID)
		}
		d, err = store.UpdateConversationDoc(e.ctx, e.s, "no-chat", "n", func(d *store.Doc) error { d.Data = []byte("b"); return nil })
		mustDo(t, err, "writing one of a conversation that is no chat")
		if d.ChatID != "" || d.Name != store.ChatlessName("no-chat", "n") {
			t.Errorf("written as %q of chat %q, want %q of no chat", d.Name, d.ChatID, store.ChatlessName("no-chat", "n"))
		}
	}},
	{"ConcurrentWritersLoseNothing", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		for _, id := range []string{"chat-1", "no-chat"} {
			const writers, each = 4, 10
			var wg sync.WaitGroup
			errs := make(chan error, writers*each)
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						_, err := store.UpdateConversationDoc(e.ctx, e.s, id, "n", func(d *store.Doc) error {
							d.Data = append(d.Data, 'x')
							return nil
						})
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				mustDo(t, err, "updating "+id)
			}
			d, err := store.GetConversationDoc(e.ctx, e.s, id, "n")
			mustDo(t, err, "reading "+id)
			if len(d.Data) != writers*each {
				t.Errorf("conversation %q: %d updates kept, want %d", id, len(d.Data), writers*each)
			}
		}
	}},
}
