//go:build !linux

package agentloop_test

import "time"

// cpuNow is not measured here: the cpu-ns/delta figures read 0.
func cpuNow() time.Duration { return 0 }

// threadCPUNow is not measured here: the thread-cpu-ns/delta figures read 0.
func threadCPUNow() time.Duration { return 0 }
