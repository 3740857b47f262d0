package mcpflags_test

import (
	"flag"
	"fmt"

	"github.com/agentloop/agentloop/examples/internal/mcpflags"
)

func Example() {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	mcp := mcpflags.Register(fs)
	if err := fs.Parse([]string{"-mcp", "npx -y @modelcontextprotocol/server-everything", "-mcp-url", "http://127.0.0.1:3001/mcp"}); err != nil {
		panic(err)
	}
	for _, s := range mcp.Servers() {
		fmt.Println(s)
	}
	// Output:
	// stdio npx -y @modelcontextprotocol/server-everything
	// http http://127.0.0.1:3001/mcp
}
