package dbosrun_test

import (
	"context"
	"encoding/json"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/dbosrun"
)

// Start records the run's client tools and System with it: the model of
// the run sees them; the items reach OnItem.
func TestStart_RecordsClientToolsAndSystemWithTheRun(t *testing.T) {
	seen := make(chan *agentloop.Request, 1)
	model := agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		seen <- req
		return func(yield func(agentloop.Chunk, error) bool) {
			yield(agentloop.ToolCall{Name: "pick", Args: json.RawMessage(`{}`)}, nil)
		}
	})
	ended := make(chan agentloop.Item, 1)
	_, r := launch(t, &agentloop.Agent{Model: model, System: "agent's"}, dbosrun.Options{OnItem: func(_ string, it agentloop.Item, err error) {
		if _, ok := it.(agentloop.Pending); ok || err != nil {
			ended <- it
		}
	}})
	pick, err := agentloop.NewClientTool("pick", "Picks in the browser.", json.RawMessage(`{"type":"object","properties":{},"required":[]}`))
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), "c/s", "c", agentloop.History{agentloop.UserMessage("go")},
		&agentloop.RunOptions{Tools: []*agentloop.Tool{pick}, System: "the run's"}))
	req := <-seen
	assert.Equal(t, "the run's", req.System)
	require.Len(t, req.Tools, 1)
	assert.Equal(t, "pick", req.Tools[0].Name)
	p, ok := (<-ended).(agentloop.Pending)
	require.True(t, ok, "the run waits for its client call")
	require.Len(t, p.ClientCalls, 1)
}

func TestStart_RefusesOptionsItCannotRecord(t *testing.T) {
	_, r := launch(t, toolAgent(t, 0), dbosrun.Options{})
	server, err := agentloop.NewRawTool("srv", "Runs here.", nil, func(context.Context, json.RawMessage) (string, error) { return "", nil })
	require.NoError(t, err)
	h := agentloop.History{agentloop.UserMessage("go")}
	for name, opts := range map[string]*agentloop.RunOptions{
		"hooks":       {Hooks: &agentloop.Hooks{}},
		"settings":    {Settings: &agentloop.Settings{}},
		"server tool": {Tools: []*agentloop.Tool{server}},
	} {
		assert.Error(t, r.Start(context.Background(), "run-"+name, "c", h, opts), name)
	}
	assert.Error(t, r.Start(context.Background(), "", "c", h, nil), "an empty run id")
	assert.False(t, r.Stop("no such run", context.Canceled))
}
