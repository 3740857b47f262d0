package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The default data folder is the user's own: each user's chats are theirs,
// and they outlive a reboot (not one folder in the shared temp folder).
func TestFlags_DefaultDataFolderIsPerUser(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(state, "agentloop-webchat"), cfg.data)
	assert.NotContains(t, cfg.data, os.TempDir()+string(filepath.Separator)+"agentloop-webchat")

	// A relative XDG_STATE_HOME is ignored (the XDG rule).
	t.Setenv("XDG_STATE_HOME", "relative/state")
	home := t.TempDir()
	t.Setenv("HOME", home)
	want := filepath.Join(home, ".local", "state", "agentloop-webchat")
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		dir, err := os.UserConfigDir()
		require.NoError(t, err)
		want = filepath.Join(dir, "agentloop-webchat")
	}
	assert.Equal(t, want, defaultDataDir())

	// -data still wins.
	cfg, err = parseFlags([]string{"-data", "/srv/chats"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "/srv/chats", cfg.data)
}

// The default folder is made with the user's permissions only, parents
// included, and the SQLite database opens in it.
func TestOpenStore_MakesThePrivateDefaultFolder(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	t.Setenv("XDG_STATE_HOME", state)
	cfg, err := parseFlags([]string{"-addr", "127.0.0.1:0"}, io.Discard)
	require.NoError(t, err)
	st, kind, err := openStore(t.Context(), cfg)
	require.NoError(t, err)
	defer st.Close()
	assert.Equal(t, "SQLite", kind)
	info, err := os.Stat(cfg.data)
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())
	}
	_, err = os.Stat(filepath.Join(cfg.data, "webchat.db"))
	assert.NoError(t, err)
}
