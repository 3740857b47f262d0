package storetest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// listAll pages through the owner's chats and returns their ids in order.
func listAll(t *testing.T, ctx context.Context, s store.ChatLister, owner string, limit int) []string {
	t.Helper()
	var ids []string
	q := store.ListQuery{Owner: owner, Limit: limit}
	for {
		page, err := s.ListChats(ctx, q)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Chats), limit)
		for _, c := range page.Chats {
			ids = append(ids, c.ID)
		}
		if page.Next == "" {
			return ids
		}
		require.Len(t, page.Chats, limit, "only the last page is short")
		q.Cursor = page.Next
	}
}

var listTests = []test{
	{"NewestFirstByOwnerInPages", func(t *testing.T, su *suite) {
		e := su.env(t)
		var alice []string // newest first
		for i := range 7 {
			id := fmt.Sprintf("alice-%d", i)
			e.create(e.s, id, "alice", nil)
			alice = append([]string{id}, alice...)
			e.create(e.s, fmt.Sprintf("bob-%d", i), "bob", nil)
			e.clock.Advance(time.Second)
		}
		e.create(e.s, "nobody's", "", nil)

		page, err := e.s.ListChats(e.ctx, store.ListQuery{Owner: "alice", Limit: 3})
		require.NoError(t, err)
		require.Equal(t, []store.ChatSummary{
			{ID: "alice-6", Title: "title of alice-6", Updated: e.clock.Now().Add(-1 * time.Second)},
			{ID: "alice-5", Title: "title of alice-5", Updated: e.clock.Now().Add(-2 * time.Second)},
			{ID: "alice-4", Title: "title of alice-4", Updated: e.clock.Now().Add(-3 * time.Second)},
		}, page.Chats)
		require.NotEmpty(t, page.Next)

		for _, limit := range []int{1, 2, 3, 7, 8, 0} {
			want := limit
			if limit == 0 {
				want = store.DefaultListLimit
			}
			require.Equal(t, alice, listAll(t, e.ctx, e.s, "alice", want), "limit %d", limit)
		}
		require.Equal(t, []string{"nobody's"}, listAll(t, e.ctx, e.s, "", 10), `owner "" lists the chats without owner`)
		require.Empty(t, listAll(t, e.ctx, e.s, "carol", 10))
	}},
	{"UpdatesMoveAChatToTheTop", func(t *testing.T, su *suite) {
		e := su.env(t)
		a := e.create(e.s, "a", "o", nil)
		e.clock.Advance(time.Second)
		e.create(e.s, "b", "o", nil)
		e.clock.Advance(time.Second)
		a.History = agentloop.History{agentloop.UserMessage("hi")}
		require.NoError(t, e.s.PutChat(e.ctx, a))
		require.Equal(t, []string{"a", "b"}, listAll(t, e.ctx, e.s, "o", 10))
	}},
	{"ChatsUpdatedAtTheSameTimeAreOrderedByID", func(t *testing.T, su *suite) {
		e := su.env(t)
		for _, id := range []string{"b", "d", "a", "c", "e"} {
			e.create(e.s, id, "o", nil) // the clock stands still
		}
		for _, limit := range []int{1, 2, 10} {
			require.Equal(t, []string{"e", "d", "c", "b", "a"}, listAll(t, e.ctx, e.s, "o", limit))
		}
	}},
	{"PagingIsStableUnderConcurrentUpdates", func(t *testing.T, su *suite) {
		e := su.env(t)
		chats := map[string]*store.Chat{}
		for i := range 10 {
			id := fmt.Sprintf("c%d", i)
			chats[id] = e.create(e.s, id, "o", nil)
			e.clock.Advance(time.Second)
		}
		// Newest first: c9 … c0. Read a page, then update a chat already
		// listed and one not listed yet, create one, and read on.
		page, err := e.s.ListChats(e.ctx, store.ListQuery{Owner: "o", Limit: 4})
		require.NoError(t, err)
		seen := []string{}
		for _, c := range page.Chats {
			seen = append(seen, c.ID)
		}
		require.Equal(t, []string{"c9", "c8", "c7", "c6"}, seen)
		for _, id := range []string{"c8", "c2"} {
			chats[id].Title = "updated"
			require.NoError(t, e.s.PutChat(e.ctx, chats[id]))
		}
		e.create(e.s, "new", "o", nil)
		q := store.ListQuery{Owner: "o", Limit: 4, Cursor: page.Next}
		for q.Cursor != "" {
			page, err := e.s.ListChats(e.ctx, q)
			require.NoError(t, err)
			for _, c := range page.Chats {
				seen = append(seen, c.ID)
			}
			q.Cursor = page.Next
		}
		// Every chat not written during the listing comes exactly once; the
		// written ones (now newer than the cursor) at most once.
		require.Equal(t, []string{"c9", "c8", "c7", "c6", "c5", "c4", "c3", "c1", "c0"}, seen)
	}},
	{"BadQueriesAreRefused", func(t *testing.T, su *suite) {
		e := su.env(t)
		_, err := e.s.ListChats(e.ctx, store.ListQuery{Limit: -1})
		require.ErrorIs(t, err, store.ErrInvalid)
		for _, cursor := range []string{"not a cursor", "AAAA", "!!"} {
			_, err = e.s.ListChats(e.ctx, store.ListQuery{Cursor: cursor})
			require.ErrorIs(t, err, store.ErrInvalid, "cursor %q", cursor)
		}
	}},
	{"InventedCursorsAreRefused", func(t *testing.T, su *suite) {
		e := su.env(t)
		for i := range 3 {
			e.create(e.s, fmt.Sprintf("c%d", i), "o", nil)
			e.clock.Advance(time.Second)
		}
		page, err := e.s.ListChats(e.ctx, store.ListQuery{Owner: "o", Limit: 1})
		require.NoError(t, err)
		require.NotEmpty(t, page.Next)
		raw, err := base64.RawURLEncoding.DecodeString(page.Next)
		require.NoError(t, err)
		flipped := slices.Clone(raw)
		flipped[len(flipped)/2] ^= 1
		far := binary.BigEndian.AppendUint64(nil, uint64(math.MaxInt64)) // a time no database holds
		for _, cursor := range []string{
			"not-a-cursor", // decodes to 9 bytes
			base64.RawURLEncoding.EncodeToString(flipped),
			base64.RawURLEncoding.EncodeToString(append(far, "c1"...)),
			base64.RawURLEncoding.EncodeToString(append(binary.BigEndian.AppendUint64(nil, 0), "c1"...)),
			page.Next + "A",
		} {
			p, err := e.s.ListChats(e.ctx, store.ListQuery{Owner: "o", Cursor: cursor})
			require.ErrorIs(t, err, store.ErrInvalid, "cursor %q listed %v", cursor, p)
		}
		_, err = e.s.ListChats(e.ctx, store.ListQuery{Owner: "o", Cursor: page.Next})
		require.NoError(t, err, "the cursor the store made")
	}},
	{"ListIsEmptyNotNilError", func(t *testing.T, su *suite) {
		e := su.env(t)
		page, err := e.s.ListChats(e.ctx, store.ListQuery{Owner: "nobody"})
		require.NoError(t, err)
		require.Empty(t, page.Chats)
		require.Empty(t, page.Next)
	}},
}

var contextTests = []test{
	{"EveryCallRespectsACancelledContext", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(e.ctx)
		cancel()
		calls := map[string]error{}
		_, calls["GetChat"] = e.s.GetChat(ctx, "chat-1")
		calls["PutChat"] = e.s.PutChat(ctx, &store.Chat{ID: "chat-1", Version: c.Version})
		calls["DeleteChat"] = e.s.DeleteChat(ctx, "chat-1", c.Version)
		_, calls["ListChats"] = e.s.ListChats(ctx, store.ListQuery{})
		_, calls["GetDoc"] = e.s.GetDoc(ctx, "chat-1", "d")
		calls["PutDoc"] = e.s.PutDoc(ctx, &store.Doc{ChatID: "chat-1", Name: "d"})
		calls["DeleteDoc"] = e.s.DeleteDoc(ctx, "chat-1", "d", 1)
		_, calls["StartStream"] = e.s.StartStream(ctx, "chat-1", minute)
		_, calls["AppendChunks"] = e.s.AppendChunks(ctx, l, []byte("x"))
		_, calls["RenewLease"] = e.s.RenewLease(ctx, l, minute)
		calls["EndStream"] = e.s.EndStream(ctx, l, store.StreamDone)
		calls["WaitStop"] = e.s.WaitStop(ctx, l)
		_, calls["ActiveStream"] = e.s.ActiveStream(ctx, "chat-1")
		_, calls["GetStream"] = e.s.GetStream(ctx, l.StreamID)
		calls["StopStream"] = e.s.StopStream(ctx, "chat-1")
		_, calls["DeleteEndedStreams"] = e.s.DeleteEndedStreams(ctx, e.clock.Now())
		for _, err := range e.s.ReadStream(ctx, l.StreamID, 0) {
			calls["ReadStream"] = err
		}
		for name, err := range calls {
			require.ErrorIs(t, err, context.Canceled, name)
		}

		// Nothing happened.
		got, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, c.Version, got.Version)
		info, err := e.s.ActiveStream(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Zero(t, info.Len)
		require.False(t, info.StopRequested)
	}},
	{"ClosedStoreRefusesCalls", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		f := follow(t, e.ctx, e.s, l.StreamID, 0)
		stopped := waitStop(t, e.ctx, e.s, l)
		require.NoError(t, e.s.Close())
		require.NoError(t, e.s.Close(), "closing twice is not an error")
		ends(t, f, store.ErrClosed)
		require.ErrorIs(t, result(t, stopped), store.ErrClosed)
		_, err = e.s.GetChat(e.ctx, "chat-1")
		require.ErrorIs(t, err, store.ErrClosed)
		require.ErrorIs(t, e.s.PutChat(e.ctx, &store.Chat{ID: "chat-2"}), store.ErrClosed)
		_, err = e.s.AppendChunks(e.ctx, l, []byte("x"))
		require.ErrorIs(t, err, store.ErrClosed)
	}},
}
