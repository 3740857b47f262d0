package toolstate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/toolstate"
	"github.com/agentloop/agentloop/toolstate/toolstatetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stores returns a store of each implementation in this module (the
// store backends in their own modules run the suite on a DocStore of
// theirs).
func stores(t testing.TB) map[string]toolstate.Store {
	fs, err := toolstate.NewFileStore(t.TempDir())
	require.NoError(t, err)
	return map[string]toolstate.Store{
		"memory": toolstate.NewMemoryStore(),
		"file":   fs,
		"docs":   toolstate.NewDocStore(chatStore(t, memstore.New(memstore.Options{}))),
	}
}

// chatStore returns s with a chat for each of the conversations the
// suite uses, for a DocStore keeps tool states only for chats that exist.
func chatStore(t testing.TB, s store.Store) store.Store {
	t.Helper()
	for _, id := range toolstatetest.Conversations {
		require.NoError(t, s.PutChat(context.Background(), &store.Chat{ID: id}))
	}
	return s
}

func TestStore(t *testing.T) {
	for _, name := range []string{"memory", "file", "docs"} {
		t.Run(name, func(t *testing.T) {
			toolstatetest.Run(t, func(t testing.TB) toolstate.Store { return stores(t)[name] })
		})
	}
}

func TestFileStore_AnyIDIsASafeFileNameInTheDirectory(t *testing.T) {
	dir := t.TempDir()
	store, err := toolstate.NewFileStore(dir)
	require.NoError(t, err)
	ids := []string{"../../etc/passwd", "/abs", "a/b", ".", "..", "con", "x\x00y", "ünï cödé", strings.Repeat("long", 300), "A", "a",
		"aaa", "aaG"} // base64url gives these names that differ only in case
	seen := map[string]bool{}
	for _, id := range ids {
		p := store.Path(id)
		assert.Equal(t, dir, filepath.Dir(p), "id %q", id)
		assert.LessOrEqual(t, len(filepath.Base(p)), 255)
		folded := strings.ToLower(p) // as a case-insensitive file system sees it
		assert.False(t, seen[folded], "two ids share %s", p)
		seen[folded] = true
		require.NoError(t, store.Update(context.Background(), id, func(s *toolstate.State) error {
			s.RecordSuccess(id, newClock().Now())
			return nil
		}), "id %q", id)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	assert.Len(t, files, len(ids))
	for _, id := range ids {
		s, err := store.Load(context.Background(), id)
		require.NoError(t, err)
		assert.Equal(t, 1, s.Tools[id].Successes, "id %q", id)
	}
}

func TestFileStore_UnchangedStateIsNotRewritten(t *testing.T) {
	store, err := toolstate.NewFileStore(t.TempDir())
	require.NoError(t, err)
	ctx := context.Background()
	clk := newClock()
	require.NoError(t, store.Update(ctx, "c", func(s *toolstate.State) error { s.Sync(clk.Now(), "a"); return nil }))
	info1, err := os.Stat(store.Path("c"))
	require.NoError(t, err)
	require.NoError(t, os.Chmod(store.Path("c"), 0o400)) // a rewrite would replace the file and its mode
	require.NoError(t, store.Update(ctx, "c", func(s *toolstate.State) error { s.Sync(clk.Now(), "a"); return nil }))
	info2, err := os.Stat(store.Path("c"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o400), info2.Mode().Perm())
	assert.Equal(t, info1.Size(), info2.Size())
}

func TestFileStore_SaveReplacesACorruptFile(t *testing.T) {
	ctx := context.Background()
	store, err := toolstate.NewFileStore(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(store.Path("c"), []byte("garbage"), 0o600))
	s, err := toolstate.LoadOrFresh(ctx, store, "c", toolstate.Config{})
	require.ErrorIs(t, err, toolstate.ErrCorrupt)
	require.NoError(t, store.Save(ctx, "c", s))
	_, err = store.Load(ctx, "c")
	require.NoError(t, err)
}

// TestFileStore_ConcurrentProcessesLoseNothing runs several copies of the
// test binary that update one conversation in one directory at once.
func TestFileStore_ConcurrentProcessesLoseNothing(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("FileStore coordinates processes with flock(2), which this system lacks")
	}
	const procs, perProc = 4, 25
	dir := t.TempDir()
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileStoreHelperProcess$")
		cmd.Env = append(os.Environ(), "TOOLSTATE_HELPER_DIR="+dir, fmt.Sprintf("TOOLSTATE_HELPER_N=%d", perProc))
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait())
	}
	store, err := toolstate.NewFileStore(dir)
	require.NoError(t, err)
	s, err := store.Load(context.Background(), "shared chat")
	require.NoError(t, err)
	assert.Equal(t, procs*perProc, s.Tools["t"].Successes)
}

// TestFileStoreHelperProcess is the child of
// TestFileStore_ConcurrentProcessesLoseNothing; it does nothing otherwise.
func TestFileStoreHelperProcess(t *testing.T) {
	dir := os.Getenv("TOOLSTATE_HELPER_DIR")
	if dir == "" {
		t.Skip("run by TestFileStore_ConcurrentProcessesLoseNothing")
	}
	n, err := strconv.Atoi(os.Getenv("TOOLSTATE_HELPER_N"))
	require.NoError(t, err)
	store, err := toolstate.NewFileStore(dir)
	require.NoError(t, err)
	for range n {
		require.NoError(t, store.Update(context.Background(), "shared chat", func(s *toolstate.State) error {
			s.RecordSuccess("t", newClock().Now())
			return nil
		}))
	}
}

// BenchmarkRecordAndSave records one tool result in a conversation that
// knows 8 or 512 tools: with the file store, the cost should not depend on
// the number of tools.
func BenchmarkRecordAndSave(b *testing.B) {
	for _, name := range []string{"memory", "file"} {
		for _, tools := range []int{8, 512} {
			b.Run(fmt.Sprintf("%s/tools=%d", name, tools), func(b *testing.B) {
				store := stores(b)[name]
				clk := newClock()
				tr := &toolstate.Tracker{Store: store, Now: clk.Now}
				hooks := tr.Hooks("chat")
				for i := range tools {
					_ = hooks.AfterToolCall(context.Background(), agentloop.ToolCall{Name: fmt.Sprintf("tool_%d", i)}, &agentloop.ToolResult{})
				}
				call := agentloop.ToolCall{Name: "tool_0"}
				res := &agentloop.ToolResult{Content: "ok"}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					clk.Advance(1)
					if err := hooks.AfterToolCall(context.Background(), call, res); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// Two runs that meet the same corrupt file both repair it; the second
// repair must not undo what the first run recorded after its own.
func TestFileStore_SecondRepairOfACorruptFileLosesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := toolstate.NewFileStore(dir)
	require.NoError(t, err)
	for _, bad := range []string{"garbage", `{"version":7,"states":{}}`} {
		require.NoError(t, os.WriteFile(store.Path("c"), []byte(bad), 0o600))
		_, errA := store.Load(ctx, "c") // run A meets it
		_, errB := store.Load(ctx, "c") // run B meets it
		require.Error(t, errA)
		require.Error(t, errB)
		require.NoError(t, store.Discard(ctx, "c")) // A repairs
		require.NoError(t, store.Update(ctx, "c", func(s *toolstate.State) error {
			s.RecordSuccess("a", newClock().Now()) // and records
			return nil
		}))
		require.NoError(t, store.Discard(ctx, "c")) // B repairs
		s, err := store.Load(ctx, "c")
		require.NoError(t, err)
		assert.Equal(t, 1, s.Tools["a"].Successes, "A's record survives B's repair")
		require.NoError(t, store.Delete(ctx, "c"))
	}
	aside, err := filepath.Glob(filepath.Join(dir, "*.corrupt-*"))
	require.NoError(t, err)
	assert.Len(t, aside, 2, "both bad files are kept")
}
