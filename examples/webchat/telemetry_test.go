package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/syncbuf"
)

// consoleSpan is what the console exporter prints of a span.
type consoleSpan struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ TraceID, SpanID string }
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
}

func (s consoleSpan) attr(key string) any {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.Value
		}
	}
	return nil
}

// consoleSpans returns the spans printed in logs, by name: the console
// exporter writes each as an indented JSON object between the log lines.
func consoleSpans(t *testing.T, logs string) map[string]consoleSpan {
	t.Helper()
	spans := make(map[string]consoleSpan)
	var block []string
	for _, line := range strings.Split(logs, "\n") {
		switch {
		case line == "{":
			block = []string{line}
		case line == "}" && block != nil:
			var s consoleSpan
			if err := json.Unmarshal([]byte(strings.Join(append(block, line), "\n")), &s); err != nil {
				t.Fatal(err)
			}
			spans[s.Name] = s
			block = nil
		case block != nil:
			block = append(block, line)
		}
	}
	return spans
}

func TestRun_ConsoleTracesShowTheRunUnderItsRequest(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"reply":[{"text":"Traced hello."}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	logs := &syncbuf.Buffer{}
	go func() {
		errc <- run(ctx, []string{"-addr", "127.0.0.1:0", "-script", script, "-db", memoryDB}, logs, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-errc:
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+addr+"/api/chat", "application/json",
		strings.NewReader(`{"id":"chat-42","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	out := logs.String()
	if !strings.Contains(out, "webchat: traces exported to console") {
		t.Errorf("no startup line about traces:\n%s", out)
	}
	spans := consoleSpans(t, out)
	request, run, chat := spans["POST /api/chat"], spans["invoke_agent"], spans["chat"]
	if request.Name == "" || run.Name == "" || chat.Name == "" {
		t.Fatalf("spans printed: %v; want the request, the run and the chat", spans)
	}
	if run.Parent.SpanID != request.SpanContext.SpanID || chat.Parent.SpanID != run.SpanContext.SpanID {
		t.Errorf("the run's parent is %s (want the request %s); the chat's %s (want the run %s)",
			run.Parent.SpanID, request.SpanContext.SpanID, chat.Parent.SpanID, run.SpanContext.SpanID)
	}
	if got := run.attr("gen_ai.conversation.id"); got != "chat-42" {
		t.Errorf("gen_ai.conversation.id = %v, want the chat id", got)
	}
}

func TestRun_NoTracesUnlessTheEnvironmentAsks(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tr, err := startTracing(context.Background(), io.Discard)
	if tr != nil || err != nil {
		t.Fatalf("startTracing = %v, %v; want nothing", tr, err)
	}
	h := http.NewServeMux()
	if hooks, err := tr.agentHooks(nil); tr.handler(h) != http.Handler(h) || hooks != nil || err != nil {
		t.Error("without tracing, the handler is wrapped or the agent gets hooks")
	}
}

func TestRoute_DropsTheIDsAfterTheRoute(t *testing.T) {
	for path, want := range map[string]string{
		"/api/chat": "/api/chat", "/api/chat/c1/stream": "/api/chat/{id}/stream", "/api/chat/c%2F1/stop": "/api/chat/{id}/stop",
		"/api/chats": "/api/chats", "/api/chats/c1": "/api/chats/{id}", "/api/info": "/api/info", "/api/x": "/",
		"/agents/c1/tool-states": "/agents/{id}/tool-states", "/agents/c1/tool-states/reset": "/agents/{id}/tool-states/reset",
		"/": "/", "/assets/app.js": "/",
	} {
		if got := route(path); got != want {
			t.Errorf("route(%q) = %q, want %q", path, got, want)
		}
	}
}
