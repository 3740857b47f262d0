package agentloop_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

func handoffAgents(t *testing.T, triageModel, billingModel *simtest.Model) *agentloop.Agent {
	refund, err := agentloop.NewTool("refund", "Refund an order.", func(ctx context.Context, in struct {
		Order string `json:"order"`
	}) (string, error) {
		return "refunded " + in.Order, nil
	})
	require.NoError(t, err)
	billing := &agentloop.Agent{Name: "billing", System: "You handle billing.", Model: billingModel, Tools: []*agentloop.Tool{refund}}
	return &agentloop.Agent{Name: "triage", System: "You route requests.", Model: triageModel, Handoffs: []*agentloop.Agent{billing}}
}

// design.md §3.11: a transfer call hands the next turns to the other agent
// (its model, system prompt and tools), and the history records who spoke.
func TestHandoff_NextTurnsRunWithTheNewAgent(t *testing.T) {
	triageModel := simtest.NewModel(turn(simtest.Text("Let me get billing."), simtest.Call("t1", "transfer_to_billing", nil), simtest.Usage(1, 1)))
	billingModel := simtest.NewModel(
		simtest.Turn{Expect: simtest.Expect{Tools: []string{"refund"}, System: "You handle billing."}, Reply: []simtest.Step{simtest.Call("r1", "refund", map[string]string{"order": "42"}), simtest.Usage(10, 10)}},
		turn(simtest.Text("Refunded order 42."), simtest.Usage(10, 10)),
	)
	triage := handoffAgents(t, triageModel, billingModel)

	items, err := collect(triage.Stream(context.Background(), user("refund order 42"), nil))
	require.NoError(t, err)
	f := final(t, items)
	assert.Equal(t, "Refunded order 42.", f.Text)
	var speakers, starts []string
	for _, m := range f.History {
		if m.Role == agentloop.RoleAssistant {
			speakers = append(speakers, m.Agent)
		}
	}
	for _, it := range items {
		if ts, ok := it.(agentloop.TurnStart); ok {
			starts = append(starts, ts.Agent)
		}
	}
	assert.Equal(t, []string{"triage", "billing", "billing"}, speakers)
	assert.Equal(t, []string{"triage", "billing", "billing"}, starts)
	assert.Equal(t, []string{"transfer_to_billing"}, toolNames(triageModel.Requests()[0].Tools))
	assert.Equal(t, map[string]agentloop.Usage{"triage": {Input: 1, Output: 1}, "billing": {Input: 20, Output: 20}}, f.AgentUsage)

	// The conversation stays with billing: a later run on triage, from the
	// stored history, goes on with billing.
	h := roundTrip(t, append(f.History, agentloop.UserMessage("thanks!")))
	more := simtest.NewModel(turn(simtest.Text("You're welcome.")))
	triage = handoffAgents(t, simtest.NewModel(), more)
	items, err = collect(triage.Stream(context.Background(), h, nil))
	require.NoError(t, err)
	assert.Equal(t, "You're welcome.", final(t, items).Text)
	assert.Equal(t, "billing", final(t, items).History[len(final(t, items).History)-1].Agent)
}

func toolNames(defs []agentloop.ToolDef) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

func TestHandoff_AgentsNeedNames(t *testing.T) {
	a := &agentloop.Agent{Name: "a", Model: simtest.NewModel(), Handoffs: []*agentloop.Agent{{Model: simtest.NewModel()}}}
	_, err := collect(a.Stream(context.Background(), user("x"), nil))
	require.ErrorContains(t, err, "need a Name")
}

// Runs without handoffs record no agent, on messages or requests.
func TestHandoff_RunsWithoutHandoffsRecordNoAgent(t *testing.T) {
	model := simtest.NewModel(turn(simtest.Text("hi")))
	a := &agentloop.Agent{Name: "solo", Model: model}
	items, err := collect(a.Stream(context.Background(), user("x"), nil))
	require.NoError(t, err)
	assert.Empty(t, model.Requests()[0].Agent)
	for _, m := range final(t, items).History {
		assert.Empty(t, m.Agent)
	}
	assert.Equal(t, agentloop.TurnStart{Turn: 1}, items[0])
}
