package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

var docTests = []test{
	{"PutThenGetRoundTrips", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		d := &store.Doc{ChatID: "chat-1", Name: "toolstate", Data: []byte(`{"version":1}` + "\x00\xff")}
		require.NoError(t, e.s.PutDoc(e.ctx, d))
		require.NotZero(t, d.Version)
		require.Equal(t, e.clock.Now(), d.Updated)
		got, err := e.s.GetDoc(e.ctx, "chat-1", "toolstate")
		require.NoError(t, err)
		require.Equal(t, d, got)
	}},
	{"EmptyDataReadsBackEmpty", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		require.NoError(t, e.s.PutDoc(e.ctx, &store.Doc{ChatID: "chat-1", Name: "empty"}))
		got, err := e.s.GetDoc(e.ctx, "chat-1", "empty")
		require.NoError(t, err)
		require.Empty(t, got.Data)
	}},
	{"MissingDocIsNotFound", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		_, err := e.s.GetDoc(e.ctx, "chat-1", "toolstate")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorContains(t, err, "toolstate")
		_, err = e.s.GetDoc(e.ctx, "no-chat", "toolstate")
		require.ErrorIs(t, err, store.ErrNotFound)
	}},
	{"DocOfMissingChatIsNotFound", func(t *testing.T, su *suite) {
		e := su.env(t)
		err := e.s.PutDoc(e.ctx, &store.Doc{ChatID: "no-chat", Name: "toolstate", Data: []byte("x")})
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorContains(t, err, "no-chat")
	}},
	{"CreatingTwiceAndStaleVersionsConflict", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		first := &store.Doc{ChatID: "chat-1", Name: "toolstate", Data: []byte("1")}
		require.NoError(t, e.s.PutDoc(e.ctx, first))
		err := e.s.PutDoc(e.ctx, &store.Doc{ChatID: "chat-1", Name: "toolstate", Data: []byte("again")})
		conflict(t, err, "chat-1", "toolstate", 0, first.Version)
		require.ErrorContains(t, err, "toolstate")

		stale := *first
		second := *first
		second.Data = []byte("2")
		require.NoError(t, e.s.PutDoc(e.ctx, &second))
		stale.Data = []byte("stale")
		conflict(t, e.s.PutDoc(e.ctx, &stale), "chat-1", "toolstate", first.Version, second.Version)
		require.Equal(t, first.Version, stale.Version, "a failed put leaves the document unchanged")

		got, err := e.s.GetDoc(e.ctx, "chat-1", "toolstate")
		require.NoError(t, err)
		require.Equal(t, []byte("2"), got.Data)
	}},
	{"DocsAndTheirChatAreVersionedIndependently", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "", nil)
		a := &store.Doc{ChatID: "chat-1", Name: "a", Data: []byte("a")}
		b := &store.Doc{ChatID: "chat-1", Name: "b", Data: []byte("b")}
		require.NoError(t, e.s.PutDoc(e.ctx, a))
		require.NoError(t, e.s.PutDoc(e.ctx, b))
		c.History = agentloop.History{agentloop.UserMessage("hi")}
		require.NoError(t, e.s.PutChat(e.ctx, c), "document writes do not move the chat's version")
		a.Data = []byte("a2")
		require.NoError(t, e.s.PutDoc(e.ctx, a), "chat and sibling writes do not move a document's version")
		b.Data = []byte("b2")
		require.NoError(t, e.s.PutDoc(e.ctx, b))
	}},
	{"DeleteNeedsTheStoredVersion", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		d := &store.Doc{ChatID: "chat-1", Name: "toolstate", Data: []byte("x")}
		require.NoError(t, e.s.PutDoc(e.ctx, d))
		conflict(t, e.s.DeleteDoc(e.ctx, "chat-1", "toolstate", d.Version+1000), "chat-1", "toolstate", d.Version+1000, d.Version)
		require.NoError(t, e.s.DeleteDoc(e.ctx, "chat-1", "toolstate", d.Version))
		_, err := e.s.GetDoc(e.ctx, "chat-1", "toolstate")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, e.s.DeleteDoc(e.ctx, "chat-1", "toolstate", d.Version), store.ErrNotFound)

		require.NoError(t, e.s.PutDoc(e.ctx, &store.Doc{ChatID: "chat-1", Name: "toolstate", Data: []byte("y")}), "a deleted document is made again from version 0")
	}},
	{"InvalidNamesAreRefused", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		for _, d := range []*store.Doc{nil, {ChatID: "chat-1"}, {}, {ChatID: "chat-1", Name: "a\x00"}, {ChatID: "a\x00", Name: "x"}} {
			require.ErrorIs(t, e.s.PutDoc(e.ctx, d), store.ErrInvalid)
		}
		_, err := e.s.GetDoc(e.ctx, "chat-1", "")
		require.ErrorIs(t, err, store.ErrInvalid)
		require.ErrorIs(t, e.s.DeleteDoc(e.ctx, "chat-1", "", 1), store.ErrInvalid)
	}},
	{"UpdatedFollowsTheClock", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		d := &store.Doc{ChatID: "chat-1", Name: "n"}
		require.NoError(t, e.s.PutDoc(e.ctx, d))
		e.clock.Advance(time.Hour)
		require.NoError(t, e.s.PutDoc(e.ctx, d))
		require.Equal(t, e.clock.Now(), d.Updated)
	}},
}
