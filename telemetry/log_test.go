package telemetry_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/syncbuf"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/telemetry"
)

func TestLogHandlerAddsTheRunSpansIDsToTheAgentsLogs(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	var logs syncbuf.Buffer
	boom, err := agentloop.NewRawTool("boom", "", nil, func(context.Context, json.RawMessage) (string, error) { panic("kaboom") })
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentloop.Agent{
		Model: simtest.NewModel(
			simtest.Turn{Reply: []simtest.Step{simtest.Call("c1", "boom", map[string]any{})}},
			simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
		),
		Tools:  []*agentloop.Tool{boom},
		Hooks:  h.hooks,
		Logger: slog.New(telemetry.LogHandler(slog.NewJSONHandler(&logs, nil))),
	}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	run := h.one("invoke_agent").SpanContext()
	var rec map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["msg"] == "agentloop: a tool panicked" {
			break
		}
	}
	if rec[telemetry.LogKeyTraceID] != run.TraceID().String() || rec[telemetry.LogKeySpanID] != run.SpanID().String() {
		t.Errorf("panic log %v; want trace_id %s and span_id %s", rec, run.TraceID(), run.SpanID())
	}
}

func TestLogHandlerLeavesRecordsWithoutASpanAlone(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(&logs, nil))).With("k", "v").WithGroup("g")
	log.InfoContext(context.Background(), "plain", "a", 1)
	log.Info("no context")
	if out := logs.String(); strings.Contains(out, "trace_id") || !strings.Contains(out, "k=v") || !strings.Contains(out, "g.a=1") {
		t.Errorf("logs:\n%s", out)
	}
}
