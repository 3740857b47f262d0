package providertest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"testing"

	"github.com/agentloop/agentloop"
)

// MemClient is an HTTP client whose every request gets a 200 event stream
// of body, from memory: no server, no network. It is safe for concurrent
// use.
func MemClient(body []byte) *http.Client {
	return &http.Client{Transport: memTransport{body}}
}

type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(m.body)), Request: r}, nil
}

// BenchmarkStream measures parsing body, a recorded SSE stream, through
// m.Stream, where m reads body from memory (build it with [MemClient]). It
// reports, besides the usual, ns/event and allocs/event per SSE event.
func BenchmarkStream(b *testing.B, m agentloop.Model, body []byte) {
	b.Helper()
	events := bytes.Count(body, []byte("\ndata:")) + bytes.Count(body[:min(5, len(body))], []byte("data:"))
	req := UserRequest("hi")
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	before := mallocs()
	for b.Loop() {
		for _, err := range m.Stream(ctx, req) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	n := float64(b.N * max(events, 1))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	b.ReportMetric(float64(mallocs()-before)/n, "allocs/event")
}

func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}
