package ctxwindow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"github.com/agentloop/agentloop/simtest"
)

// After a handoff, the run's Manager measures and shapes what the receiving
// agent's HandoffFilter returned, not the whole history (design.md §3.11).
func TestManager_ShapesWhatTheHandoffFilterLeft(t *testing.T) {
	var seen []int
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 100_000, OnReport: func(_ context.Context, r ctxwindow.Report) {
		seen = append(seen, r.Messages)
	}})
	require.NoError(t, err)
	lookup, err := agentloop.NewTool("lookup", "Look an order up.", func(ctx context.Context, in struct {
		Order string `json:"order"`
	}) (string, error) {
		return "paid", nil
	})
	require.NoError(t, err)
	billing := &agentloop.Agent{
		Name:          "billing",
		Model:         simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Refunded.")}}),
		HandoffFilter: agentloop.DropToolsBeforeHandoff,
	}
	triage := &agentloop.Agent{
		Name:  "triage",
		Tools: []*agentloop.Tool{lookup},
		Hooks: m.Hooks(),
		Model: simtest.NewModel(
			simtest.Turn{Reply: []simtest.Step{simtest.Call("l1", "lookup", map[string]string{"order": "42"})}},
			simtest.Turn{Reply: []simtest.Step{simtest.Text("Over to billing."), simtest.Call("t1", "transfer_to_billing", nil)}},
		),
		Handoffs: []*agentloop.Agent{billing},
	}
	var final agentloop.Final
	for it, err := range triage.Stream(context.Background(), agentloop.History{agentloop.UserMessage("refund 42")}, nil) {
		require.NoError(t, err)
		if f, ok := it.(agentloop.Final); ok {
			final = f
		}
	}
	assert.Equal(t, "Refunded.", final.Text)
	assert.Len(t, final.History, 6)
	assert.Equal(t, []int{1, 3, 2}, seen, "billing's call: the user's message and triage's text, of 5 messages")
}
