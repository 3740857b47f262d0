//go:build unix

package agentloop_test

import (
	"syscall"
	"time"
)

// cpuNow returns the CPU time the process has used (user and system, all
// threads): unlike wall time, it does not count the time other processes
// of a loaded machine held the cores.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
