//go:build !unix

package agentloop_test

import "time"

// cpuNow is not measured here: the cpu-ns/delta figures read 0.
func cpuNow() time.Duration { return 0 }
