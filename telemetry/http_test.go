package telemetry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/telemetry"
)

// An app that serves aisdk.Handler through otelhttp gets one trace per
// chat request: the request's server span, with the run's span under it.
func TestAISDKHandlerRequestSpanIsTheRunSpansParent(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	tp := h.tracerProvider()
	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Hello!")}}), Hooks: h.hooks}
	srv := httptest.NewServer(otelhttp.NewHandler(&aisdk.Handler{Agent: agent}, "POST /api/chat", otelhttp.WithTracerProvider(tp)))
	defer srv.Close()

	body := `{"id":"chat-1","trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(stream), "Hello!") {
		t.Fatalf("status %d, err %v, body:\n%s", resp.StatusCode, err, stream)
	}
	// otelhttp ends its span after the handler returned, which is after
	// the run ended and the response was complete.
	var server sdktrace.ReadOnlySpan
	for _, s := range h.spans.Ended() {
		if s.SpanKind() == trace.SpanKindServer {
			server = s
		}
	}
	if server == nil {
		t.Fatalf("no server span ended; spans: %v", h.names())
	}
	run := h.one("invoke_agent")
	wantChild(t, server, run)
	wantChild(t, run, h.one("chat"))
}
