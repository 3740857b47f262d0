package toolstate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/toolstate"
)

func TestDocStore_StatesOfAChatThatDoesNotExistAreNotStored(t *testing.T) {
	ctx := context.Background()
	s := toolstate.NewDocStore(memstore.New(memstore.Options{}))
	err := s.Update(ctx, "no-such-chat", func(st *toolstate.State) error {
		st.RecordSuccess("a", newClock().Now())
		return nil
	})
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Contains(t, err.Error(), `"no-such-chat"`)
	st, err := s.Load(ctx, "no-such-chat")
	require.NoError(t, err, "a missing chat loads fresh")
	assert.Empty(t, st.Tools)
	assert.NoError(t, s.Delete(ctx, "no-such-chat"))
	assert.NoError(t, s.Discard(ctx, "no-such-chat"))
}

func TestDocStore_KeepsTheStateAsTheChatsDocumentAndGoesWithTheChat(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New(memstore.Options{})
	chat := &store.Chat{ID: "c"}
	require.NoError(t, ms.PutChat(ctx, chat))
	s := toolstate.NewDocStore(ms)
	require.NoError(t, s.Update(ctx, "c", func(st *toolstate.State) error {
		st.RecordFailure("a", "boom", newClock().Now())
		return nil
	}))
	doc, err := ms.GetDoc(ctx, "c", toolstate.DocName)
	require.NoError(t, err)
	st, err := toolstate.Unmarshal(doc.Data)
	require.NoError(t, err, "the document is Marshal's JSON")
	assert.Equal(t, 1, st.Tools["a"].Failures)

	// An update that changes nothing writes nothing.
	require.NoError(t, s.Update(ctx, "c", func(*toolstate.State) error { return nil }))
	again, err := ms.GetDoc(ctx, "c", toolstate.DocName)
	require.NoError(t, err)
	assert.Equal(t, doc.Version, again.Version)

	require.NoError(t, ms.DeleteChat(ctx, "c", chat.Version))
	_, err = ms.GetDoc(ctx, "c", toolstate.DocName)
	assert.ErrorIs(t, err, store.ErrNotFound, "deleting the chat deletes its tool states")
}

func TestDocStore_ACorruptDocumentIsReportedAndDiscarded(t *testing.T) {
	ctx := context.Background()
	ms := chatStore(t, memstore.New(memstore.Options{}))
	require.NoError(t, ms.PutDoc(ctx, &store.Doc{ChatID: "c", Name: toolstate.DocName, Data: []byte("not json")}))
	s := toolstate.NewDocStore(ms)
	_, err := s.Load(ctx, "c")
	require.ErrorIs(t, err, toolstate.ErrCorrupt)
	assert.Contains(t, err.Error(), `conversation "c"`)
	require.ErrorIs(t, s.Update(ctx, "c", func(*toolstate.State) error { return nil }), toolstate.ErrCorrupt)

	st, err := toolstate.LoadOrFresh(ctx, s, "c", toolstate.Config{})
	require.Error(t, err)
	assert.NotNil(t, st, "LoadOrFresh falls back to a fresh state")
	require.NoError(t, s.Discard(ctx, "c"))
	require.NoError(t, s.Update(ctx, "c", func(st *toolstate.State) error {
		st.RecordSuccess("a", newClock().Now())
		return nil
	}))
	st, err = s.Load(ctx, "c")
	require.NoError(t, err)
	assert.Equal(t, 1, st.Tools["a"].Successes)
}

func TestHandler_AResetOfAChatThatDoesNotExistIsA404(t *testing.T) {
	h := toolstate.NewHandler(toolstate.NewDocStore(memstore.New(memstore.Options{})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/agents/nope/tool-states/reset", strings.NewReader("{}")))
	assert.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `no chat \"nope\"`)
}
