package mcpflags_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/examples/internal/mcpflags"
	"github.com/agentloop/agentloop/examples/internal/mcpflags/mcpflagstest"
)

// TestMain serves the MCP server of mcpflagstest when a test started this
// binary as it.
func TestMain(m *testing.M) {
	mcpflagstest.ServeIfChild(addPgidTool)
	os.Exit(m.Run())
}

func parse(t *testing.T, args ...string) (*mcpflags.Flags, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	f := mcpflags.Register(fs)
	return f, fs.Parse(args)
}

func TestOneServerKeepsItsToolNames(t *testing.T) {
	f, err := parse(t, "-mcp", mcpflagstest.Command())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var log bytes.Buffer
	tools, err := f.Tools(context.Background(), nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "shout" {
		t.Fatalf("tools = %v", tools)
	}
	if !strings.Contains(log.String(), `MCP server "shouter" (stdio `+mcpflagstest.Command()+`)`) || !strings.Contains(log.String(), "1 tools: shout") {
		t.Errorf("log = %q", log.String())
	}
	out, err := tools[0].Func(context.Background(), []byte(`{"text":"hi"}`))
	if err != nil || out != "HI" {
		t.Errorf("call: %q, %v", out, err)
	}
}

func TestSeveralServersArePrefixedInFlagOrder(t *testing.T) {
	f, err := parse(t, "-mcp", mcpflagstest.Command(), "-mcp", mcpflagstest.Command())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	add, err := agentloop.NewTool("add", "", func(context.Context, struct{}) (int, error) { return 0, nil })
	if err != nil {
		t.Fatal(err)
	}
	tools, err := f.Tools(context.Background(), []*agentloop.Tool{add}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, " ") != "add mcp1_shout mcp2_shout" {
		t.Fatalf("names = %v", names)
	}
}

func TestAToolNameAlreadyTakenIsAnError(t *testing.T) {
	f, err := parse(t, "-mcp", mcpflagstest.Command())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	shout, err := agentloop.NewTool("shout", "", func(context.Context, struct{}) (int, error) { return 0, nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tools(context.Background(), []*agentloop.Tool{shout}, new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), `its tool "shout" has the name of another tool`) {
		t.Fatalf("err = %v", err)
	}
}

func TestBadFlagsAndUnreachableServersAreErrors(t *testing.T) {
	if _, err := parse(t, "-mcp", "  "); err == nil || !strings.Contains(err.Error(), "empty command") {
		t.Errorf("empty -mcp: %v", err)
	}
	if _, err := parse(t, "-mcp-url", "localhost:3000"); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("bad -mcp-url: %v", err)
	}
	f, err := parse(t, "-mcp", "/nonexistent/mcp-server")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Tools(context.Background(), nil, new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), "MCP server stdio /nonexistent/mcp-server") {
		t.Errorf("unreachable: %v", err)
	}
}

func TestNilFlagsHaveNoServers(t *testing.T) {
	var f *mcpflags.Flags
	tools, err := f.Tools(context.Background(), nil, new(bytes.Buffer))
	if err != nil || tools != nil || f.Servers() != nil || f.Close() != nil {
		t.Fatalf("nil Flags: %v, %v", tools, err)
	}
}
