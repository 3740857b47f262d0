package mcptools_test

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/mcptools"
	"github.com/agentloop/agentloop/simtest"
)

// A simtest script (testdata/everything-call.json) drives the loop through
// two calls of the go-sdk everything-server's tools over stdio: one that
// reports progress, one that answers text; the script's expectations check
// what the model got back.
func TestScriptDrivesTheLoopThroughMCPCalls(t *testing.T) {
	bin := goServerBin(t)
	script, err := simtest.LoadScript("testdata/everything-call.json")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcptools.NewServer(mcptools.Stdio(bin), mcptools.ServerOptions{Prefix: "ev_"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tools, err := srv.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	model := script.Model()
	agent := &agentloop.Agent{Model: model}
	var progress []agentloop.ToolProgress
	var final agentloop.Final
	for item, err := range agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("Show me progress")}, &agentloop.RunOptions{Tools: tools}) {
		if err != nil {
			t.Fatal(err)
		}
		switch it := item.(type) {
		case agentloop.ToolProgress:
			progress = append(progress, it)
		case agentloop.Final:
			final = it
		}
	}
	if final.Text != "The MCP server reported progress and answered." || final.Turns != 2 {
		t.Fatalf("final = %q after %d turns", final.Text, final.Turns)
	}
	if len(progress) != 3 || progress[0].CallID != "call_1" || progress[0].Content != "progress 0/100: Completed step 0 of 100" {
		t.Errorf("progress = %+v; want the server's three notifications for call_1", progress)
	}
	if model.Remaining() != 0 {
		t.Errorf("%d scripted turns left", model.Remaining())
	}
}
