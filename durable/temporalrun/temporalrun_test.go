package temporalrun_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/temporalrun"
	"github.com/agentloop/agentloop/simtest"
)

// recorder keeps the items OnItem sees.
type recorder struct {
	mu    sync.Mutex
	items []agentloop.Item
}

func (r *recorder) onItem(_ string, it agentloop.Item, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.items = append(r.items, it)
	}
}

func newEnv(t testing.TB) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	return s.NewTestWorkflowEnvironment()
}

// execute runs one run in a fresh test environment and returns its items
// (as OnItem saw them, the last one from the workflow's result).
func execute(t testing.TB, agent *agentloop.Agent, opts temporalrun.Options, h agentloop.History) ([]agentloop.Item, agentloop.Item, error) {
	t.Helper()
	rec := &recorder{}
	opts.OnItem = rec.onItem
	r, err := temporalrun.New(agent, opts)
	require.NoError(t, err)
	env := newEnv(t)
	r.Register(env)
	env.ExecuteWorkflow(r.WorkflowName(), temporalrun.Input{ConversationID: "chat-1", History: h})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out temporalrun.Outcome
	require.NoError(t, env.GetWorkflowResult(&out))
	last, err := out.Item()
	return rec.items, last, err
}

func inProcess(t testing.TB, agent *agentloop.Agent, h agentloop.History) []agentloop.Item {
	t.Helper()
	var items []agentloop.Item
	for it, err := range agent.Stream(context.Background(), h, agentloop.WithConversationID("chat-1")) {
		require.NoError(t, err)
		items = append(items, it)
	}
	return items
}

type weatherArgs struct {
	City string `json:"city"`
}

// weatherAgent calls its weather tool twice in one turn, then answers.
func weatherAgent(calls *atomic.Int32) *agentloop.Agent {
	tool, err := agentloop.NewTool("weather", "The weather in a city.", func(ctx context.Context, a weatherArgs) (string, error) {
		calls.Add(1)
		return "sunny in " + a.City + " key=" + agentloop.IdempotencyKey(ctx)[:8], nil
	})
	if err != nil {
		panic(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Looking."), simtest.Call("", "weather", weatherArgs{"Paris"}),
			simtest.Call("", "weather", weatherArgs{"Oslo"}), simtest.Usage(10, 5)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Sunny in both."), simtest.Usage(20, 4)}},
	)
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}}
}

// The workflow replays each model call in whole parts (design §3.9), so
// the items match once the in-process deltas are joined into parts.
func TestWorkflow_ToolRunGivesTheSameItemsAndHistoryAsInProcess(t *testing.T) {
	var local, durable atomic.Int32
	want := inProcess(t, weatherAgent(&local), agentloop.History{agentloop.UserMessage("weather?")})
	got, last, err := execute(t, weatherAgent(&durable), temporalrun.Options{}, agentloop.History{agentloop.UserMessage("weather?")})
	require.NoError(t, err)
	require.Equal(t, int32(2), durable.Load(), "each tool call runs once")
	require.Empty(t, cmp.Diff(wholeParts(want), got, cmpItems), "items")
	require.Empty(t, cmp.Diff(want[len(want)-1], last, cmpItems), "the workflow's result is the last item")
}

// cmpItems compares items by their JSON-visible content (Go errors behind
// results are not recorded).
var cmpItems = cmp.Transformer("json", func(it agentloop.Item) string {
	b, err := json.Marshal(it)
	if err != nil {
		panic(err)
	}
	return string(b)
})

// wholeParts joins runs of text deltas and drops tool-call deltas: the
// items of a replayed model call.
func wholeParts(items []agentloop.Item) []agentloop.Item {
	var out []agentloop.Item
	for _, it := range items {
		switch v := it.(type) {
		case agentloop.ToolCallDelta:
			continue
		case agentloop.TextDelta:
			if n := len(out); n > 0 {
				if prev, ok := out[n-1].(agentloop.TextDelta); ok {
					out[n-1] = agentloop.TextDelta{Text: prev.Text + v.Text}
					continue
				}
			}
		}
		out = append(out, it)
	}
	return out
}
