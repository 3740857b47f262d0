package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/examples/internal/otelenv"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/telemetry"
)

// tracing is the server's OpenTelemetry setup; a nil *tracing traces
// nothing.
type tracing struct {
	tr *otelenv.Tracing
}

// startTracing exports traces when the OpenTelemetry environment asks for
// them (OTEL_TRACES_EXPORTER=console prints them to the log writer;
// OTEL_EXPORTER_OTLP_ENDPOINT sends them to a collector), and returns nil
// otherwise.
func startTracing(ctx context.Context, logw io.Writer) (*tracing, error) {
	tr, err := otelenv.Start(ctx, "agentloop-webchat", logw)
	if err != nil || tr == nil {
		return nil, err
	}
	fmt.Fprintf(logw, "webchat: traces exported to %s\n", strings.Join(tr.Exporters, ", "))
	return &tracing{tr: tr}, nil
}

// agentHooks returns the hooks that trace the agent's runs, keeping each
// chat's paused run in st so that the run resuming it links to it (on any
// replica); nil when not tracing.
func (t *tracing) agentHooks(st store.Docs) (*agentloop.Hooks, error) {
	if t == nil {
		return nil, nil
	}
	return telemetry.NewHooks(telemetry.Options{TracerProvider: t.tr.Provider, Pauses: st})
}

// handler wraps h so that each request is a server span, the parent of
// the run it starts.
func (t *tracing) handler(h http.Handler) http.Handler {
	if t == nil {
		return h
	}
	return otelhttp.NewHandler(h, "webchat", otelhttp.WithTracerProvider(t.tr.Provider),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + route(r.URL.Path) }))
}

// route names the server's route that path belongs to, without the chat
// ids in it, for low-cardinality span names.
func route(path string) string {
	switch {
	case path == "/api/chat":
		return path
	case strings.HasPrefix(path, "/api/chat/"):
		return "/api/chat/{id}/" + path[strings.LastIndexByte(path, '/')+1:]
	case path == "/api/chats", path == "/api/info":
		return path
	case strings.HasPrefix(path, "/api/chats/"):
		return "/api/chats/{id}"
	case strings.HasPrefix(path, "/agents/"):
		_, rest, _ := strings.Cut(strings.TrimPrefix(path, "/agents/"), "/")
		return "/agents/{id}/" + rest
	}
	return "/"
}

// stop exports the spans not yet exported.
func (t *tracing) stop(ctx context.Context, logw io.Writer) {
	if t == nil {
		return
	}
	if err := t.tr.Shutdown(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintln(logw, "webchat: traces:", err)
	}
}
