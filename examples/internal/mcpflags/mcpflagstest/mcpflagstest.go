// Package mcpflagstest runs a test binary again as a small MCP server over
// stdio, for the tests of -mcp (mcpflags' own, and the examples' that check
// their wiring of it). The server is named "shouter"; its one tool, "shout",
// answers its argument text upper-cased.
//
// A test package calls [ServeIfChild] first thing in its TestMain and gives
// [Command] as an -mcp value.
package mcpflagstest

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// childEnv marks the process that Command starts.
const childEnv = "AGENTLOOP_MCPFLAGSTEST_CHILD"

// Command is the -mcp value that starts this test binary as the server,
// with env (NAME=value each) added to its environment. The log line of
// mcpflags names the server as "stdio " followed by Command's value.
func Command(env ...string) string {
	return strings.Join(append(append([]string{"env"}, env...), childEnv+"=1", os.Args[0]), " ")
}

// ServeIfChild returns at once in a process that Command did not start. In
// one it did, it serves shout, and the tools each add adds, over stdio until
// the client goes, then ends the process (with status 1 if serving failed).
func ServeIfChild(add ...func(*mcp.Server)) {
	if os.Getenv(childEnv) != "1" {
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "shouter", Version: "v1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "shout", Description: "Upper-cases its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	for _, a := range add {
		a(s)
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcpflagstest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
