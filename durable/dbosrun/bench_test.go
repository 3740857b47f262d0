package dbosrun_test

import (
	"testing"

	"github.com/agentloop/agentloop/durable/internal/enginetest"
)

// BenchmarkSteps_InProcess is the 200-step run of BenchmarkSteps_DBOS
// without an engine.
func BenchmarkSteps_InProcess(b *testing.B) { enginetest.Benchmark(b, nil) }

// BenchmarkSteps_DBOS is the cost per step of a 200-step run recorded by
// DBOS: on SQLite, and on PostgreSQL when AGENTLOOP_TEST_POSTGRES is set.
func BenchmarkSteps_DBOS(b *testing.B) {
	for _, be := range backends(b) {
		b.Run(be.name, func(b *testing.B) {
			enginetest.Benchmark(b, func(tb testing.TB) enginetest.Harness { return newDBOSHarness(tb, be) })
		})
	}
}
