package agentloop_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// design.md §6.3: RunStart.Resumed tells a tracer that a run continues a paused one: the
// history ends with the paused run's calls, answered by the caller or not.
func TestRunStart_ResumedWhenTheHistoryEndsWithCallsAnsweredOrNot(t *testing.T) {
	loc := clientTool(t, "getLocation")
	m := simtest.NewModel(turn(simtest.Call("c1", "getLocation", `{"precision":"city"}`)), turn(simtest.Text("Berlin.")), turn(simtest.Text("ok")))
	var resumed []bool
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{loc}, Hooks: &agentloop.Hooks{
		OnRunStart: func(ctx context.Context, s agentloop.RunStart) (context.Context, error) {
			resumed = append(resumed, s.Resumed)
			return ctx, nil
		},
	}}
	items, err := collect(a.Stream(t.Context(), user("where am I?"), nil))
	require.NoError(t, err)
	paused := lastItem(t, items).(agentloop.Pending).History

	_, err = collect(a.Stream(t.Context(), paused, nil)) // still unanswered: pauses again
	require.NoError(t, err)
	answered, err := paused.AppendResults(agentloop.ToolResult{CallID: "c1", Content: `{"city":"Berlin"}`})
	require.NoError(t, err)
	items, err = collect(a.Stream(t.Context(), answered, nil))
	require.NoError(t, err)
	next := append(final(t, items).History, agentloop.UserMessage("thanks"))
	_, err = collect(a.Stream(t.Context(), next, nil))
	require.NoError(t, err)

	assert.Equal(t, []bool{false, true, true, false}, resumed)
}
