package telemetry_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/syncbuf"
	"github.com/agentloop/agentloop/telemetry"
)

// harness records the spans and metrics of the hooks it makes.
type harness struct {
	t      *testing.T
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	hooks  *agentloop.Hooks
}

// tracerProvider returns the provider the hooks record with, for other
// instrumentation (otelhttp) to record into the same spans.
func (h *harness) tracerProvider() *sdktrace.TracerProvider { return h.tp }

// newHarness returns hooks made with opts, recording into memory with a
// TracerProvider made with tpOpts.
func newHarness(t *testing.T, opts telemetry.Options, tpOpts ...sdktrace.TracerProviderOption) *harness {
	t.Helper()
	h := &harness{t: t, spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	h.tp = sdktrace.NewTracerProvider(append(tpOpts, sdktrace.WithSpanProcessor(h.spans))...)
	opts.TracerProvider = h.tp
	opts.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	hooks, err := telemetry.NewHooks(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.hooks = hooks
	return h
}

// ended returns the ended spans named name, in the order they ended.
func (h *harness) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range h.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// one returns the one ended span named name.
func (h *harness) one(name string) sdktrace.ReadOnlySpan {
	h.t.Helper()
	got := h.ended(name)
	if len(got) != 1 {
		h.t.Fatalf("%d spans named %q ended, want 1; all: %v", len(got), name, h.names())
	}
	return got[0]
}

func (h *harness) names() []string {
	var names []string
	for _, s := range h.spans.Ended() {
		names = append(names, s.Name())
	}
	return names
}

// metrics collects the metrics recorded so far, by name.
func (h *harness) metrics() map[string]metricdata.Metrics {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		h.t.Fatal(err)
	}
	out := make(map[string]metricdata.Metrics)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// attr returns the value of key on s, and whether s has it.
func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// wantAttrs fails unless s has each of the given attributes with the
// given value (string, int, bool, float64 or []string).
func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	for key, w := range want {
		v, ok := attr(s, key)
		if !ok {
			t.Errorf("span %q has no %s; want %v", s.Name(), key, w)
			continue
		}
		var got any
		switch w.(type) {
		case string:
			got = v.AsString()
		case int:
			got = int(v.AsInt64())
		case bool:
			got = v.AsBool()
		case float64:
			got = v.AsFloat64()
		case []string:
			if !slices.Equal(v.AsStringSlice(), w.([]string)) {
				t.Errorf("span %q: %s = %q, want %q", s.Name(), key, v.AsStringSlice(), w)
			}
			continue
		}
		if got != w {
			t.Errorf("span %q: %s = %v, want %v", s.Name(), key, got, w)
		}
	}
}

// wantNoAttrs fails if s has any of keys.
func wantNoAttrs(t *testing.T, s sdktrace.ReadOnlySpan, keys ...string) {
	t.Helper()
	for _, key := range keys {
		if v, ok := attr(s, key); ok {
			t.Errorf("span %q has %s = %q; want none", s.Name(), key, v.Emit())
		}
	}
}

// wantChild fails unless child's parent is parent, in the same trace.
func wantChild(t *testing.T, parent, child sdktrace.ReadOnlySpan) {
	t.Helper()
	if child.Parent().SpanID() != parent.SpanContext().SpanID() || child.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("span %q: parent %s, want %q (%s)", child.Name(), child.Parent().SpanID(), parent.Name(), parent.SpanContext().SpanID())
	}
}

// describedModel gives a model a ModelInfo, as the providers' models have.
type describedModel struct {
	agentloop.Model
	info agentloop.ModelInfo
}

func (m describedModel) ModelInfo() agentloop.ModelInfo { return m.info }

// drain runs a stream to its end and returns its last item and error.
func drain(t *testing.T, seq func(func(agentloop.Item, error) bool)) (agentloop.Item, error) {
	t.Helper()
	return agentloop.Drain(seq)
}

// mustJSON unmarshals s, failing the test when it is not JSON.
func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, s)
	}
	return v
}

func newTextLogger(b *syncbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, nil))
}
