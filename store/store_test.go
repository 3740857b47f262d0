package store_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
)

func TestConflictErrorsNameTheChatTheDocumentAndTheVersions(t *testing.T) {
	for _, tc := range []struct {
		err  store.ConflictError
		want string
	}{
		{store.ConflictError{ChatID: "c1", Want: 0, Have: 7}, `chat "c1" already exists (version 7)`},
		{store.ConflictError{ChatID: "c1", Want: 3, Have: 0}, `chat "c1" was read at version 3 and no longer exists`},
		{store.ConflictError{ChatID: "c1", Doc: "toolstate", Want: 3, Have: 5}, `document "toolstate" of chat "c1" was read at version 3 and is now at version 5`},
	} {
		var err error = &tc.err
		require.ErrorIs(t, err, store.ErrConflict)
		require.NotErrorIs(t, err, store.ErrNotFound)
		require.Contains(t, err.Error(), tc.want)
	}
}

func TestCorruptErrorsMatchErrCorruptAndUnwrapToTheCause(t *testing.T) {
	cause := fmt.Errorf("%w: bad", agentloop.ErrInvalidHistory)
	var err error = &store.CorruptError{ChatID: "c1", Version: 4, Err: cause}
	require.ErrorIs(t, err, store.ErrCorrupt)
	require.ErrorIs(t, err, agentloop.ErrInvalidHistory)
	require.Contains(t, err.Error(), `chat "c1" (version 4)`)
}

func TestActiveStreamErrorsMatchErrStreamActive(t *testing.T) {
	var err error = &store.ActiveStreamError{ChatID: "c1", StreamID: "s1"}
	require.ErrorIs(t, err, store.ErrStreamActive)
	require.Contains(t, err.Error(), `"s1"`)
}

func TestCheckIDAcceptsAnyTextAndRefusesWhatNoBackendCanKeep(t *testing.T) {
	for _, ok := range []string{"a", "'; DROP TABLE x; --", "%_", "日本", strings.Repeat("x", store.MaxIDLen)} {
		require.NoError(t, store.CheckID("chat id", ok))
	}
	for bad, why := range map[string]string{
		"":                                    "empty chat id",
		"a\x00":                               "NUL",
		"\xc3":                                "UTF-8",
		strings.Repeat("x", store.MaxIDLen+1): "longer than 512",
	} {
		err := store.CheckID("chat id", bad)
		require.ErrorIs(t, err, store.ErrInvalid)
		require.ErrorContains(t, err, why)
	}
}

func TestPageSizeDefaultsAndClamps(t *testing.T) {
	for limit, want := range map[int]int{0: store.DefaultListLimit, 1: 1, store.MaxListLimit + 1: store.MaxListLimit} {
		got, err := store.ListQuery{Limit: limit}.PageSize()
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := store.ListQuery{Limit: -1}.PageSize()
	require.ErrorIs(t, err, store.ErrInvalid)
}

func TestEndStatesAreTheFourEnds(t *testing.T) {
	for _, s := range []store.StreamState{store.StreamDone, store.StreamCancelled, store.StreamFailed, store.StreamInterrupted} {
		require.NoError(t, store.CheckEndState(s))
	}
	require.ErrorIs(t, store.CheckEndState(store.StreamActive), store.ErrInvalid)
	require.ErrorIs(t, store.CheckEndState(""), store.ErrInvalid)
}

func TestUpdateDocRetriesConflictsAndLosesNothing(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	defer s.Close()
	require.NoError(t, s.PutChat(ctx, &store.Chat{ID: "c"}))
	var wg sync.WaitGroup
	calls := make([]int, 8)
	for w := range calls {
		wg.Go(func() {
			for range 50 {
				_, err := store.UpdateDoc(ctx, s, "c", "n", func(d *store.Doc) error {
					calls[w]++
					n, _ := strconv.Atoi(string(d.Data))
					d.Data = strconv.AppendInt(nil, int64(n+1), 10)
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	d, err := s.GetDoc(ctx, "c", "n")
	require.NoError(t, err)
	require.Equal(t, "400", string(d.Data))
	total := 0
	for _, n := range calls {
		total += n
	}
	t.Logf("400 updates, fn called %d times", total)
}

func TestUpdateChatStopsAtFnErrorsAndMissingChats(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	defer s.Close()
	called := false
	_, err := store.UpdateChat(ctx, s, "missing", func(*store.Chat) error { called = true; return nil })
	require.ErrorIs(t, err, store.ErrNotFound)
	require.False(t, called)

	require.NoError(t, s.PutChat(ctx, &store.Chat{ID: "c"}))
	boom := errors.New("boom")
	_, err = store.UpdateChat(ctx, s, "c", func(c *store.Chat) error { c.Title = "x"; return boom })
	require.ErrorIs(t, err, boom)
	got, err := s.GetChat(ctx, "c")
	require.NoError(t, err)
	require.Empty(t, got.Title, "nothing was written")

	_, err = store.UpdateDoc(ctx, s, "missing", "n", func(*store.Doc) error { return nil })
	require.ErrorIs(t, err, store.ErrNotFound, "a document needs its chat")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = store.UpdateChat(cancelled, s, "c", func(*store.Chat) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
}
