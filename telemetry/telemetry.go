package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// instrumentationName names the tracer and the meter.
const instrumentationName = "github.com/agentloop/agentloop/telemetry"

// schemaURL is the schema of the conventions followed (see semconv.go).
const schemaURL = "https://opentelemetry.io/schemas/1.41.0"

// Options configure [NewHooks]. The zero value records spans and metrics
// with the global providers and no message content.
type Options struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider(),
	// looked up once by NewHooks (the global provider forwards to one set
	// later with otel.SetTracerProvider).
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics; nil means otel.GetMeterProvider(),
	// looked up once by NewHooks.
	MeterProvider metric.MeterProvider

	// RecordContent records what the model is sent and answers
	// (gen_ai.input.messages, gen_ai.output.messages,
	// gen_ai.system_instructions) and tool arguments and results
	// (gen_ai.tool.call.arguments, gen_ai.tool.call.result) on the spans.
	// Off by default: they are likely to hold personal data. Content is
	// recorded only on spans that are recording (sampled).
	RecordContent bool
	// Redact, when set and RecordContent is on, is called with every
	// message before it is recorded and returns what to record: a deep
	// copy it may change freely. It sees the messages of a model call and
	// its answer, the system prompt as a system message, a tool call's
	// arguments as an assistant message with one tool-call part, and its
	// result as a tool message with one result part. A returned message
	// without parts is left out. It is called from the goroutine that
	// ranges over the run, and for tool calls from the goroutines that run
	// them, so it must be safe for concurrent use.
	Redact func(ctx context.Context, m agentloop.Message) agentloop.Message

	// Pauses keeps the span of each conversation's paused run (the
	// document [PauseDoc]), so that the run that resumes it links to it,
	// in this process or on another replica of the same store: pass the
	// app's store (the chats' own, or a memstore). nil links no runs.
	Pauses store.Docs
	// Logger receives what telemetry cannot report otherwise (an error of
	// Pauses); nil means the run's Agent.Logger, and no logging when that
	// is nil too.
	Logger *slog.Logger
}

// NewHooks returns hooks that trace and measure every run of the agents
// they are given to: put them in [agentloop.Agent.Hooks] (first, when
// composing with [agentloop.ComposeHooks], so that the spans time the
// other hooks too and see every tool call), or pass them to one run with
// [agentloop.RunOptions.Hooks]. The hooks never fail or cancel a run. One set of
// hooks may serve any number of agents and concurrent runs.
//
// The error reports an instrument the MeterProvider could not create.
func NewHooks(opts Options) (*agentloop.Hooks, error) {
	tp, mp := opts.TracerProvider, opts.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(instrumentationName, metric.WithSchemaURL(schemaURL))
	r := &recorder{
		tracer: tp.Tracer(instrumentationName, trace.WithSchemaURL(schemaURL)),
		pauses: opts.Pauses,
		log:    opts.Logger,
	}
	if opts.RecordContent {
		r.content = &content{redact: opts.Redact}
	}
	var err error
	if r.duration, err = meter.Float64Histogram(metricDuration, metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration."),
		metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		return nil, fmt.Errorf("telemetry: %s: %w", metricDuration, err)
	}
	if r.tokens, err = meter.Int64Histogram(metricTokenUsage, metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used."),
		metric.WithExplicitBucketBoundaries(tokenBuckets...)); err != nil {
		return nil, fmt.Errorf("telemetry: %s: %w", metricTokenUsage, err)
	}
	if r.ttfc, err = meter.Float64Histogram(metricTTFC, metric.WithUnit("s"),
		metric.WithDescription("Time to receive the first chunk of a streaming response."),
		metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		return nil, fmt.Errorf("telemetry: %s: %w", metricTTFC, err)
	}
	return &agentloop.Hooks{
		OnRunStart:       r.runStart,
		BeforeModelCall:  r.beforeModelCall,
		OnTextDelta:      r.onText,
		OnReasoningDelta: r.onText,
		OnToolCallDelta:  r.onToolCallDelta,
		OnTurnEnd:        r.turnEnd,
		BeforeToolCall:   r.beforeToolCall,
		ToolContext:      r.toolContext,
		AfterToolCall:    r.afterToolCall,
		OnRunEnd:         r.runEnd,
	}, nil
}

// recorder holds what the hooks of one NewHooks share.
type recorder struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
	tokens   metric.Int64Histogram
	ttfc     metric.Float64Histogram
	content  *content // nil: content is not recorded
	pauses   store.Docs
	log      *slog.Logger
}

// runKey finds the state of a run in its context. It holds the recorder so
// that two sets of hooks on one run keep apart.
type runKey struct{ r *recorder }

// anyRunKey finds the state of the innermost traced run, for WrapModel.
type anyRunKey struct{}

// run is the state of one traced run.
type run struct {
	span           trace.Span
	start          time.Time
	log            *slog.Logger
	info           agentloop.ModelInfo
	conversationID string
	agentTools     []*agentloop.Tool // the agent's, for calls before any model call

	// Metric attributes, made once per run.
	runSet, chatSet, inputSet, outputSet attribute.Set

	// The model call in flight. Only the goroutine that ranges over the
	// run touches these.
	chat      trace.Span
	chatStart time.Time
	chatReq   *agentloop.Request
	seenChunk bool // a delta came since the model call started
	hasTTFC   bool // ttfc is the time to the first chunk of the call
	ttfc      time.Duration
	// lastFinish is the finish reason of the last model call.
	lastFinish agentloop.FinishReason

	mu       sync.Mutex
	tools    map[string]toolSpan      // by call id: BeforeToolCall to AfterToolCall
	defs     []agentloop.ToolDef      // offered on the last model call
	toolSets map[string]attribute.Set // metric attributes, by tool name
}

type toolSpan struct {
	span  trace.Span
	start time.Time
}

func (r *recorder) runOf(ctx context.Context) *run {
	st, _ := ctx.Value(runKey{r}).(*run)
	return st
}

// modelInfo names the agent's model: its ModelInfo when it has one, and
// otherwise (or when that names no provider) the last element of its Go
// package path as the provider ("openai" for providers/openai, "simtest"
// for simtest), with no model name.
func modelInfo(m agentloop.Model) agentloop.ModelInfo {
	var info agentloop.ModelInfo
	if d, ok := m.(agentloop.ModelDescriber); ok {
		info = d.ModelInfo()
	}
	if info.Provider == "" && m != nil {
		t := reflect.TypeOf(m)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		path := t.PkgPath()
		info.Provider = path[strings.LastIndexByte(path, '/')+1:]
	}
	if info.Provider == "" {
		info.Provider = errorOther
	}
	return info
}

// logf logs a telemetry problem at warning level.
func (st *run) logf(ctx context.Context, msg string, args ...any) {
	if st.log != nil {
		st.log.WarnContext(ctx, msg, args...)
	}
}

// genAIAttrs returns the attributes every span and metric of a run has.
func (st *run) genAIAttrs(op string, extra ...attribute.KeyValue) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 3+len(extra))
	attrs = append(attrs, keyOperationName.String(op), keyProviderName.String(st.info.Provider))
	if st.info.Model != "" {
		attrs = append(attrs, keyRequestModel.String(st.info.Model))
	}
	return append(attrs, extra...)
}

// initSets makes the run's metric attributes.
func (st *run) initSets() {
	st.runSet = attribute.NewSet(st.genAIAttrs(opInvokeAgent)...)
	st.chatSet = attribute.NewSet(st.genAIAttrs(opChat)...)
	st.inputSet = attribute.NewSet(st.genAIAttrs(opChat, keyTokenType.String(tokenInput))...)
	st.outputSet = attribute.NewSet(st.genAIAttrs(opChat, keyTokenType.String(tokenOutput))...)
	st.toolSets = make(map[string]attribute.Set)
}

// toolSet returns the metric attributes of calls to the named tool.
func (st *run) toolSet(name string) attribute.Set {
	st.mu.Lock()
	defer st.mu.Unlock()
	set, ok := st.toolSets[name]
	if !ok {
		set = attribute.NewSet(st.genAIAttrs(opExecuteTool, keyToolName.String(name))...)
		st.toolSets[name] = set
	}
	return set
}

// measured returns set as a measurement option, with error.type added
// when errType is not "".
func measured(set attribute.Set, errType string) metric.MeasurementOption {
	if errType == "" {
		return metric.WithAttributeSet(set)
	}
	return metric.WithAttributes(append(set.ToSlice(), keyErrorType.String(errType))...)
}

// spanName returns "op name", or op when name is empty.
func spanName(op, name string) string {
	if name == "" {
		return op
	}
	return op + " " + name
}
