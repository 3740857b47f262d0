//go:build !unix

package mcpflags_test

import "github.com/modelcontextprotocol/go-sdk/mcp"

// addPgidTool adds nothing where there are no process groups.
func addPgidTool(*mcp.Server) {}
