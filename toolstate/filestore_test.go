package toolstate_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/toolstate"
)

func record(t *testing.T, store toolstate.Store, id, tool string, clk *clock) {
	t.Helper()
	clk.Advance(1)
	require.NoError(t, store.Update(context.Background(), id, func(s *toolstate.State) error {
		s.RecordSuccess(tool, clk.Now())
		return nil
	}))
}

func journalLines(t *testing.T, store *toolstate.FileStore, id string) []string {
	t.Helper()
	data, err := os.ReadFile(store.Path(id) + ".log")
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// After the first update writes the snapshot, each update appends one line
// holding only what it changed to the journal and leaves the snapshot alone;
// after 64 records the snapshot is rewritten and the journal emptied.
func TestFileStore_UpdateAppendsOneJournalLineAndCompacts(t *testing.T) {
	store, err := toolstate.NewFileStore(t.TempDir())
	require.NoError(t, err)
	clk := newClock()
	for i := range 100 {
		record(t, store, "c", "t"+strings.Repeat("x", i%5), clk) // five tools
	}
	snap, err := os.Stat(store.Path("c"))
	require.NoError(t, err)
	record(t, store, "c", "t", clk)
	after, err := os.Stat(store.Path("c"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(snap, after) && snap.ModTime().Equal(after.ModTime()), "an update leaves the snapshot alone")
	lines := journalLines(t, store, "c")
	assert.Len(t, lines, (101-1)%64, "the first update wrote the snapshot, the 64th record compacted")
	assert.Contains(t, lines[len(lines)-1], `"tools":{"t":`)
	assert.NotContains(t, lines[len(lines)-1], `"tx"`, "a record holds only what changed")

	fresh, err := toolstate.NewFileStore(store.Dir())
	require.NoError(t, err)
	s, err := fresh.Load(context.Background(), "c")
	require.NoError(t, err)
	assert.Equal(t, 21, s.Tools["t"].Successes, "snapshot plus journal give every update")
	assert.Equal(t, 20, s.Tools["txxxx"].Successes)
}

// A journal line a crash cut short (no newline) is ignored, and the next
// update writes over it.
func TestFileStore_TornJournalLineIsIgnoredAndOverwritten(t *testing.T) {
	store, err := toolstate.NewFileStore(t.TempDir())
	require.NoError(t, err)
	clk := newClock()
	record(t, store, "c", "a", clk)
	record(t, store, "c", "a", clk)
	f, err := os.OpenFile(store.Path("c")+".log", os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"tools":{"a":{"status":"avail`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	other, err := toolstate.NewFileStore(store.Dir()) // as after a restart
	require.NoError(t, err)
	s, err := other.Load(context.Background(), "c")
	require.NoError(t, err)
	assert.Equal(t, 2, s.Tools["a"].Successes)
	record(t, other, "c", "a", clk)
	lines := journalLines(t, other, "c")
	require.Len(t, lines, 2)
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, "{") && strings.HasSuffix(l, "}"), "whole records only: %s", l)
	}
	s, err = store.Load(context.Background(), "c")
	require.NoError(t, err)
	assert.Equal(t, 3, s.Tools["a"].Successes)
}

// A corrupt journal record makes the state undecodable: Load names the
// journal, and Discard sets both files aside so the conversation starts
// fresh.
func TestFileStore_CorruptJournalRecordIsReportedAndDiscarded(t *testing.T) {
	store, err := toolstate.NewFileStore(t.TempDir())
	require.NoError(t, err)
	clk := newClock()
	record(t, store, "c", "a", clk)
	require.NoError(t, os.WriteFile(store.Path("c")+".log", []byte("{not json}\n"), 0o600))
	_, err = store.Load(context.Background(), "c")
	require.ErrorIs(t, err, toolstate.ErrCorrupt)
	assert.Contains(t, err.Error(), ".log")
	require.NoError(t, store.Discard(context.Background(), "c"))
	s, err := store.Load(context.Background(), "c")
	require.NoError(t, err)
	assert.Empty(t, s.Tools)
}

// Two FileStores on one directory (two processes) see each other's
// updates: the cached state is checked against the files before each use.
func TestFileStore_TwoStoresOnOneDirectorySeeEachOthersUpdates(t *testing.T) {
	dir := t.TempDir()
	a, err := toolstate.NewFileStore(dir)
	require.NoError(t, err)
	b, err := toolstate.NewFileStore(dir)
	require.NoError(t, err)
	clk := newClock()
	for i := range 150 { // crosses two compactions
		store := a
		if i%3 == 0 {
			store = b
		}
		record(t, store, "c", "t", clk)
	}
	for _, store := range []*toolstate.FileStore{a, b} {
		s, err := store.Load(context.Background(), "c")
		require.NoError(t, err)
		assert.Equal(t, 150, s.Tools["t"].Successes)
	}
	// A snapshot replaced behind the store's back is read again.
	require.NoError(t, os.WriteFile(a.Path("c"), []byte("garbage"), 0o600))
	_, err = a.Load(context.Background(), "c")
	require.ErrorIs(t, err, toolstate.ErrCorrupt)
}

// The journal compares tool states field by field: a field added to
// ToolState must be added to that comparison too.
func TestFileStore_ComparesEveryToolStateField(t *testing.T) {
	assert.Equal(t, 8, reflect.TypeFor[toolstate.ToolState]().NumField(),
		"ToolState changed: update sameToolState in filestore.go, then this count")
}
