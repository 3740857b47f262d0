package telemetry_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/telemetry"
)

// point returns the data point of h whose attributes are exactly want.
func point[N int64 | float64](t *testing.T, h metricdata.Histogram[N], want ...attribute.KeyValue) metricdata.HistogramDataPoint[N] {
	t.Helper()
	set := attribute.NewSet(want...)
	for _, dp := range h.DataPoints {
		if dp.Attributes.Equals(&set) {
			return dp
		}
	}
	var got []string
	for _, dp := range h.DataPoints {
		got = append(got, dp.Attributes.Encoded(attribute.DefaultEncoder()))
	}
	t.Fatalf("no data point with %s; have %q", set.Encoded(attribute.DefaultEncoder()), got)
	return metricdata.HistogramDataPoint[N]{}
}

func TestMetricsCountTokensAndTimeEveryOperation(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	model := describedModel{simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("a"), simtest.Call("c1", "t", map[string]any{}), simtest.Usage(100, 10)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("done"), simtest.Usage(200, 20)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Fail("connection reset")}},
	), gpt}
	tool, err := agentloop.NewRawTool("t", "", nil, func(context.Context, json.RawMessage) (string, error) { return "x", nil })
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}, Hooks: h.hooks}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("y")}, nil)); err == nil {
		t.Fatal("the third model call should fail")
	}
	m := h.metrics()

	provider, model_ := attribute.String("gen_ai.provider.name", "openai"), attribute.String("gen_ai.request.model", "gpt-test")
	chat := attribute.String("gen_ai.operation.name", "chat")

	usage := m["gen_ai.client.token.usage"]
	if usage.Unit != "{token}" {
		t.Errorf("token usage unit %q", usage.Unit)
	}
	tokens := usage.Data.(metricdata.Histogram[int64])
	in := point(t, tokens, chat, provider, model_, attribute.String("gen_ai.token.type", "input"))
	out := point(t, tokens, chat, provider, model_, attribute.String("gen_ai.token.type", "output"))
	if in.Count != 2 || in.Sum != 300 || out.Count != 2 || out.Sum != 30 {
		t.Errorf("input tokens %d calls / %d, output %d / %d; want 2 / 300 and 2 / 30 (the failed call reported none)", in.Count, in.Sum, out.Count, out.Sum)
	}
	if want := []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}; !slices.Equal(in.Bounds, want) {
		t.Errorf("token buckets %v, want the conventions' %v", in.Bounds, want)
	}

	dur := m["gen_ai.client.operation.duration"]
	if dur.Unit != "s" {
		t.Errorf("duration unit %q", dur.Unit)
	}
	durations := dur.Data.(metricdata.Histogram[float64])
	ok := point(t, durations, chat, provider, model_)
	failed := point(t, durations, chat, provider, model_, attribute.String("error.type", "*simtest.ScriptError"))
	if ok.Count != 2 || failed.Count != 1 {
		t.Errorf("chat durations: %d ok, %d failed; want 2 and 1", ok.Count, failed.Count)
	}
	if want := []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}; !slices.Equal(ok.Bounds, want) {
		t.Errorf("duration buckets %v, want the conventions' %v", ok.Bounds, want)
	}
	toolDur := point(t, durations, attribute.String("gen_ai.operation.name", "execute_tool"), provider, model_, attribute.String("gen_ai.tool.name", "t"))
	runOK := point(t, durations, attribute.String("gen_ai.operation.name", "invoke_agent"), provider, model_)
	runFailed := point(t, durations, attribute.String("gen_ai.operation.name", "invoke_agent"), provider, model_, attribute.String("error.type", "*simtest.ScriptError"))
	if toolDur.Count != 1 || runOK.Count != 1 || runFailed.Count != 1 {
		t.Errorf("tool %d, runs %d ok and %d failed; want 1 each", toolDur.Count, runOK.Count, runFailed.Count)
	}

	ttfc := m["gen_ai.client.operation.time_to_first_chunk"].Data.(metricdata.Histogram[float64])
	if p := point(t, ttfc, chat, provider, model_); p.Count != 2 {
		t.Errorf("time to first chunk recorded for %d calls, want 2 (the failed call sent no chunk)", p.Count)
	}
}

func TestMetricsAreRecordedWhenSpansAreNotSampled(t *testing.T) {
	h := newHarness(t, telemetry.Options{}, sdktrace.WithSampler(sdktrace.NeverSample()))
	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("hi"), simtest.Usage(5, 1)}}), Hooks: h.hooks}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	if n := len(h.spans.Ended()); n != 0 {
		t.Fatalf("%d spans recorded by a sampler that drops all", n)
	}
	tokens := h.metrics()["gen_ai.client.token.usage"].Data.(metricdata.Histogram[int64])
	if len(tokens.DataPoints) != 2 {
		t.Errorf("%d token data points, want input and output", len(tokens.DataPoints))
	}
}
