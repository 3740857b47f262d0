package openai_test

import "runtime"

// testingAllocs counts heap allocations between start and stop.
type testingAllocs struct{ before uint64 }

func (a *testingAllocs) start() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	a.before = ms.Mallocs
}

func (a *testingAllocs) stop() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs - a.before
}
