package telemetry_test

import (
	"context"
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

// Nil providers mean the global ones, even when the app sets them after
// making the hooks. The test sets the process's globals: it is the only
// one that does.
func TestNilProvidersUseTheGlobalOnesSetLater(t *testing.T) {
	hooks, err := telemetry.NewHooks(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spans, reader := tracetest.NewSpanRecorder(), sdkmetric.NewManualReader()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))

	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("hi")}}), Hooks: hooks}
	if _, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")})); err != nil {
		t.Fatal(err)
	}
	if n := len(spans.Ended()); n != 2 {
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
