package openai_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/openai"
)

// memTransport answers every request with body, from memory.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(m.body)), Request: r}, nil
}

// BenchmarkOpenAI_ParseRecordedStream parses a recorded stream (tool-call
// fragments, reasoning) from memory through Stream; ns/event and allocs/event
// are per SSE event.
func BenchmarkOpenAI_ParseRecordedStream(b *testing.B) {
	for _, name := range []string{"rig-nested-unicode-args-gpt41.sse", "vercel-xai-reasoning-single-chunk-tool-call.chunks.jsonl"} {
		b.Run(name, func(b *testing.B) {
			body := fixtureBody(b, name)
			events := bytes.Count(body, []byte("\ndata:")) + bytes.Count(body[:5], []byte("data:"))
			m, err := openai.New(openai.Config{Model: "m", BaseURL: "http://mem", HTTPClient: &http.Client{Transport: memTransport{body}}})
			if err != nil {
				b.Fatal(err)
			}
			req := &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("hi")}}
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			var allocs testingAllocs
			allocs.start()
			for b.Loop() {
				for _, err := range m.Stream(ctx, req) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			n := float64(b.N * events)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
			b.ReportMetric(float64(allocs.stop())/n, "allocs/event")
		})
	}
}
