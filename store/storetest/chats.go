package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// sampleHistory is a history with every kind of part, ending paused: call
// c2 awaits approval.
func sampleHistory() agentloop.History {
	return agentloop.History{
		agentloop.SystemMessage("You are terse."),
		{ID: "msg-u1", Role: agentloop.RoleUser, Parts: []agentloop.Part{
			agentloop.TextPart("Add 2 and 3, then delete /tmp/x."),
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Filename: "a.png", Data: []byte{0x89, 'P', 'N', 'G', 0}}},
		}},
		{ID: "msg-a1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartReasoning, Text: "Two tools.", Signature: "sig=="},
			agentloop.TextPart("On it."),
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "add", Args: json.RawMessage(`{"a":2,"b":3}`)}},
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c2", Name: "delete", Args: json.RawMessage(`{"path":"/tmp/x"}`)}},
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c2", ID: "ap-1"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Name: "add", Content: "5"}},
		}},
	}
}

// create stores a new chat and returns it as stored.
func (e *env) create(s store.Store, id, owner string, h agentloop.History) *store.Chat {
	e.t.Helper()
	c := &store.Chat{ID: id, Owner: owner, Title: "title of " + id, History: h}
	require.NoError(e.t, s.PutChat(e.ctx, c), "creating chat %q", id)
	return c
}

// conflict asserts that err is a *store.ConflictError with the given
// versions.
func conflict(t *testing.T, err error, chatID, doc string, want, have int64) {
	t.Helper()
	require.ErrorIs(t, err, store.ErrConflict)
	var ce *store.ConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, store.ConflictError{ChatID: chatID, Doc: doc, Want: want, Have: have}, *ce)
	require.Contains(t, err.Error(), chatID)
}

var chatTests = []test{
	{"CreateThenGetRoundTrips", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := &store.Chat{ID: "chat-1", Owner: "alice", Title: "Sums", History: sampleHistory()}
		require.NoError(t, e.s.PutChat(e.ctx, c))
		require.NotZero(t, c.Version, "PutChat sets the new version")
		require.Equal(t, e.clock.Now(), c.Created, "PutChat sets the creation time from the store's clock")
		require.Equal(t, c.Created, c.Updated)

		got, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, c, got)
		require.Equal(t, time.UTC, got.Updated.Location())
	}},
	{"TimesAreUTCMicroseconds", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.clock.Advance(1234567 * time.Nanosecond)
		c := e.create(e.s, "chat-1", "", nil)
		want := e.clock.Now().Truncate(time.Microsecond)
		require.Equal(t, want, c.Created)
		got, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, want, got.Created)
		require.Equal(t, time.UTC, got.Created.Location())
	}},
	{"MissingChatIsNotFound", func(t *testing.T, su *suite) {
		e := su.env(t)
		_, err := e.s.GetChat(e.ctx, "nope")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorContains(t, err, "nope")
	}},
	{"NilHistoryReadsBackEmpty", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		got, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Empty(t, got.History)
	}},
	{"CreatingTwiceConflicts", func(t *testing.T, su *suite) {
		e := su.env(t)
		first := e.create(e.s, "chat-1", "alice", sampleHistory())
		second := &store.Chat{ID: "chat-1", Owner: "mallory", History: agentloop.History{agentloop.UserMessage("mine now")}}
		err := e.s.PutChat(e.ctx, second)
		conflict(t, err, "chat-1", "", 0, first.Version)
		require.Zero(t, second.Version, "a failed put leaves the chat unchanged")
		got, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, first, got, "the stored chat is the first one")
	}},
	{"StaleVersionConflicts", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "", nil)
		a, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		b, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)

		b.History = append(b.History, agentloop.UserMessage("from b"))
		require.NoError(t, e.s.PutChat(e.ctx, b))
		require.NotEqual(t, c.Version, b.Version)

		a.History = append(a.History, agentloop.UserMessage("from a"))
		err = e.s.PutChat(e.ctx, a)
		conflict(t, err, "chat-1", "", c.Version, b.Version)
		require.Equal(t, c.Version, a.Version, "a failed put leaves the chat unchanged")

		got, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, b.History, got.History, "the later writer did not overwrite")
	}},
	{"UpdateKeepsCreatedAndMovesUpdated", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "alice", sampleHistory())
		created := c.Created
		e.clock.Advance(time.Minute)
		c.Title = "renamed"
		c.Created = time.Time{} // ignored
		require.NoError(t, e.s.PutChat(e.ctx, c))
		require.Equal(t, created, c.Created)
		require.Equal(t, e.clock.Now(), c.Updated)
		got, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, c, got)
	}},
	{"PutWithVersionOfMissingChatConflicts", func(t *testing.T, su *suite) {
		e := su.env(t)
		err := e.s.PutChat(e.ctx, &store.Chat{ID: "ghost", Version: 7})
		conflict(t, err, "ghost", "", 7, 0)
		_, err = e.s.GetChat(e.ctx, "ghost")
		require.ErrorIs(t, err, store.ErrNotFound, "a put with a version never creates")
	}},
	{"DeleteRemovesChatDocsAndStreams", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "", sampleHistory())
		require.NoError(t, e.s.PutDoc(e.ctx, &store.Doc{ChatID: "chat-1", Name: "toolstate", Data: []byte("{}")}))
		l, err := e.s.StartStream(e.ctx, "chat-1", time.Minute)
		require.NoError(t, err)
		_, err = e.s.AppendChunks(e.ctx, l, []byte("a"))
		require.NoError(t, err)
		other := e.create(e.s, "chat-2", "", nil)

		conflict(t, e.s.DeleteChat(e.ctx, "chat-1", c.Version+1000), "chat-1", "", c.Version+1000, c.Version)
		require.NoError(t, e.s.DeleteChat(e.ctx, "chat-1", c.Version))

		_, err = e.s.GetChat(e.ctx, "chat-1")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = e.s.GetDoc(e.ctx, "chat-1", "toolstate")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = e.s.GetStream(e.ctx, l.StreamID)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = e.s.AppendChunks(e.ctx, l, []byte("b"))
		require.ErrorIs(t, err, store.ErrLeaseLost, "the holder of a deleted chat's stream can no longer write")
		require.ErrorIs(t, e.s.DeleteChat(e.ctx, "chat-1", c.Version), store.ErrNotFound)

		got, err := e.s.GetChat(e.ctx, "chat-2")
		require.NoError(t, err)
		require.Equal(t, other.Version, got.Version, "other chats are untouched")
	}},
	{"VersionsAreNeverReusedAfterDelete", func(t *testing.T, su *suite) {
		e := su.env(t)
		old := e.create(e.s, "chat-1", "", nil)
		stale := *old
		require.NoError(t, e.s.DeleteChat(e.ctx, "chat-1", old.Version))
		fresh := e.create(e.s, "chat-1", "", agentloop.History{agentloop.UserMessage("new")})
		require.NotEqual(t, old.Version, fresh.Version)

		stale.History = agentloop.History{agentloop.UserMessage("stale")}
		conflict(t, e.s.PutChat(e.ctx, &stale), "chat-1", "", old.Version, fresh.Version)
	}},
	{"StoreKeepsNoReferenceToCallersHistory", func(t *testing.T, su *suite) {
		e := su.env(t)
		h := sampleHistory()
		e.create(e.s, "chat-1", "", h)
		h[1].Parts[0].Text = "changed after the put"
		h[2].Parts[2].ToolCall.Args[1] = 'X'

		got, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, sampleHistory(), got.History)
		got.History[1].Parts[0].Text = "changed after the get"
		again, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, sampleHistory(), again.History)
	}},
	{"InvalidChatsAreRefused", func(t *testing.T, su *suite) {
		e := su.env(t)
		for name, c := range map[string]*store.Chat{
			"nil":             nil,
			"empty id":        {},
			"NUL in owner":    {ID: "c", Owner: "a\x00b"},
			"NUL in title":    {ID: "c", Title: "a\x00b"},
			"non-UTF-8 title": {ID: "c", Title: "\xff"},
		} {
			err := e.s.PutChat(e.ctx, c)
			require.ErrorIs(t, err, store.ErrInvalid, name)
		}
		_, err := e.s.GetChat(e.ctx, "c")
		require.ErrorIs(t, err, store.ErrNotFound, "nothing was stored")
	}},
	{"CorruptHistoryIsReportedAndTheChatStartsFresh", func(t *testing.T, su *suite) {
		e := su.env(t)
		if su.opts.Corrupt == nil {
			t.Skip("Options.Corrupt is nil")
		}
		c := e.create(e.s, "chat-1", "alice", sampleHistory())
		su.opts.Corrupt(t, e.s, "chat-1")

		got, err := e.s.GetChat(e.ctx, "chat-1")
		require.ErrorIs(t, err, store.ErrCorrupt)
		var ce *store.CorruptError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, "chat-1", ce.ChatID)
		require.ErrorContains(t, err, `"chat-1"`)
		require.NotNil(t, got, "the chat's other fields are returned with the error")
		require.Nil(t, got.History)
		require.Equal(t, "alice", got.Owner, "the owner still guards the chat")
		require.Equal(t, c.Title, got.Title)
		require.Equal(t, ce.Version, got.Version)

		page, err := e.s.ListChats(e.ctx, store.ListQuery{Owner: "alice"})
		require.NoError(t, err)
		require.Len(t, page.Chats, 1, "a corrupt chat is still listed")
		_, err = store.UpdateChat(e.ctx, e.s, "chat-1", func(*store.Chat) error {
			t.Error("UpdateChat called fn with a corrupt chat")
			return nil
		})
		require.ErrorIs(t, err, store.ErrCorrupt)

		got.History = agentloop.History{agentloop.UserMessage("starting over")}
		require.NoError(t, e.s.PutChat(e.ctx, got), "a put with the corrupt row's version replaces it")
		fresh, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, got.History, fresh.History)
	}},
}
