package ctxwindow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func user(text string) agentloop.Message { return agentloop.UserMessage(text) }

func assistant(parts ...agentloop.Part) agentloop.Message {
	return agentloop.Message{Role: agentloop.RoleAssistant, Parts: parts}
}

func text(s string) agentloop.Part { return agentloop.TextPart(s) }

func thought(s string) agentloop.Part {
	return agentloop.Part{Type: agentloop.PartReasoning, Text: s, Signature: "sig"}
}

func call(id string) agentloop.Part {
	return agentloop.Part{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: id, Name: "search", Args: []byte(`{}`)}}
}

func result(id, content string) agentloop.Message {
	return agentloop.Message{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: id, Name: "search", Content: content}}}}
}

// words returns n bytes of text.
func filler(n int) string { return strings.Repeat("abcd ", n/5+1)[:n] }

// tokens is what the default estimator says h costs.
func tokens(h ...agentloop.Message) int {
	t := 0
	for _, m := range h {
		t += ctxwindow.Bytes{}.Message(m)
	}
	return t
}

// shapeWith shapes a request for h (no system prompt, no tools) with a
// Manager of the given budget (window minus a reserve of 100) and returns
// the request, the report and the hook's error.
func shapeWith(t *testing.T, h agentloop.History, budget int, cfg ctxwindow.Config) (*agentloop.Request, ctxwindow.Report, error) {
	t.Helper()
	var rep ctxwindow.Report
	cfg.ContextWindow, cfg.OutputReserve = budget+100, 100
	cfg.OnReport = func(_ context.Context, r ctxwindow.Report) { rep = r }
	m, err := ctxwindow.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := &agentloop.Request{Turn: 1, Messages: h.Clone()}
	err = m.Hooks().BeforeModelCall(t.Context(), req)
	checkSent(t, h, req.Messages)
	return req, rep, err
}

// texts lists the text of each message, "" for those without.
func texts(h agentloop.History) []string {
	out := make([]string, len(h))
	for i, m := range h {
		out[i] = m.Text()
		if m.Role == agentloop.RoleTool {
			out[i] = "tool:" + m.Parts[0].ToolResult.CallID
		}
	}
	return out
}
