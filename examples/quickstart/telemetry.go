package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/examples/internal/otelenv"
	"github.com/agentloop/agentloop/telemetry"
)

// traceAgent exports the agent's traces when the OpenTelemetry environment
// asks for them (OTEL_TRACES_EXPORTER=console prints them to stderr;
// OTEL_EXPORTER_OTLP_ENDPOINT sends them to a collector), and does nothing
// otherwise. It adds the telemetry hooks before the agent's own and returns
// a func that flushes the spans, to call before the program exits.
func traceAgent(ctx context.Context, agent *agentloop.Agent, stderr io.Writer) (flush func(), err error) {
	tr, err := otelenv.Start(ctx, "agentloop-quickstart", stderr)
	if err != nil || tr == nil {
		return func() {}, err
	}
	hooks, err := telemetry.NewHooks(telemetry.Options{TracerProvider: tr.Provider})
	if err != nil {
		return nil, err
	}
	agent.Hooks = agentloop.ComposeHooks(hooks, agent.Hooks)
	fmt.Fprintf(stderr, "traces: exported to %s\n", strings.Join(tr.Exporters, ", "))
	return func() {
		if err := tr.Shutdown(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintln(stderr, "traces:", err)
		}
	}, nil
}
