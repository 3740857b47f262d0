package main

import (
	"os"
	"path/filepath"
	"runtime"
)

// defaultDataDir is the folder of the SQLite database when neither -data
// nor -db names one: the user's own state folder, so that each user of a
// machine has their own chats and they survive a reboot.
// $XDG_STATE_HOME/agentloop-webchat when that is an absolute path; else,
// on Unix systems other than macOS, ~/.local/state/agentloop-webchat (the
// XDG default); else the user's configuration folder (os.UserConfigDir:
// ~/Library/Application Support on macOS, %AppData% on Windows). It is ""
// when the user has no home folder; the chats are then kept in memory.
func defaultDataDir() string {
	const name = "agentloop-webchat"
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, name)
	}
	switch runtime.GOOS {
	case "darwin", "ios", "windows", "plan9", "js", "wasip1":
	default:
		if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
			return filepath.Join(home, ".local", "state", name)
		}
	}
	if dir, err := os.UserConfigDir(); err == nil && filepath.IsAbs(dir) {
		return filepath.Join(dir, name)
	}
	return ""
}
