package mcptools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/mcptools"
)

// A long MCP tool's progress reaches a web client: through the aisdk
// handler, each notification is a preliminary tool-output-available
// chunk, before the final output.
func TestProgressReachesTheAISDKStreamAsPreliminaryOutput(t *testing.T) {
	f := newFake(t, nil)
	tools, err := newServer(t, f, mcptools.ServerOptions{}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentloop.Agent{
		Model: simtestModelWithCalls(callSpec{"call_1", "steps", stepArgs{Steps: 2, Hold: true}}),
		Tools: tools,
	}
	srv := httptest.NewServer(&aisdk.Handler{Agent: agent})
	defer srv.Close()
	body := `{"id":"chat-1","trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"go"}]}]}`
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var outputs []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Type        string          `json:"type"`
			ToolCallID  string          `json:"toolCallId"`
			Output      json.RawMessage `json:"output"`
			Preliminary bool            `json:"preliminary"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		if c.Type != "tool-output-available" || c.ToolCallID != "call_1" {
			continue
		}
		var out string
		_ = json.Unmarshal(c.Output, &out)
		if c.Preliminary {
			outputs = append(outputs, "preliminary: "+out)
			if len(outputs) == 2 {
				close(f.finish) // the server answers once both reached the browser
			}
		} else {
			outputs = append(outputs, "final: "+out)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"preliminary: progress 1/2: step 1", "preliminary: progress 2/2: step 2", "final: 2 steps done"}
	if strings.Join(outputs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tool outputs in the stream:\n%s\nwant:\n%s", strings.Join(outputs, "\n"), strings.Join(want, "\n"))
	}
}
