//go:build unix

package mcpflags_test

import (
	"context"
	"io"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/agentloop/agentloop/examples/internal/mcpflags/mcpflagstest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addPgidTool adds to the helper server, when its environment has
// MCPFLAGS_HELPER_PGID=1, a tool "pgid" that answers the server's process
// group.
func addPgidTool(s *mcp.Server) {
	if os.Getenv("MCPFLAGS_HELPER_PGID") != "1" {
		return
	}
	mcp.AddTool(s, &mcp.Tool{Name: "pgid", Description: "The server's process group."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(syscall.Getpgrp())}}}, nil, nil
		})
}

// An MCP server started over stdio runs in a process group of its own: the
// Ctrl-C a terminal sends to the program's group, which the quickstart
// uses to stop an answer, leaves it running.
func TestAStdioServerHasItsOwnProcessGroup(t *testing.T) {
	f, err := parse(t, "-mcp", mcpflagstest.Command("MCPFLAGS_HELPER_PGID=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tools, err := f.Tools(context.Background(), nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if tool.Name != "pgid" {
			continue
		}
		out, err := tool.Func(context.Background(), []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if out == strconv.Itoa(syscall.Getpgrp()) {
			t.Fatalf("the MCP server runs in the program's process group %s", out)
		}
		return
	}
	t.Fatalf("no pgid tool in %v", tools)
}
