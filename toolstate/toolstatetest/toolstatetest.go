// Package toolstatetest checks that a [toolstate.Store] keeps the contract
// its doc states, so every implementation (and a DocStore on every chat
// store backend, each in its own module) runs the same tests.
package toolstatetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/toolstate"
)

// Conversations are the conversation ids the tests use. A store that keeps
// states only for known conversations (a [toolstate.DocStore] keeps them
// only for chats that exist) must know these.
var Conversations = []string{"c", "chat", "shared chat", "never-seen"}

// now is the tests' clock; the store's behaviour does not depend on it.
func now() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// Run runs the tests, each as a subtest of t on a store newStore makes.
func Run(t *testing.T, newStore func(testing.TB) toolstate.Store) {
	t.Run("ConcurrentUpdatesOfOneConversationLoseNothing", func(t *testing.T) {
		const goroutines, perGoroutine = 8, 40
		store := newStore(t)
		tr := &toolstate.Tracker{Store: store, Now: now}
		hooks := tr.Hooks("chat")
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 2*goroutines*perGoroutine) // two sends per iteration
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range perGoroutine {
					// Each goroutine records on its own tool and on a shared one.
					own := fmt.Sprintf("tool_%d", g)
					res := &agentloop.ToolResult{Content: "x", IsError: i%2 == 0}
					errs <- hooks.AfterToolCall(context.Background(), agentloop.ToolCall{Name: own}, res)
					errs <- store.Update(context.Background(), "chat", func(s *toolstate.State) error {
						s.RecordSuccess("shared", now())
						return nil
					})
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		s, err := store.Load(context.Background(), "chat")
		require.NoError(t, err)
		assert.Equal(t, goroutines*perGoroutine, s.Tools["shared"].Successes)
		for g := range goroutines {
			ts := s.Tools[fmt.Sprintf("tool_%d", g)]
			assert.Equal(t, perGoroutine/2, ts.Successes, "tool_%d", g)
			assert.Equal(t, perGoroutine/2, ts.Failures, "tool_%d", g)
		}
	})
	t.Run("MissingConversationIsFresh", func(t *testing.T) {
		store := newStore(t)
		s, err := store.Load(context.Background(), "never-seen")
		require.NoError(t, err)
		assert.Empty(t, s.Tools)
		assert.Equal(t, toolstate.Config{}, s.Config)
	})
	t.Run("LoadReturnsACopy", func(t *testing.T) {
		store := newStore(t)
		ctx := context.Background()
		require.NoError(t, store.Update(ctx, "c", func(s *toolstate.State) error {
			s.RecordSuccess("a", now())
			return nil
		}))
		s, err := store.Load(ctx, "c")
		require.NoError(t, err)
		s.RecordSuccess("a", now())
		again, err := store.Load(ctx, "c")
		require.NoError(t, err)
		assert.Equal(t, 1, again.Tools["a"].Successes)
	})
	t.Run("UpdateErrorKeepsTheOldState", func(t *testing.T) {
		store := newStore(t)
		ctx := context.Background()
		boom := fmt.Errorf("boom")
		err := store.Update(ctx, "c", func(s *toolstate.State) error {
			s.RecordSuccess("a", now())
			return boom
		})
		require.ErrorIs(t, err, boom)
		s, err := store.Load(ctx, "c")
		require.NoError(t, err)
		assert.Empty(t, s.Tools)
	})
	t.Run("EmptyIDIsRefused", func(t *testing.T) {
		store := newStore(t)
		_, err := store.Load(context.Background(), "")
		assert.ErrorIs(t, err, toolstate.ErrEmptyID)
		assert.ErrorIs(t, store.Update(context.Background(), "", func(*toolstate.State) error { return nil }), toolstate.ErrEmptyID)
		assert.ErrorIs(t, store.Delete(context.Background(), ""), toolstate.ErrEmptyID)
	})
	t.Run("DeleteMakesTheConversationFresh", func(t *testing.T) {
		store := newStore(t)
		ctx := context.Background()
		require.NoError(t, store.Update(ctx, "c", func(s *toolstate.State) error {
			s.RecordSuccess("a", now())
			return nil
		}))
		require.NoError(t, store.Delete(ctx, "c"))
		require.NoError(t, store.Delete(ctx, "c"), "deleting a missing id is fine")
		s, err := store.Load(ctx, "c")
		require.NoError(t, err)
		assert.Empty(t, s.Tools)
	})
	t.Run("InvalidStateIsNotStored", func(t *testing.T) {
		store := newStore(t)
		ctx := context.Background()
		now := now()
		require.NoError(t, store.Update(ctx, "c", func(s *toolstate.State) error {
			s.RecordSuccess("a", now)
			return nil
		}))
		err := store.Update(ctx, "c", func(s *toolstate.State) error {
			s.RecordSuccess("a", now)
			s.Config.Dependencies = map[string][]string{"a": {"a"}}
			return nil
		})
		require.ErrorIs(t, err, toolstate.ErrInvalid)
		assert.Contains(t, err.Error(), `tool "a" depends on itself`)
		s, err := store.Load(ctx, "c")
		require.NoError(t, err, "the stored state is still readable")
		assert.Equal(t, 1, s.Tools["a"].Successes, "the stored state is the old one")
	})
	t.Run("DiscardLeavesADecodableStateAlone", func(t *testing.T) {
		store := newStore(t)
		ctx := context.Background()
		require.NoError(t, store.Discard(ctx, "c"), "nothing stored")
		require.NoError(t, store.Update(ctx, "c", func(s *toolstate.State) error {
			s.RecordSuccess("a", now())
			return nil
		}))
		require.NoError(t, store.Discard(ctx, "c"))
		s, err := store.Load(ctx, "c")
		require.NoError(t, err)
		assert.Equal(t, 1, s.Tools["a"].Successes)
		assert.ErrorIs(t, store.Discard(ctx, ""), toolstate.ErrEmptyID)
	})
}
