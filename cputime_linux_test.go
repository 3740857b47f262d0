//go:build linux

package agentloop_test

import (
	"syscall"
	"time"
	"unsafe"
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

// threadCPUNow returns the CPU time of the calling thread
// (CLOCK_THREAD_CPUTIME_ID, to the nanosecond). With the goroutine locked
// to its thread, it counts that goroutine's work alone: not the garbage
// collector's workers, nor idle threads spinning for work.
func threadCPUNow() time.Duration {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
