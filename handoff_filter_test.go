package agentloop_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// filterAgents returns a triage agent with a lookup tool that hands over to
// billing (with a refund tool and the given filter).
func filterAgents(t *testing.T, triageModel, billingModel *simtest.Model, filter func(agentloop.History, int) agentloop.History) (triage, billing *agentloop.Agent) {
	t.Helper()
	triage = handoffAgents(t, triageModel, billingModel)
	lookup, err := agentloop.NewTool("lookup", "Look an order up.", func(ctx context.Context, in struct {
		Order string `json:"order"`
	}) (string, error) {
		return "order " + in.Order + ": paid", nil
	})
	require.NoError(t, err)
	triage.Tools = []*agentloop.Tool{lookup}
	billing = triage.Handoffs[0]
	billing.HandoffFilter = filter
	return triage, billing
}

// triageTurns look the order up, then hand over to billing.
func triageTurns() *simtest.Model {
	return simtest.NewModel(
		turn(simtest.Text("Let me look."), simtest.Call("l1", "lookup", map[string]string{"order": "42"})),
		turn(simtest.Text("Let me get billing."), simtest.Call("t1", "transfer_to_billing", nil)),
	)
}

var (
	userAsks     = simtest.Message{Role: agentloop.RoleUser, Text: "refund order 42"}
	triageLooks  = simtest.Message{Role: agentloop.RoleAssistant, Text: "Let me look."}
	triageHands  = simtest.Message{Role: agentloop.RoleAssistant, Text: "Let me get billing."}
	billingCalls = simtest.Message{Role: agentloop.RoleAssistant, Calls: []simtest.MessageCall{{Name: "refund", Args: json.RawMessage(`{"order":"42"}`)}}}
	refundResult = simtest.Message{Role: agentloop.RoleTool, Results: []simtest.MessageResult{{Name: "refund", Content: "refunded 42"}}}
	billingDone  = simtest.Message{Role: agentloop.RoleAssistant, Text: "Refunded order 42."}
)

// design.md §3.11: DropToolsBeforeHandoff gives the new agent's model the
// conversation without the earlier agent's tool calls and results, in
// every later turn and in a later run that continues the conversation; the
// run's history keeps everything.
func TestHandoff_DropToolsBeforeHandoffHidesTheEarlierAgentsToolWork(t *testing.T) {
	billingModel := simtest.NewModel(
		simtest.Turn{
			Expect: simtest.Expect{Messages: []simtest.Message{userAsks, triageLooks, triageHands}},
			Reply:  []simtest.Step{simtest.Call("r1", "refund", map[string]string{"order": "42"})},
		},
		simtest.Turn{
			Expect: simtest.Expect{Messages: []simtest.Message{userAsks, triageLooks, triageHands, billingCalls, refundResult}},
			Reply:  []simtest.Step{simtest.Text("Refunded order 42.")},
		},
	)
	triage, _ := filterAgents(t, triageTurns(), billingModel, agentloop.DropToolsBeforeHandoff)

	items, err := collect(triage.Stream(context.Background(), user("refund order 42"), nil))
	require.NoError(t, err)
	f := final(t, items)
	assert.Equal(t, "Refunded order 42.", f.Text)
	var names []string
	for _, m := range f.History {
		for _, c := range m.ToolCalls() {
			names = append(names, c.Name)
		}
	}
	assert.Equal(t, []string{"lookup", "transfer_to_billing", "refund"}, names, "the run's history keeps every call")
	for _, it := range items {
		if end, ok := it.(agentloop.TurnEnd); ok {
			require.NoError(t, end.History.Validate())
			assert.Equal(t, "lookup", end.History[1].ToolCalls()[0].Name, "TurnEnd.History keeps every call")
		}
	}

	// A later run from the stored history: billing still holds the
	// conversation, and its filter still finds the handoff.
	h := roundTrip(t, append(f.History, agentloop.UserMessage("thanks!")))
	more := simtest.NewModel(simtest.Turn{
		Expect: simtest.Expect{Messages: []simtest.Message{userAsks, triageLooks, triageHands, billingCalls, refundResult, billingDone, {Role: agentloop.RoleUser, Text: "thanks!"}}},
		Reply:  []simtest.Step{simtest.Text("You're welcome.")},
	})
	triage, _ = filterAgents(t, simtest.NewModel(), more, agentloop.DropToolsBeforeHandoff)
	items, err = collect(triage.Stream(context.Background(), h, nil))
	require.NoError(t, err)
	assert.Equal(t, "You're welcome.", final(t, items).Text)
	assert.Len(t, final(t, items).History, len(h)+1)
}

// design.md §3.11: without a HandoffFilter the new agent's model is given
// the whole conversation, the earlier agent's tool work included.
func TestHandoff_WithoutAFilterTheNewAgentSeesTheWholeConversation(t *testing.T) {
	lookupCall := simtest.Message{Role: agentloop.RoleAssistant, Text: "Let me look.", Calls: []simtest.MessageCall{{Name: "lookup", Args: json.RawMessage(`{"order":"42"}`)}}}
	lookupResult := simtest.Message{Role: agentloop.RoleTool, Results: []simtest.MessageResult{{Name: "lookup", Content: "order 42: paid"}}}
	transferCall := simtest.Message{Role: agentloop.RoleAssistant, Text: "Let me get billing.", Calls: []simtest.MessageCall{{Name: "transfer_to_billing", Args: json.RawMessage(`{}`)}}}
	transferResult := simtest.Message{Role: agentloop.RoleTool, Results: []simtest.MessageResult{{Name: "transfer_to_billing", Content: "Transferred to billing."}}}
	billingModel := simtest.NewModel(simtest.Turn{
		Expect: simtest.Expect{Messages: []simtest.Message{userAsks, lookupCall, lookupResult, transferCall, transferResult}},
		Reply:  []simtest.Step{simtest.Text("Refunded order 42.")},
	})
	triage, _ := filterAgents(t, triageTurns(), billingModel, nil)
	items, err := collect(triage.Stream(context.Background(), user("refund order 42"), nil))
	require.NoError(t, err)
	assert.Equal(t, "Refunded order 42.", final(t, items).Text)
}

// design.md §3.11: a filter whose messages a model cannot take (here a
// tool result without its call) fails the run with an error naming the
// agent, before its model is called; the error's history is the run's.
func TestHandoff_FilterThatBreaksACallFromItsResultFailsNamingTheAgent(t *testing.T) {
	billingModel := simtest.NewModel()
	cut := func(h agentloop.History, handoff int) agentloop.History { return h[handoff-1:] }
	triage, _ := filterAgents(t, triageTurns(), billingModel, cut)
	_, err := collect(triage.Stream(context.Background(), user("refund order 42"), nil))
	var te *agentloop.TurnError
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, agentloop.ErrInvalidHistory)
	assert.ErrorContains(t, err, `agent "billing"`)
	assert.ErrorContains(t, err, "HandoffFilter")
	assert.Empty(t, billingModel.Requests(), "the model is not called")
	assert.Len(t, te.History, 5)
	require.NoError(t, te.History.Validate())
}

// design.md §3.11: the filter runs first; the run's BeforeModelCall hooks
// (ctxwindow's among them) get what it returned, and their edits reach the
// model, not the history.
func TestHandoff_BeforeModelCallHooksGetTheFiltersMessages(t *testing.T) {
	billingModel := simtest.NewModel(simtest.Turn{
		Expect: simtest.Expect{Messages: []simtest.Message{triageLooks, triageHands}},
		Reply:  []simtest.Step{simtest.Text("Refunded order 42.")},
	})
	triage, _ := filterAgents(t, triageTurns(), billingModel, agentloop.DropToolsBeforeHandoff)
	var seen []int
	var agents []string
	triage.Hooks = &agentloop.Hooks{BeforeModelCall: func(ctx context.Context, req *agentloop.Request) error {
		seen = append(seen, len(req.Messages))
		agents = append(agents, req.Agent)
		if req.Turn == 3 {
			req.Messages = req.Messages[1:] // leave the user's message out, for this call only
		}
		return nil
	}}
	items, err := collect(triage.Stream(context.Background(), user("refund order 42"), nil))
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3, 3}, seen, "triage's calls see 1 and 3 messages, billing's the 3 the filter left")
	assert.Equal(t, []string{"triage", "triage", "billing"}, agents, "Request.Agent names the agent whose model is called")
	assert.Len(t, final(t, items).History, 6)
}

// design.md §3.11: the filter applies only once the agent was handed the
// conversation; while it holds one nobody handed it, its model sees all.
func TestHandoff_FilterIsNotCalledWithoutAHandoffToTheAgent(t *testing.T) {
	calls := 0
	a := &agentloop.Agent{
		Name: "a", Model: simtest.NewModel(turn(simtest.Text("hi"))),
		Handoffs:      []*agentloop.Agent{{Name: "b", Model: simtest.NewModel()}},
		HandoffFilter: func(h agentloop.History, _ int) agentloop.History { calls++; return h },
	}
	items, err := collect(a.Stream(context.Background(), user("x"), nil))
	require.NoError(t, err)
	assert.Equal(t, "hi", final(t, items).Text)
	assert.Zero(t, calls)
}

// DropToolsBeforeHandoff leaves out approvals and sub-runs of the calls it
// drops, and messages left without text, so what it returns is valid.
func TestDropToolsBeforeHandoff_LeavesOutApprovalsAndEmptiedMessages(t *testing.T) {
	call := func(id, name string) agentloop.Part {
		return agentloop.Part{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: id, Name: name, Args: json.RawMessage(`{}`)}}
	}
	result := func(id, name string) agentloop.Part {
		return agentloop.Part{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: id, Name: name, Content: "ok"}}
	}
	h := agentloop.History{
		agentloop.UserMessage("pay"),
		{Role: agentloop.RoleAssistant, Agent: "a", Parts: []agentloop.Part{
			{Type: agentloop.PartReasoning, Text: "thinking"}, call("c1", "pay"),
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c1", ID: "approval_c1"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c1", ID: "approval_c1", Approved: true}}, result("c1", "pay")}},
		{Role: agentloop.RoleAssistant, Agent: "a", Parts: []agentloop.Part{{Type: agentloop.PartText, Text: "Paid; over to b."}, call("t1", "transfer_to_b")}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{result("t1", "transfer_to_b")}},
		{Role: agentloop.RoleAssistant, Agent: "b", Parts: []agentloop.Part{call("c2", "x")}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{result("c2", "x")}},
	}
	require.NoError(t, h.Validate())
	got := agentloop.DropToolsBeforeHandoff(h.Clone(), 5)
	want := agentloop.History{
		agentloop.UserMessage("pay"),
		{Role: agentloop.RoleAssistant, Agent: "a", Parts: []agentloop.Part{{Type: agentloop.PartText, Text: "Paid; over to b."}}},
		h[5], h[6],
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	require.NoError(t, got.Validate())
}
