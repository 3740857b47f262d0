package ctxwindow_test

import (
	"context"
	"strings"
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

// With Config.Agent, Managers of different windows compose in one run with
// handoffs: each shapes only its agent's requests (design.md §3.11).
func TestManager_WithAgentShapesOnlyThatAgentsRequests(t *testing.T) {
	type shaped struct {
		Turn          int
		Budget        int
		OverBeforeFit bool
	}
	manager := func(window int, agent string, reports *[]shaped) *ctxwindow.Manager {
		m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: window, OutputReserve: 500, Agent: agent, OnReport: func(_ context.Context, r ctxwindow.Report) {
			*reports = append(*reports, shaped{r.Turn, r.Budget, r.Before > r.Budget && r.After <= r.Budget})
		}})
		require.NoError(t, err)
		return m
	}
	var big, small []shaped
	lookup, err := agentloop.NewTool("lookup", "Look an order up.", func(ctx context.Context, in struct {
		Order string `json:"order"`
	}) (string, error) {
		return strings.Repeat("paid in full ", 1000), nil // about 13 KB
	})
	require.NoError(t, err)
	billing := &agentloop.Agent{Name: "billing", Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Refunded.")}})}
	triage := &agentloop.Agent{
		Name:  "triage",
		Tools: []*agentloop.Tool{lookup},
		Hooks: agentloop.ComposeHooks(manager(100_000, "triage", &big).Hooks(), manager(2_500, "billing", &small).Hooks()),
		Model: simtest.NewModel(
			simtest.Turn{Reply: []simtest.Step{simtest.Call("l1", "lookup", map[string]string{"order": "42"})}},
			simtest.Turn{Reply: []simtest.Step{simtest.Text("Over to billing."), simtest.Call("t1", "transfer_to_billing", nil)}},
		),
		Handoffs: []*agentloop.Agent{billing},
	}
	for _, err := range triage.Stream(context.Background(), agentloop.History{agentloop.UserMessage("refund 42")}, nil) {
		require.NoError(t, err)
	}
	assert.Equal(t, []shaped{{1, 99_500, false}, {2, 99_500, false}}, big, "triage's Manager: triage's calls, which fit")
	assert.Equal(t, []shaped{{3, 2_000, true}}, small, "billing's Manager: billing's call, shaped to its window")
	got := billing.Model.(*simtest.Model).Requests()[0].Messages[2].Parts[0].ToolResult.Content
	assert.Contains(t, got, "paid in full", "billing's model got the lookup's result")
	assert.Less(t, len(got), 13_000, "shortened to fit billing's window")
}
