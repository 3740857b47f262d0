package mcptools_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/mcptools"
	"github.com/agentloop/agentloop/simtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An MCP server's tools in a run. The server here is an mcp.Server in the
// same process; a real one would be reached with mcptools.Stdio or
// mcptools.HTTP.
func Example() {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "v1"}, nil)
	type greetArgs struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "Greets someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
		})

	srv, err := mcptools.NewServer(mcptools.InMemory(server), mcptools.ServerOptions{Prefix: "hello_"})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	tools, err := srv.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}

	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_1", "hello_greet", map[string]string{"name": "Ada"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("I greeted Ada.")}},
	)
	agent := &agentloop.Agent{Model: model}
	for item, err := range agent.Stream(ctx, agentloop.History{agentloop.UserMessage("Greet Ada")}, &agentloop.RunOptions{Tools: tools}) {
		if err != nil {
			log.Fatal(err)
		}
		switch it := item.(type) {
		case agentloop.ToolResultReady:
			fmt.Printf("%s → %s\n", it.Result.Name, it.Result.Content)
		case agentloop.Final:
			fmt.Println(it.Text)
		}
	}
	// Output:
	// hello_greet → Hello, Ada!
	// I greeted Ada.
}

// Tools of a program started over stdio and of a server reached over HTTP,
// offered together. The README quotes the body of this example.
func ExampleTools() {
	ctx := context.Background()
	var model agentloop.Model = simtest.NewModel() // any model: ollama.New(…), openai.New(…), …
	token := "secret"

	files, err := mcptools.NewServer(
		mcptools.Stdio("npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"),
		mcptools.ServerOptions{Prefix: "fs_", NeedsApproval: mcptools.UnlessReadOnly})
	if err != nil {
		log.Fatal(err)
	}
	defer files.Close() // stops the process
	remote, err := mcptools.NewServer(mcptools.HTTP("https://mcp.example.com/mcp", mcptools.HTTPOptions{
		Header: func(req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		},
	}), mcptools.ServerOptions{Prefix: "web_"})
	if err != nil {
		log.Fatal(err)
	}
	defer remote.Close()

	agent := &agentloop.Agent{Model: model}
	history := agentloop.History{agentloop.UserMessage("Summarize /tmp/notes.txt")}
	tools, err := mcptools.Tools(ctx, files, remote) // connects on first use; cached until the servers' lists change
	if err != nil {
		log.Fatal(err)
	}
	for item, err := range agent.Stream(ctx, history, &agentloop.RunOptions{Tools: tools}) {
		// … as with any tools: MCP progress arrives as agentloop.ToolProgress items
		_, _ = item, err
	}
}
