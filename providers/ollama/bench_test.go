package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"
)

var benchFixtures = []string{
	"rig-thinking-and-tool-call.ndjson",
	"rig-same-tool-four-calls.ndjson",
	"rig-text-done-reason-length.ndjson",
}

// BenchmarkStream parses a recorded stream from memory (an in-memory
// transport) through a reader and this package's mapping: the own reader
// of a Model that New builds, and the official client's Chat (a caller's
// Config.Client). One op is one model call, so B/op is the memory a stream
// allocates; ns/chunk and allocs/chunk are per NDJSON line.
func BenchmarkStream(b *testing.B) {
	for _, rd := range []struct {
		name  string
		model func(testing.TB, []byte) *Model
	}{{"own", memoryOwnModel}, {"client", memoryModel}} {
		for _, name := range benchFixtures {
			body := providertest.Testdata(b, name)
			chunks := bytes.Count(body, []byte("\n"))
			b.Run(rd.name+"/"+strings.TrimSuffix(name, ".ndjson"), func(b *testing.B) {
				m := rd.model(b, body)
				req := userRequest("hi")
				ctx := context.Background()
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					for _, err := range m.Stream(ctx, req) {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				runtime.ReadMemStats(&after)
				total := float64(b.N * chunks)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/chunk")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/chunk")
			})
		}
	}
}

// BenchmarkMapper measures this package's own share: mapping decoded chunks
// to agentloop chunks.
func BenchmarkMapper(b *testing.B) {
	for _, name := range benchFixtures {
		var resps []api.ChatResponse
		for line := range bytes.Lines(providertest.Testdata(b, name)) {
			var r api.ChatResponse
			require.NoError(b, json.Unmarshal(line, &r))
			resps = append(resps, r)
		}
		b.Run(strings.TrimSuffix(name, ".ndjson"), func(b *testing.B) {
			emit := func(agentloop.Chunk) bool { return true }
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for range b.N {
				var mp mapper
				for i := range resps {
					mp.add(&resps[i], emit)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			total := float64(b.N * len(resps))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/chunk")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/chunk")
		})
	}
}
