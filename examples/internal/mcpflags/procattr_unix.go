//go:build unix

package mcpflags

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a process group of its own, so that the
// Ctrl-C a terminal sends to the program's group (the quickstart stops an
// answer with it) does not kill the MCP servers the program started; the
// program ends them itself (Flags.Close).
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
