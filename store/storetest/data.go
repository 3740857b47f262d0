package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// largeHistory returns a history of n turns (3n messages) of about 2 KB
// each, with text that JSON must escape.
func largeHistory(n int) agentloop.History {
	filler := strings.Repeat("Grüße, 世界! \"quoted\" \\ back\tslash \x00 nul \u2028 ", 25)
	h := make(agentloop.History, 0, 3*n)
	for i := range n {
		id := fmt.Sprintf("call_%d", i)
		h = append(h,
			agentloop.Message{ID: fmt.Sprintf("u%d", i), Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart(fmt.Sprintf("%d: %s", i, filler))}},
			agentloop.Message{ID: fmt.Sprintf("a%d", i), Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
				agentloop.TextPart(filler),
				{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: id, Name: "lookup", Args: json.RawMessage(fmt.Sprintf(`{"n":%d,"q":"ä\"b"}`, i))}},
			}},
			agentloop.Message{Role: agentloop.RoleTool, Parts: []agentloop.Part{
				{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: id, Name: "lookup", Content: filler, IsError: i%7 == 0}},
			}},
		)
	}
	return h
}

// hostileIDs are ids that break stores which build queries, paths or
// patterns from them. Every backend must store each as given.
func hostileIDs() []string {
	return []string{
		`'; DROP TABLE agentloop_chats; --`,
		`"double" 'single' ` + "`back`",
		`%`, `_`, `a%`, `%_\`, `\\`, `*`, `?`,
		`../../etc/passwd`, `/`, `a/b`, `.`, `..`,
		"日本語のチャット 🎉", "\u202eRTL", "e\u0301 vs \u00e9", "\u00e9",
		" leading and trailing spaces ", "tab\there", "new\nline", "\r\n", "\x7f\x01",
		"$1", "{}", "null", "NULL",
		strings.Repeat("long", store.MaxIDLen/4),
	}
}

var dataTests = []test{
	{"LargeHistoryRoundTripsExactly", func(t *testing.T, su *suite) {
		e := su.env(t)
		h := largeHistory(1000)
		want, err := json.Marshal(h)
		require.NoError(t, err)
		require.Greater(t, len(want), 2<<20, "the history is several MB")
		c := e.create(e.s, "big", "", h)

		got, err := e.s.GetChat(e.ctx, "big")
		require.NoError(t, err)
		require.Len(t, got.History, len(h))
		require.Equal(t, h, got.History)
		gotJSON, err := json.Marshal(got.History)
		require.NoError(t, err)
		require.Equal(t, string(want), string(gotJSON))

		// And it can grow.
		got.History = append(got.History, agentloop.UserMessage("one more"))
		require.NoError(t, e.s.PutChat(e.ctx, got))
		require.NotEqual(t, c.Version, got.Version)
	}},
	{"LargeDocAndChunkRoundTrip", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		big := make([]byte, 4<<20)
		for i := range big {
			big[i] = byte(i * 7)
		}
		require.NoError(t, e.s.PutDoc(e.ctx, &store.Doc{ChatID: "chat-1", Name: "big", Data: big}))
		d, err := e.s.GetDoc(e.ctx, "chat-1", "big")
		require.NoError(t, err)
		require.Equal(t, big, d.Data)

		l, err := e.s.StartStream(e.ctx, "chat-1", minute)
		require.NoError(t, err)
		_, err = e.s.AppendChunks(e.ctx, l, big[:1<<20], big[1<<20:])
		require.NoError(t, err)
		require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamDone))
		got := collect(t, e.s.ReadStream(e.ctx, l.StreamID, 0))
		require.Len(t, got, 2)
		require.Equal(t, big, append(got[0].Data, got[1].Data...))
	}},
	{"HostileIDsAreStoredAsGiven", func(t *testing.T, su *suite) {
		e := su.env(t)
		ids := hostileIDs()
		for _, id := range ids {
			c := &store.Chat{ID: id, Owner: id, Title: id, History: agentloop.History{agentloop.UserMessage(id)}}
			require.NoError(t, e.s.PutChat(e.ctx, c), "id %q", id)
			require.NoError(t, e.s.PutDoc(e.ctx, &store.Doc{ChatID: id, Name: id, Data: []byte(id)}), "id %q", id)
		}
		for _, id := range ids {
			c, err := e.s.GetChat(e.ctx, id)
			require.NoError(t, err, "id %q", id)
			require.Equal(t, id, c.ID)
			require.Equal(t, id, c.Owner)
			require.Equal(t, id, c.Title)
			require.Equal(t, id, c.History[0].Text())
			d, err := e.s.GetDoc(e.ctx, id, id)
			require.NoError(t, err, "id %q", id)
			require.Equal(t, id, string(d.Data))

			// The owner is compared exactly: "%" and "_" are no patterns.
			page, err := e.s.ListChats(e.ctx, store.ListQuery{Owner: id})
			require.NoError(t, err)
			require.Len(t, page.Chats, 1, "owner %q lists only its own chat", id)
			require.Equal(t, id, page.Chats[0].ID)

			l, err := e.s.StartStream(e.ctx, id, minute)
			require.NoError(t, err, "id %q", id)
			active, err := e.s.ActiveStream(e.ctx, id)
			require.NoError(t, err)
			require.Equal(t, l.StreamID, active.ID)
			require.NoError(t, e.s.StopStream(e.ctx, id))
			require.NoError(t, e.s.EndStream(e.ctx, l, store.StreamCancelled))
		}
		// Deleting one id touches no other.
		c, err := e.s.GetChat(e.ctx, "%")
		require.NoError(t, err)
		require.NoError(t, e.s.DeleteChat(e.ctx, "%", c.Version))
		for _, id := range ids {
			if id == "%" {
				continue
			}
			_, err := e.s.GetChat(e.ctx, id)
			require.NoError(t, err, "id %q survives the delete of %q", id, "%")
		}
	}},
	{"BadIDsAreRefusedClearly", func(t *testing.T, su *suite) {
		e := su.env(t)
		for id, why := range map[string]string{
			"":                                    "empty",
			"a\x00b":                              "NUL",
			"\xff\xfe":                            "UTF-8",
			strings.Repeat("x", store.MaxIDLen+1): "longer than",
		} {
			err := e.s.PutChat(e.ctx, &store.Chat{ID: id})
			require.ErrorIs(t, err, store.ErrInvalid, "id %q", id)
			require.ErrorContains(t, err, why)
			_, err = e.s.GetChat(e.ctx, id)
			require.ErrorIs(t, err, store.ErrInvalid, "id %q", id)
			require.ErrorIs(t, e.s.DeleteChat(e.ctx, id, 1), store.ErrInvalid, "id %q", id)
			if id != "" { // "" names the documents of no chat
				_, err = e.s.GetDoc(e.ctx, id, "doc")
				require.ErrorIs(t, err, store.ErrInvalid, "id %q", id)
			}
			_, err = e.s.GetDoc(e.ctx, "", id)
			require.ErrorIs(t, err, store.ErrInvalid, "document name %q", id)
			_, err = e.s.StartStream(e.ctx, id, minute)
			require.ErrorIs(t, err, store.ErrInvalid, "id %q", id)
			_, err = e.s.ActiveStream(e.ctx, id)
			require.ErrorIs(t, err, store.ErrInvalid, "id %q", id)
			require.ErrorIs(t, e.s.StopStream(e.ctx, id), store.ErrInvalid, "id %q", id)
		}
	}},
}

var schemaTests = []test{
	{"ReopeningAMigratedDatabaseKeepsItsData", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "alice", sampleHistory())
		s2 := su.reopen(e)
		got, err := s2.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Equal(t, c, got)
		s3 := su.reopen(e)
		got.Title = "written through a third handle"
		require.NoError(t, s3.PutChat(e.ctx, got))
		conflict(t, e.s.PutChat(e.ctx, c), "chat-1", "", c.Version, got.Version)
	}},
	{"NewerSchemaIsRefused", func(t *testing.T, su *suite) {
		e := su.env(t)
		if su.opts.BumpSchema == nil || su.opts.Reopen == nil {
			t.Skip("Options.BumpSchema or Options.Reopen is nil")
		}
		e.create(e.s, "chat-1", "", nil)
		su.opts.BumpSchema(t, e.s)
		s2, err := su.opts.Reopen(t, e.s, e.clock.Now)
		if err == nil {
			_ = s2.Close()
		}
		require.ErrorIs(t, err, store.ErrNewerSchema)
		require.ErrorContains(t, err, "schema")
	}},
}
