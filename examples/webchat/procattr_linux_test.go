package main

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the kernel kill cmd's process when the test binary
// dies (a test timeout's panic skips the cleanups that stop it).
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
