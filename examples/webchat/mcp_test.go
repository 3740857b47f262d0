package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/examples/internal/mcpflags/mcpflagstest"
)

func TestRun_MCPFlagAddsTheServersTools(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	err := os.WriteFile(script, []byte(`{"turns":[
		{"expect":{"tools":["add","delete_record","get_weather","researcher","shout"]},
		 "reply":[{"tool_call":{"id":"call_1","name":"shout","args":{"text":"hello"}}}]},
		{"expect":{"tool_results":{"call_1":"HELLO"}},"reply":[{"text":"Shouted."}]}]}`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	helper := mcpflagstest.Command()
	s := startServer(t, "-script", script, "-mcp", helper)
	resp, err := http.Post(s.URL+"/api/chat", "application/json", strings.NewReader(`{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"shout hello"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"type":"tool-output-available","toolCallId":"call_1","output":"HELLO"`) || !strings.Contains(string(body), `"delta":"Shouted."`) {
		t.Errorf("body %s", body)
	}
	if logs := s.Stop(t); !strings.Contains(logs, `MCP server "shouter" (stdio `+helper+`)`) {
		t.Errorf("logs %q", logs)
	}
}
