package main

import (
	"os"
	"testing"

	"github.com/agentloop/agentloop/examples/internal/mcpflags/mcpflagstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain serves the MCP server of mcpflagstest when a test started this
// binary as it.
func TestMain(m *testing.M) {
	mcpflagstest.ServeIfChild()
	os.Exit(m.Run())
}

func TestQuickstart_MCPFlagAddsTheServersTools(t *testing.T) {
	helper := mcpflagstest.Command()
	out, errOut, err := runQuickstart(t, "", "-mcp", helper, "-script", "testdata/mcp.json", "-prompt", "Shout hello")
	require.NoError(t, err)
	assert.Contains(t, errOut, `MCP server "shouter" (stdio `+helper+`)`)
	assert.Contains(t, out, `→ shout({"text": "hello"})`)
	assert.Contains(t, out, "← HELLO")
	assert.Contains(t, out, "The server shouted HELLO.")
}

func TestQuickstart_UnreachableMCPServerIsAnError(t *testing.T) {
	_, _, err := runQuickstart(t, "", "-mcp", "/nonexistent/mcp-server", "-script", "testdata/mcp.json", "-prompt", "x")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MCP server stdio /nonexistent/mcp-server")
}
