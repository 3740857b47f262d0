package telemetry_test

import (
	"context"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/telemetry"
)

// The process's global providers, set once: the global providers forward
// to the first ones set.
var (
	setGlobals    sync.Once
	globalSpans   = tracetest.NewSpanRecorder()
	globalMetrics = sdkmetric.NewManualReader()
)

// Nil providers mean the global ones, even when the app sets them after
// making the hooks (on the first run of this test). This is the only test
// that uses the globals.
func TestNilProvidersUseTheGlobalOnesSetLater(t *testing.T) {
	hooks, err := telemetry.NewHooks(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	setGlobals.Do(func() {
		otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(globalSpans)))
		otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(globalMetrics)))
	})
	spans, reader := globalSpans, globalMetrics
	before := len(spans.Ended())

	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("hi")}}), Hooks: hooks}
	if _, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	if n := len(spans.Ended()) - before; n != 2 {
		t.Errorf("the global TracerProvider got %d spans, want 2", n)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) == 0 {
		t.Error("the global MeterProvider got no metrics")
	}
}
