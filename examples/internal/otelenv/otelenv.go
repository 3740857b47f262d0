// Package otelenv starts a TracerProvider for the example programs when the
// standard OpenTelemetry environment variables ask for one, and does
// nothing otherwise.
//
// It reads:
//
//   - OTEL_TRACES_EXPORTER: a comma-separated list of "otlp", "console"
//     (spans printed as JSON to the console writer) and "none". Unset, it
//     means "otlp" when an OTLP endpoint is set and "none" otherwise, so
//     that a program exports only when asked to.
//   - OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and the
//     other OTEL_EXPORTER_OTLP_* variables, which the OTLP exporter reads
//     itself. Only the http/protobuf protocol is built in (gRPC would pull in
//     much more); OTEL_EXPORTER_OTLP_PROTOCOL=grpc is an error that says so.
//   - OTEL_SDK_DISABLED=true turns everything off.
//   - OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the service.
//
// It is a small switch written for the examples instead of the contrib
// autoexport package, whose gRPC and Prometheus exporters would weigh on
// every user of this module. Metrics are not exported.
package otelenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Tracing is a started TracerProvider and what it exports to.
type Tracing struct {
	// Provider makes the spans; it is also the global TracerProvider.
	Provider *sdktrace.TracerProvider
	// Exporters names the exporters in use, for a startup message.
	Exporters []string
}

// Shutdown exports the spans not yet exported and stops the provider.
func (t *Tracing) Shutdown(ctx context.Context) error {
	return t.Provider.Shutdown(ctx)
}

// Start reads the environment and, when it asks for traces,
// starts a TracerProvider that exports them, installs it and the W3C trace
// context propagator as the globals, and returns it. It returns nil, nil
// when the environment asks for none. serviceName is used unless the
// environment names the service. console receives the "console" exporter's
// output.
func Start(ctx context.Context, serviceName string, console io.Writer) (*Tracing, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	names, err := exporterNames()
	if err != nil || len(names) == 0 {
		return nil, err
	}
	var opts []sdktrace.TracerProviderOption
	for _, name := range names {
		switch name {
		case "console":
			exp, err := stdouttrace.New(stdouttrace.WithWriter(console), stdouttrace.WithPrettyPrint())
			if err != nil {
				return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=console: %w", err)
			}
			opts = append(opts, sdktrace.WithSyncer(exp)) // printed as each span ends
		case "otlp":
			for _, key := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
				if p := strings.TrimSpace(os.Getenv(key)); p != "" {
					if p != "http/protobuf" {
						return nil, fmt.Errorf("%s=%s: only http/protobuf is built into the examples", key, p)
					}
					break
				}
			}
			exp, err := otlptracehttp.New(ctx)
			if err != nil {
				return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=otlp: %w", err)
			}
			opts = append(opts, sdktrace.WithBatcher(exp))
		}
	}
	res, err := newResource(ctx, serviceName)
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(append(opts, sdktrace.WithResource(res))...)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return &Tracing{Provider: tp, Exporters: names}, nil
}

// exporterNames returns the trace exporters the environment asks for,
// without "none" and duplicates.
func exporterNames() ([]string, error) {
	list := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER"))
	if list == "" {
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return nil, nil
		}
		list = "otlp"
	}
	var names []string
	none := false
	for _, name := range strings.Split(list, ",") {
		switch name = strings.ToLower(strings.TrimSpace(name)); name {
		case "none":
			none = true
		case "otlp", "console":
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		default:
			return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: unknown exporter %q (the examples know otlp, console and none)", name)
		}
	}
	if none && len(names) > 0 {
		return nil, errors.New(`OTEL_TRACES_EXPORTER: "none" cannot be combined with other exporters`)
	}
	return names, nil
}

// newResource describes the service: the SDK's defaults and the
// environment's OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, with
// serviceName when the environment names no service.
func newResource(ctx context.Context, serviceName string) (*resource.Resource, error) {
	env, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	if _, named := env.Set().Value("service.name"); named {
		return env, nil
	}
	return resource.Merge(env, resource.NewSchemaless(attribute.String("service.name", serviceName)))
}
