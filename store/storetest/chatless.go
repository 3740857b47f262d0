package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
)

// chatlessDocTests pin the documents of no chat (store.Doc with an empty
// ChatID): they need no chat, are versioned like any document, and live
// until deleted.
var chatlessDocTests = []test{
	{"NeedNoChatAndRoundTrip", func(t *testing.T, su *suite) {
		e := su.env(t)
		d := &store.Doc{Name: "pause/1", Data: []byte("span\x00\xff")}
		require.NoError(t, e.s.PutDoc(e.ctx, d), "putting a document of no chat")
		require.NotZero(t, d.Version)
		require.Equal(t, e.clock.Now(), d.Updated)
		got, err := e.s.GetDoc(e.ctx, "", "pause/1")
		require.NoError(t, err)
		require.Equal(t, d, got)
	}},
	{"MissingIsNotFound", func(t *testing.T, su *suite) {
		e := su.env(t)
		_, err := e.s.GetDoc(e.ctx, "", "pause/1")
		require.ErrorIs(t, err, store.ErrNotFound)
		assert.ErrorContains(t, err, "pause/1")
		assert.ErrorIs(t, e.s.DeleteDoc(e.ctx, "", "pause/1", 1), store.ErrNotFound)
	}},
	{"AreVersioned", func(t *testing.T, su *suite) {
		e := su.env(t)
		first := &store.Doc{Name: "n", Data: []byte("1")}
		require.NoError(t, e.s.PutDoc(e.ctx, first))
		chatlessConflict(t, e.s.PutDoc(e.ctx, &store.Doc{Name: "n"}), store.ConflictError{Doc: "n", Want: 0, Have: first.Version})

		stale, second := *first, *first
		second.Data = []byte("2")
		e.clock.Advance(time.Minute)
		require.NoError(t, e.s.PutDoc(e.ctx, &second))
		assert.Equal(t, e.clock.Now(), second.Updated)
		chatlessConflict(t, e.s.PutDoc(e.ctx, &stale), store.ConflictError{Doc: "n", Want: first.Version, Have: second.Version})
		chatlessConflict(t, e.s.DeleteDoc(e.ctx, "", "n", first.Version), store.ConflictError{Doc: "n", Want: first.Version, Have: second.Version})

		require.NoError(t, e.s.DeleteDoc(e.ctx, "", "n", second.Version))
		_, err := e.s.GetDoc(e.ctx, "", "n")
		require.ErrorIs(t, err, store.ErrNotFound)
		again := &store.Doc{Name: "n"}
		require.NoError(t, e.s.PutDoc(e.ctx, again), "made again from version 0")
		assert.NotContains(t, []int64{first.Version, second.Version}, again.Version, "versions are never reused")
	}},
	{"ShareNoNamesWithChatsDocs", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "", nil)
		require.NoError(t, e.s.PutDoc(e.ctx, &store.Doc{ChatID: "chat-1", Name: "n", Data: []byte("chat")}))
		_, err := e.s.GetDoc(e.ctx, "", "n")
		require.ErrorIs(t, err, store.ErrNotFound)
		loose := &store.Doc{Name: "n", Data: []byte("none")}
		require.NoError(t, e.s.PutDoc(e.ctx, loose), "a document of no chat with the same name")
		got, err := e.s.GetDoc(e.ctx, "chat-1", "n")
		require.NoError(t, err)
		assert.Equal(t, "chat", string(got.Data))

		require.NoError(t, e.s.DeleteChat(e.ctx, "chat-1", c.Version))
		got, err = e.s.GetDoc(e.ctx, "", "n")
		require.NoError(t, err, "a document of no chat outlives every chat")
		assert.Equal(t, "none", string(got.Data))
		assert.Equal(t, loose.Version, got.Version)
	}},
	{"AreSharedByEveryHandle", func(t *testing.T, su *suite) {
		e := su.env(t)
		s2 := su.reopen(e)
		d := &store.Doc{Name: "n", Data: []byte("x")}
		require.NoError(t, e.s.PutDoc(e.ctx, d))
		got, err := s2.GetDoc(e.ctx, "", "n")
		require.NoError(t, err)
		assert.Equal(t, d.Version, got.Version)
	}},
}

// chatlessConflict asserts that err is the *store.ConflictError want, of a
// document of no chat.
func chatlessConflict(t *testing.T, err error, want store.ConflictError) {
	t.Helper()
	require.ErrorIs(t, err, store.ErrConflict)
	var ce *store.ConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, want, *ce)
	assert.ErrorContains(t, err, "of no chat")
}

// conversationDocTests pin store.UpdateConversationDoc on every backend:
// a conversation's document is its chat's while the chat exists, of no
// chat otherwise, and concurrent writers lose nothing either way.
var conversationDocTests = []test{
	{"FollowTheirChat", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		set := func(d *store.Doc) error { d.Data = []byte("x"); return nil }
		d, err := store.UpdateConversationDoc(e.ctx, e.s, "chat-1", "n", set)
		require.NoError(t, err)
		assert.Equal(t, "chat-1", d.ChatID)
		assert.Equal(t, "n", d.Name)
		d, err = store.UpdateConversationDoc(e.ctx, e.s, "no-chat", "n", set)
		require.NoError(t, err)
		assert.Equal(t, "", d.ChatID)
		assert.Equal(t, store.ChatlessName("no-chat", "n"), d.Name)
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
				require.NoError(t, err, "updating %q", id)
			}
			d, err := store.GetConversationDoc(e.ctx, e.s, id, "n")
			require.NoError(t, err)
			assert.Len(t, d.Data, writers*each, "conversation %q: every update kept", id)
		}
	}},
}
