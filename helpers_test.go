package agentloop_test

import (
	"context"
	"encoding/json"
	"iter"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collect drains a run and returns its items and final error.
func collect(seq iter.Seq2[agentloop.Item, error]) ([]agentloop.Item, error) {
	var items []agentloop.Item
	for it, err := range seq {
		if err != nil {
			return items, err
		}
		items = append(items, it)
	}
	return items, nil
}

func user(text string) agentloop.History { return agentloop.History{agentloop.UserMessage(text)} }

// lastItem returns the last item, which a successful run makes a Final or Pending.
func lastItem(t *testing.T, items []agentloop.Item) agentloop.Item {
	t.Helper()
	require.NotEmpty(t, items)
	return items[len(items)-1]
}

func final(t *testing.T, items []agentloop.Item) agentloop.Final {
	t.Helper()
	f, ok := lastItem(t, items).(agentloop.Final)
	require.Truef(t, ok, "last item is %T, want Final", lastItem(t, items))
	return f
}

func pending(t *testing.T, items []agentloop.Item) agentloop.Pending {
	t.Helper()
	p, ok := lastItem(t, items).(agentloop.Pending)
	require.Truef(t, ok, "last item is %T, want Pending", lastItem(t, items))
	return p
}

// results returns the ToolResultReady items' results in order.
func results(items []agentloop.Item) []agentloop.ToolResult {
	var out []agentloop.ToolResult
	for _, it := range items {
		if r, ok := it.(agentloop.ToolResultReady); ok {
			out = append(out, r.Result)
		}
	}
	return out
}

// roles returns the roles of the history's messages.
func roles(h agentloop.History) []agentloop.Role {
	out := make([]agentloop.Role, len(h))
	for i, m := range h {
		out[i] = m.Role
	}
	return out
}

// resultsIn returns every tool result of the history by call id.
func resultsIn(h agentloop.History) map[string]agentloop.ToolResult {
	out := make(map[string]agentloop.ToolResult)
	for _, m := range h {
		for _, p := range m.Parts {
			if p.Type == agentloop.PartToolResult {
				out[p.ToolResult.CallID] = *p.ToolResult
			}
		}
	}
	return out
}

type echoArgs struct {
	Text string `json:"text"`
}

// echoTool returns a tool that answers {"echo": text}.
func echoTool(t *testing.T, name string) *agentloop.Tool {
	t.Helper()
	tool, err := agentloop.NewTool(name, "Echo the text.", func(ctx context.Context, a echoArgs) (map[string]string, error) {
		return map[string]string{"echo": a.Text}, nil
	})
	require.NoError(t, err)
	return tool
}

func rawTool(t *testing.T, name string, fn agentloop.ToolFunc) *agentloop.Tool {
	t.Helper()
	tool, err := agentloop.NewRawTool(name, "A test tool.", nil, fn)
	require.NoError(t, err)
	return tool
}

func clientTool(t *testing.T, name string) *agentloop.Tool {
	t.Helper()
	tool, err := agentloop.NewClientTool(name, "Runs in the browser.", json.RawMessage(`{"type":"object","properties":{"precision":{"type":"string"}},"required":["precision"]}`))
	require.NoError(t, err)
	return tool
}

func turn(steps ...simtest.Step) simtest.Turn { return simtest.Turn{Reply: steps} }
