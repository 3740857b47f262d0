package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelperMCPServer is not a test: started by mcpHelper as a child
// process, it serves one tool, "shout", over stdio.
func TestHelperMCPServer(t *testing.T) {
	if os.Getenv("QUICKSTART_MCP_HELPER") != "1" {
		t.Skip("helper process for TestQuickstart_MCPFlagAddsTheServersTools")
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

func TestQuickstart_MCPFlagAddsTheServersTools(t *testing.T) {
	helper := "env QUICKSTART_MCP_HELPER=1 " + os.Args[0] + " -test.run=^TestHelperMCPServer$"
	out, errOut, err := runQuickstart(t, "", "-mcp", helper, "-script", "testdata/mcp.json", "-prompt", "Shout hello")
	require.NoError(t, err)
	assert.Contains(t, errOut, `MCP server "shouter" (stdio env QUICKSTART_MCP_HELPER=1`)
	assert.Contains(t, out, `→ shout({"text": "hello"})`)
	assert.Contains(t, out, "← HELLO")
	assert.Contains(t, out, "The server shouted HELLO.")
}

func TestQuickstart_UnreachableMCPServerIsAnError(t *testing.T) {
	_, _, err := runQuickstart(t, "", "-mcp", "/nonexistent/mcp-server", "-script", "testdata/mcp.json", "-prompt", "x")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MCP server stdio /nonexistent/mcp-server")
}
