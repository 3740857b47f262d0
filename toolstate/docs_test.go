package toolstate_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/toolstate"
)

// backends are the stores the tests keep tool states in: every backend
// passes store's conformance suite, so memstore covers the toolstate side
// (store/sqlitestore's tests run toolstate on SQLite replicas too).
func backends(t testing.TB) map[string]store.Store {
	return map[string]store.Store{
		"memstore": chatStore(t, memstore.New(memstore.Options{})),
	}
}

// testChats are the conversation ids the tests use; tool states are kept
// only for chats that exist, so chatStore makes them.
var testChats = []string{"c", "chat", "shared chat", "never-seen"}

// chatStore returns s with a chat for each of testChats.
func chatStore(t testing.TB, s store.Store) store.Store {
	t.Helper()
	for _, id := range testChats {
		require.NoError(t, s.PutChat(context.Background(), &store.Chat{ID: id}))
	}
	return s
}

func succeed(tool string) func(*toolstate.State) error {
	return func(s *toolstate.State) error {
		s.RecordSuccess(tool, newClock().Now())
		return nil
	}
}

func TestUpdate_ConcurrentUpdatesOfOneConversationLoseNothing(t *testing.T) {
	const goroutines, perGoroutine = 8, 40
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			clk := newClock()
			tr := &toolstate.Tracker{Docs: st, Now: clk.Now}
			ctx := startRun(t, tr, "chat")
			hooks := tr.Hooks()
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
						errs <- hooks.AfterToolCall(ctx, agentloop.ToolCall{Name: own}, res)
						errs <- toolstate.Update(context.Background(), st, "chat", succeed("shared"))
					}
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			s, err := toolstate.Load(context.Background(), st, "chat")
			require.NoError(t, err)
			assert.Equal(t, goroutines*perGoroutine, s.Tools["shared"].Successes)
			for g := range goroutines {
				ts := s.Tools[fmt.Sprintf("tool_%d", g)]
				assert.Equal(t, perGoroutine/2, ts.Successes, "tool_%d", g)
				assert.Equal(t, perGoroutine/2, ts.Failures, "tool_%d", g)
			}
		})
	}
}

// startRun calls the tracker's OnRunStart for a run of conversation id and
// returns the run's context, as the loop would pass it to the other hooks.
func startRun(t testing.TB, tr *toolstate.Tracker, id string) context.Context {
	t.Helper()
	ctx, err := tr.Hooks().OnRunStart(context.Background(), agentloop.RunStart{ConversationID: id})
	require.NoError(t, err)
	return ctx
}

func TestLoad_MissingConversationIsFresh(t *testing.T) {
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, err := toolstate.Load(context.Background(), st, "never-seen")
			require.NoError(t, err)
			assert.Empty(t, s.Tools)
			assert.Equal(t, toolstate.Config{}, s.Config)
		})
	}
}

func TestLoad_ReturnsACopy(t *testing.T) {
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			require.NoError(t, toolstate.Update(ctx, st, "c", succeed("a")))
			s, err := toolstate.Load(ctx, st, "c")
			require.NoError(t, err)
			s.RecordSuccess("a", newClock().Now())
			again, err := toolstate.Load(ctx, st, "c")
			require.NoError(t, err)
			assert.Equal(t, 1, again.Tools["a"].Successes)
		})
	}
}

func TestUpdate_AnErrorKeepsTheOldState(t *testing.T) {
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			boom := fmt.Errorf("boom")
			err := toolstate.Update(ctx, st, "c", func(s *toolstate.State) error {
				s.RecordSuccess("a", newClock().Now())
				return boom
			})
			require.ErrorIs(t, err, boom)
			s, err := toolstate.Load(ctx, st, "c")
			require.NoError(t, err)
			assert.Empty(t, s.Tools)
		})
	}
}

func TestDocs_EmptyIDAndNilDocsAreRefused(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Options{})
	_, err := toolstate.Load(ctx, st, "")
	assert.ErrorIs(t, err, toolstate.ErrEmptyID)
	assert.ErrorIs(t, toolstate.Update(ctx, st, "", succeed("a")), toolstate.ErrEmptyID)
	assert.ErrorIs(t, toolstate.Discard(ctx, st, ""), toolstate.ErrEmptyID)
	_, err = toolstate.Load(ctx, nil, "c")
	assert.ErrorContains(t, err, "toolstate: no store")
}

func TestUpdate_AnInvalidStateIsNotStored(t *testing.T) {
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := newClock().Now()
			require.NoError(t, toolstate.Update(ctx, st, "c", succeed("a")))
			err := toolstate.Update(ctx, st, "c", func(s *toolstate.State) error {
				s.RecordSuccess("a", now)
				s.Config.Dependencies = map[string][]string{"a": {"a"}}
				return nil
			})
			require.ErrorIs(t, err, toolstate.ErrInvalidState)
			assert.Contains(t, err.Error(), `tool "a" depends on itself`)
			s, err := toolstate.Load(ctx, st, "c")
			require.NoError(t, err, "the stored state is still readable")
			assert.Equal(t, 1, s.Tools["a"].Successes, "the stored state is the old one")
		})
	}
}

func TestDiscard_LeavesADecodableStateAlone(t *testing.T) {
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			require.NoError(t, toolstate.Discard(ctx, st, "c"), "nothing stored")
			require.NoError(t, toolstate.Discard(ctx, st, "no-such-chat"), "no chat")
			require.NoError(t, toolstate.Update(ctx, st, "c", succeed("a")))
			require.NoError(t, toolstate.Discard(ctx, st, "c"))
			s, err := toolstate.Load(ctx, st, "c")
			require.NoError(t, err)
			assert.Equal(t, 1, s.Tools["a"].Successes)
		})
	}
}

// Two runs that meet the same corrupt document both repair it; the second
// repair must not undo what the first run recorded after its own.
func TestDiscard_ASecondRepairOfACorruptStateLosesNothing(t *testing.T) {
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			for _, bad := range []string{"garbage", `{"version":7,"states":{}}`} {
				written, err := store.UpdateDoc(ctx, st, "c", toolstate.DocName, func(d *store.Doc) error {
					d.Data = []byte(bad)
					return nil
				})
				require.NoError(t, err)
				_, errA := toolstate.Load(ctx, st, "c") // run A meets it
				_, errB := toolstate.Load(ctx, st, "c") // run B meets it
				require.Error(t, errA)
				require.Error(t, errB)
				require.NoError(t, toolstate.Discard(ctx, st, "c"))              // A repairs
				require.NoError(t, toolstate.Update(ctx, st, "c", succeed("a"))) // and records
				require.NoError(t, toolstate.Discard(ctx, st, "c"))              // B repairs
				s, err := toolstate.Load(ctx, st, "c")
				require.NoError(t, err)
				assert.Equal(t, 1, s.Tools["a"].Successes, "A's record survives B's repair")
				kept, err := st.GetDoc(ctx, "c", toolstate.CorruptName(toolstate.DocName, written.Version))
				require.NoError(t, err, "the bad state is kept aside")
				assert.Equal(t, bad, string(kept.Data))
				d, err := st.GetDoc(ctx, "c", toolstate.DocName)
				require.NoError(t, err)
				require.NoError(t, st.DeleteDoc(ctx, "c", toolstate.DocName, d.Version))
			}
		})
	}
}

// A conversation that is no chat of the store (a stateless chat, a
// terminal app) keeps its states as a document of no chat.
func TestUpdate_StatesOfAConversationWithoutAChatAreADocumentOfNoChat(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Options{})
	require.NoError(t, toolstate.Update(ctx, st, "no-such-chat", succeed("a")))
	doc, err := st.GetDoc(ctx, "", store.ChatlessName("no-such-chat", toolstate.DocName))
	require.NoError(t, err)
	s, err := toolstate.Unmarshal(doc.Data)
	require.NoError(t, err)
	assert.Equal(t, 1, s.Tools["a"].Successes)
	s, err = toolstate.Load(ctx, st, "no-such-chat")
	require.NoError(t, err)
	assert.Equal(t, 1, s.Tools["a"].Successes)
}

func TestUpdate_KeepsTheStateAsTheChatsDocumentAndGoesWithTheChat(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New(memstore.Options{})
	chat := &store.Chat{ID: "c"}
	require.NoError(t, ms.PutChat(ctx, chat))
	require.NoError(t, toolstate.Update(ctx, ms, "c", func(st *toolstate.State) error {
		st.RecordFailure("a", "boom", newClock().Now())
		return nil
	}))
	doc, err := ms.GetDoc(ctx, "c", toolstate.DocName)
	require.NoError(t, err)
	st, err := toolstate.Unmarshal(doc.Data)
	require.NoError(t, err, "the document is Marshal's JSON")
	assert.Equal(t, 1, st.Tools["a"].Failures)

	// An update that changes nothing writes nothing.
	require.NoError(t, toolstate.Update(ctx, ms, "c", func(*toolstate.State) error { return nil }))
	again, err := ms.GetDoc(ctx, "c", toolstate.DocName)
	require.NoError(t, err)
	assert.Equal(t, doc.Version, again.Version)

	require.NoError(t, ms.DeleteChat(ctx, "c", chat.Version))
	_, err = ms.GetDoc(ctx, "c", toolstate.DocName)
	assert.ErrorIs(t, err, store.ErrNotFound, "deleting the chat deletes its tool states")
}

func TestLoad_ACorruptDocumentIsReportedAndDiscarded(t *testing.T) {
	ctx := context.Background()
	ms := chatStore(t, memstore.New(memstore.Options{}))
	require.NoError(t, ms.PutDoc(ctx, &store.Doc{ChatID: "c", Name: toolstate.DocName, Data: []byte("not json")}))
	_, err := toolstate.Load(ctx, ms, "c")
	require.ErrorIs(t, err, toolstate.ErrCorrupt)
	assert.Contains(t, err.Error(), `conversation "c"`)
	require.ErrorIs(t, toolstate.Update(ctx, ms, "c", func(*toolstate.State) error { return nil }), toolstate.ErrCorrupt)

	st, err := toolstate.LoadOrFresh(ctx, ms, "c", toolstate.Config{FailureThreshold: 5})
	require.ErrorIs(t, err, toolstate.ErrCorrupt)
	require.NotNil(t, st, "LoadOrFresh falls back to a fresh state")
	assert.Equal(t, 5, st.Config.FailureThreshold)
	require.NoError(t, toolstate.Discard(ctx, ms, "c"))
	require.NoError(t, toolstate.Update(ctx, ms, "c", succeed("a")))
	st, err = toolstate.Load(ctx, ms, "c")
	require.NoError(t, err)
	assert.Equal(t, 1, st.Tools["a"].Successes)
}

func TestHandler_AResetOfAConversationWithoutAChatResetsItsStates(t *testing.T) {
	st := memstore.New(memstore.Options{})
	require.NoError(t, toolstate.Update(context.Background(), st, "nope", func(s *toolstate.State) error {
		s.Disable("a", "off", newClock().Now())
		return nil
	}))
	h := toolstate.NewHandler(st, toolstate.HandlerOptions{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/agents/nope/tool-states/reset", strings.NewReader("{}")))
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	s, err := toolstate.Load(context.Background(), st, "nope")
	require.NoError(t, err)
	assert.Equal(t, toolstate.StatusAvailable, s.Tools["a"].Status)
}

// BenchmarkRecordAndSave records one tool result in a conversation that
// knows 8 or 512 tools, as a document of the chat.
func BenchmarkRecordAndSave(b *testing.B) {
	for _, name := range []string{"memstore"} {
		for _, tools := range []int{8, 512} {
			b.Run(fmt.Sprintf("%s/tools=%d", name, tools), func(b *testing.B) {
				st := backends(b)[name]
				clk := newClock()
				tr := &toolstate.Tracker{Docs: st, Now: clk.Now}
				ctx := startRun(b, tr, "chat")
				hooks := tr.Hooks()
				for i := range tools {
					_ = hooks.AfterToolCall(ctx, agentloop.ToolCall{Name: fmt.Sprintf("tool_%d", i)}, &agentloop.ToolResult{})
				}
				call := agentloop.ToolCall{Name: "tool_0"}
				res := &agentloop.ToolResult{Content: "ok"}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					clk.Advance(1)
					if err := hooks.AfterToolCall(ctx, call, res); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
