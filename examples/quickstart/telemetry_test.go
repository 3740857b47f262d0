package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuickstart_ConsoleExporterPrintsTheRunsSpans(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	out, errOut, err := runQuickstart(t, "", "-script", "testdata/answer.json", "-prompt", "2 + 3?")
	require.NoError(t, err)
	assert.Contains(t, out, "2 + 3 = 5.")
	assert.Contains(t, errOut, "traces: exported to console")
	for _, span := range []string{`"Name": "invoke_agent"`, `"Name": "chat"`, `"Name": "execute_tool add"`} {
		assert.Contains(t, errOut, span)
	}
	assert.NotContains(t, out, `"Name"`, "spans go to stderr, not into the transcript")
}

func TestQuickstart_NoTracesUnlessTheEnvironmentAsks(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	_, errOut, err := runQuickstart(t, "", "-script", "testdata/answer.json", "-prompt", "2 + 3?")
	require.NoError(t, err)
	assert.NotContains(t, errOut, "traces:")
	assert.NotContains(t, errOut, "SpanContext")
}

func TestQuickstart_UnknownTraceExporterIsAnError(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "jaeger")
	_, _, err := runQuickstart(t, "", "-script", "testdata/answer.json", "-prompt", "2 + 3?")
	require.ErrorContains(t, err, `unknown exporter "jaeger"`)
}
