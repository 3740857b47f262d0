package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHelperMCPServer is not a test: started as a child process by
// TestRun_MCPFlagAddsTheServersTools, it serves one tool, "shout", over
// stdio.
func TestHelperMCPServer(t *testing.T) {
	if os.Getenv("WEBCHAT_MCP_HELPER") != "1" {
		t.Skip("helper process for TestRun_MCPFlagAddsTheServersTools")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "shouter", Version: "v1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "shout", Description: "Upper-cases its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		t.Fatal(err)
	}
	os.Exit(0)
}

func TestRun_MCPFlagAddsTheServersTools(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	err := os.WriteFile(script, []byte(`{"turns":[
		{"expect":{"tools":["add","delete_record","get_weather","researcher","shout"]},
		 "reply":[{"tool_call":{"id":"call_1","name":"shout","args":{"text":"hello"}}}]},
		{"expect":{"tool_results":{"call_1":"HELLO"}},"reply":[{"text":"Shouted."}]}]}`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	helper := "env WEBCHAT_MCP_HELPER=1 " + os.Args[0] + " -test.run=^TestHelperMCPServer$"
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
	if logs := s.Stop(t); !strings.Contains(logs, `MCP server "shouter" (stdio env WEBCHAT_MCP_HELPER=1`) {
		t.Errorf("logs %q", logs)
	}
}
