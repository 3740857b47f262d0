package otelenv_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/examples/internal/otelenv"
)

// clearEnv unsets every variable Start reads, for the test.
func clearEnv(t *testing.T) {
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
}

func TestNothingStartsUnlessTheEnvironmentAsks(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"no variables": {},
		"none":         {"OTEL_TRACES_EXPORTER": "none"},
		"disabled":     {"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"},
	} {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range env {
				t.Setenv(k, v)
			}
			tr, err := otelenv.Start(context.Background(), "svc", &bytes.Buffer{})
			if tr != nil || err != nil {
				t.Errorf("Start = %v, %v; want nothing started", tr, err)
			}
		})
	}
}

func TestConsolePrintsEndedSpans(t *testing.T) {
	clearEnv(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	var out bytes.Buffer
	tr, err := otelenv.Start(context.Background(), "quickstart-test", &out)
	if err != nil || tr == nil {
		t.Fatalf("Start = %v, %v", tr, err)
	}
	_, span := tr.Provider.Tracer("test").Start(context.Background(), "invoke_agent demo")
	span.End()
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, `"Name": "invoke_agent demo"`) || !strings.Contains(s, "quickstart-test") {
		t.Errorf("console output lacks the span or the service name:\n%s", s)
	}
}

func TestAnOTLPEndpointAloneExportsOverHTTP(t *testing.T) {
	clearEnv(t)
	var mu sync.Mutex
	var paths []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	tr, err := otelenv.Start(context.Background(), "svc", &bytes.Buffer{})
	if err != nil || tr == nil {
		t.Fatalf("Start = %v, %v", tr, err)
	}
	if len(tr.Exporters) != 1 || tr.Exporters[0] != "otlp" {
		t.Errorf("exporters %v, want [otlp]", tr.Exporters)
	}
	_, span := tr.Provider.Tracer("test").Start(context.Background(), "chat")
	span.End()
	if err := tr.Shutdown(context.Background()); err != nil { // flushes the batch
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 1 || paths[0] != "POST /v1/traces application/x-protobuf" {
		t.Errorf("collector got %q, want one OTLP/HTTP export", paths)
	}
}

func TestBadSettingsAreErrorsThatNameThem(t *testing.T) {
	for want, env := range map[string]map[string]string{
		`unknown exporter "zipkin"`:   {"OTEL_TRACES_EXPORTER": "zipkin"},
		`"none" cannot be combined`:   {"OTEL_TRACES_EXPORTER": "none,console"},
		"OTEL_EXPORTER_OTLP_PROTOCOL": {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
	} {
		t.Run(want, func(t *testing.T) {
			clearEnv(t)
			for k, v := range env {
				t.Setenv(k, v)
			}
			tr, err := otelenv.Start(context.Background(), "svc", &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Start = %v, %v; want an error containing %q", tr, err, want)
			}
		})
	}
}
