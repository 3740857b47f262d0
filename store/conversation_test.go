package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
)

func set(data string) func(*store.Doc) error {
	return func(d *store.Doc) error { d.Data = []byte(data); return nil }
}

func TestUpdateConversationDoc_WritesTheChatsDocumentWhenTheChatExists(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Options{})
	chat := &store.Chat{ID: "c"}
	require.NoError(t, st.PutChat(ctx, chat))
	d, err := store.UpdateConversationDoc(ctx, st, "c", "toolstate", set("1"))
	require.NoError(t, err)
	assert.Equal(t, "c", d.ChatID)
	assert.Equal(t, "toolstate", d.Name)
	_, err = st.GetDoc(ctx, "", store.ChatlessName("c", "toolstate"))
	require.ErrorIs(t, err, store.ErrNotFound, "nothing written as a document of no chat")

	require.NoError(t, st.DeleteChat(ctx, "c", chat.Version))
	_, err = store.GetConversationDoc(ctx, st, "c", "toolstate")
	assert.ErrorIs(t, err, store.ErrNotFound, "the document went with its chat")
}

func TestUpdateConversationDoc_WritesADocumentOfNoChatWithoutAChat(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Options{})
	for _, id := range []string{"no-chat", ""} {
		d, err := store.UpdateConversationDoc(ctx, st, id, "summary", set("1"))
		require.NoError(t, err, "conversation %q", id)
		assert.Equal(t, "", d.ChatID)
		assert.Equal(t, "summary/"+id, d.Name)
		again, err := store.UpdateConversationDoc(ctx, st, id, "summary", set("2"))
		require.NoError(t, err)
		assert.Equal(t, d.Name, again.Name, "updated where it is")
		got, err := store.GetConversationDoc(ctx, st, id, "summary")
		require.NoError(t, err)
		assert.Equal(t, "2", string(got.Data))
	}
}

func TestUpdateConversationDoc_AnUnchangedDocumentIsNotWritten(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Options{})
	d, err := store.UpdateConversationDoc(ctx, st, "x", "n", set("same"))
	require.NoError(t, err)
	again, err := store.UpdateConversationDoc(ctx, st, "x", "n", set("same"))
	require.NoError(t, err)
	assert.Equal(t, d.Version, again.Version)
}

func TestUpdateConversationDoc_FnsErrorWritesNothing(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Options{})
	boom := errors.New("boom")
	_, err := store.UpdateConversationDoc(ctx, st, "x", "n", func(*store.Doc) error { return boom })
	require.ErrorIs(t, err, boom)
	_, err = store.GetConversationDoc(ctx, st, "x", "n")
	assert.ErrorIs(t, err, store.ErrNotFound)
}
