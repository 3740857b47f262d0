//go:build linux

package aisdk

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU starts measuring the CPU time of the calling goroutine, locked
// to its thread for the measure: unlike wall time, it does not count the
// time other processes of a loaded machine held the core. The returned
// function reports it per op as thread-cpu-ns/op and unlocks the thread.
func threadCPU(b *testing.B) (report func()) {
	runtime.LockOSThread()
	start := threadCPUNow()
	return func() {
		used := threadCPUNow() - start
		runtime.UnlockOSThread()
		if b.N > 0 && used > 0 {
			b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "thread-cpu-ns/op")
		}
	}
}

// threadCPUNow returns the CPU time of the calling thread (RUSAGE_THREAD).
func threadCPUNow() time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
