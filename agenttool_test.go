package agentloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

func agentTool(t *testing.T, a *agentloop.Agent, o agentloop.AgentToolOptions) *agentloop.Tool {
	t.Helper()
	tool, err := agentloop.AgentTool(a, o)
	require.NoError(t, err)
	return tool
}

// describe names an item compactly, with its Nested tags: "researcher@1[call_1]:TextDelta(Found)".
func describe(it agentloop.Item) string {
	prefix := ""
	for {
		n, ok := it.(*agentloop.Nested)
		if !ok {
			break
		}
		prefix += fmt.Sprintf("%s@%d%v:", n.Agent, n.Depth, n.Path)
		it = n.Item
	}
	switch v := it.(type) {
	case agentloop.TextDelta:
		return prefix + "Text(" + v.Text + ")"
	case agentloop.ToolCallReady:
		return prefix + "Call(" + v.Call.ID + " " + v.Call.Name + ")"
	case agentloop.ToolResultReady:
		return prefix + "Result(" + v.Result.CallID + " " + v.Result.Content + ")"
	case agentloop.TurnStart:
		return prefix + fmt.Sprintf("TurnStart(%d)", v.Turn)
	case agentloop.TurnEnd:
		return prefix + fmt.Sprintf("TurnEnd(%d)", v.Turn)
	case agentloop.Final:
		return prefix + "Final(" + v.Text + ")"
	case agentloop.Pending:
		return prefix + "Pending"
	case agentloop.ToolCallDelta:
		return prefix + "CallDelta"
	}
	return prefix + fmt.Sprintf("%T", it)
}

func describeAll(items []agentloop.Item) []string {
	var out []string
	for _, it := range items {
		if d := describe(it); !strings.HasSuffix(d, "CallDelta") {
			out = append(out, d)
		}
	}
	return out
}

// design.md §3.10: a sub-run's items reach the parent's consumer as they
// happen, between the call and its result, tagged with the call, the agent
// and the depth; the call's result is the sub-run's answer.
func TestAgentTool_StreamsTheSubRunsItemsInOrderWithTags(t *testing.T) {
	researcher := &agentloop.Agent{Name: "researcher", Model: simtest.NewModel(
		turn(simtest.Text("Sunny in Berlin.")),
	)}
	parent := &agentloop.Agent{Name: "lead", Model: simtest.NewModel(
		turn(simtest.Call("call_1", "researcher", map[string]string{"task": "Weather in Berlin?"})),
		turn(simtest.Text("It is sunny.")),
	), Tools: []*agentloop.Tool{agentTool(t, researcher, agentloop.AgentToolOptions{})}}

	items, err := collect(parent.Stream(context.Background(), user("How is the weather?"), nil))
	require.NoError(t, err)
	want := []string{
		"TurnStart(1)", "Call(call_1 researcher)", "TurnEnd(1)",
		"researcher@1[call_1]:TurnStart(1)",
		"researcher@1[call_1]:Text(Sunny )", "researcher@1[call_1]:Text(in )", "researcher@1[call_1]:Text(Berlin.)",
		"researcher@1[call_1]:TurnEnd(1)",
		"researcher@1[call_1]:Final(Sunny in Berlin.)",
		"Result(call_1 Sunny in Berlin.)",
		"TurnStart(2)", "Text(It )", "Text(is )", "Text(sunny.)", "TurnEnd(2)", "Final(It is sunny.)",
	}
	if d := cmp.Diff(want, describeAll(items)); d != "" {
		t.Fatalf("items (-want +got):\n%s", d)
	}
	for _, it := range items {
		if n, ok := it.(*agentloop.Nested); ok {
			assert.Equal(t, "call_1", n.CallID)
			assert.Equal(t, "researcher", n.Agent)
		}
	}
	// The sub-run got the task only.
	req := researcher.Model.(*simtest.Model).Requests()[0]
	if d := cmp.Diff(agentloop.History{agentloop.UserMessage("Weather in Berlin?")}, req.Messages); d != "" {
		t.Errorf("sub-run's messages (-want +got):\n%s", d)
	}
}

// Nested is matched as a pointer only: a "case agentloop.Nested" does not
// compile, so no consumer's switch silently misses nested items.
func TestNested_OnlyAPointerIsAnItem(t *testing.T) {
	item := reflect.TypeFor[agentloop.Item]()
	assert.True(t, reflect.TypeFor[*agentloop.Nested]().Implements(item))
	assert.False(t, reflect.TypeFor[agentloop.Nested]().Implements(item))
}

// The *Nested items are cut from blocks, each handed out once: items kept
// past many more (here over three blocks' worth) still hold what they held.
func TestNested_KeptItemsStayAsTheyWere(t *testing.T) {
	words := make([]string, 200)
	for i := range words {
		words[i] = fmt.Sprint("w", i)
	}
	text := strings.Join(words, " ")
	sub := &agentloop.Agent{Name: "sub", Model: simtest.NewModel(turn(simtest.Text(text)))}
	lead := &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{})},
		Model: simtest.NewModel(turn(simtest.Call("c1", "sub", map[string]string{"task": "t"})), turn(simtest.Text("done")))}
	items, err := collect(lead.Stream(context.Background(), user("go"), nil))
	require.NoError(t, err)
	var got strings.Builder
	seen := map[*agentloop.Nested]bool{}
	for _, it := range items {
		if n, ok := it.(*agentloop.Nested); ok {
			assert.False(t, seen[n], "a *Nested handed out twice")
			seen[n] = true
			if d, ok := n.Item.(agentloop.TextDelta); ok {
				got.WriteString(d.Text)
			}
		}
	}
	assert.Equal(t, text, got.String())
}

// threeLevels returns lead → mid → leaf, where leaf runs tool.
func threeLevels(t *testing.T, leafModel, midModel, leadModel *simtest.Model, leafTools ...*agentloop.Tool) *agentloop.Agent {
	leaf := &agentloop.Agent{Name: "leaf", Model: leafModel, Tools: leafTools}
	mid := &agentloop.Agent{Name: "mid", Model: midModel, Tools: []*agentloop.Tool{agentTool(t, leaf, agentloop.AgentToolOptions{})}}
	return &agentloop.Agent{Name: "lead", Model: leadModel, Tools: []*agentloop.Tool{agentTool(t, mid, agentloop.AgentToolOptions{})}}
}

// design.md §3.10: items of agents within agents are wrapped once, with
// their depth and the path of calls.
func TestAgentTool_AgentsWithinAgentsTagDepthAndPath(t *testing.T) {
	lead := threeLevels(t,
		simtest.NewModel(turn(simtest.Text("leaf says hi"), simtest.Usage(1, 2))),
		simtest.NewModel(
			turn(simtest.Call("m1", "leaf", map[string]string{"task": "greet"}), simtest.Usage(10, 20)),
			turn(simtest.Text("mid done"), simtest.Usage(10, 20)),
		),
		simtest.NewModel(
			turn(simtest.Call("l1", "mid", map[string]string{"task": "go"}), simtest.Usage(100, 200)),
			turn(simtest.Text("all done"), simtest.Usage(100, 200)),
		),
	)
	items, err := collect(lead.Stream(context.Background(), user("start"), nil))
	require.NoError(t, err)
	want := []string{
		"TurnStart(1)", "Call(l1 mid)", "TurnEnd(1)",
		"mid@1[l1]:TurnStart(1)", "mid@1[l1]:Call(m1 leaf)", "mid@1[l1]:TurnEnd(1)",
		"leaf@2[l1 m1]:TurnStart(1)", "leaf@2[l1 m1]:Text(leaf )", "leaf@2[l1 m1]:Text(says )", "leaf@2[l1 m1]:Text(hi)",
		"leaf@2[l1 m1]:TurnEnd(1)", "leaf@2[l1 m1]:Final(leaf says hi)",
		"mid@1[l1]:Result(m1 leaf says hi)",
		"mid@1[l1]:TurnStart(2)", "mid@1[l1]:Text(mid )", "mid@1[l1]:Text(done)", "mid@1[l1]:TurnEnd(2)", "mid@1[l1]:Final(mid done)",
		"Result(l1 mid done)",
		"TurnStart(2)", "Text(all )", "Text(done)", "TurnEnd(2)", "Final(all done)",
	}
	if d := cmp.Diff(want, describeAll(items)); d != "" {
		t.Fatalf("items (-want +got):\n%s", d)
	}
	// The items of one run share one SubAgent: one per run, here two.
	tags := map[*agentloop.SubAgent]string{}
	for _, it := range items {
		if n, ok := it.(*agentloop.Nested); ok {
			assert.Equal(t, "l1", n.CallID)
			assert.Len(t, n.Path, n.Depth)
			if agent, seen := tags[n.SubAgent]; seen {
				assert.Equal(t, agent, n.Agent, "a SubAgent shared by two runs' items")
			}
			tags[n.SubAgent] = n.Agent
		}
	}
	assert.Len(t, tags, 2, "SubAgents for the two sub-runs' items")

	// Usage adds up at every level, and per agent.
	f := final(t, items)
	assert.Equal(t, agentloop.Usage{Input: 221, Output: 442}, f.Usage)
	assert.Equal(t, map[string]agentloop.Usage{
		"lead": {Input: 200, Output: 400},
		"mid":  {Input: 20, Output: 40},
		"leaf": {Input: 1, Output: 2},
	}, f.AgentUsage)
	var midFinal agentloop.Final
	for _, it := range items {
		if n, ok := it.(*agentloop.Nested); ok && n.Agent == "mid" {
			if f, ok := n.Item.(agentloop.Final); ok {
				midFinal = f
			}
		}
	}
	assert.Equal(t, agentloop.Usage{Input: 21, Output: 42}, midFinal.Usage)
}

func TestAgentTool_RunsWithoutSubAgentsHaveNoAgentUsage(t *testing.T) {
	a := &agentloop.Agent{Name: "solo", Model: simtest.NewModel(turn(simtest.Text("hi"), simtest.Usage(1, 1)))}
	items, err := collect(a.Stream(context.Background(), user("x"), nil))
	require.NoError(t, err)
	assert.Nil(t, final(t, items).AgentUsage)
}

// design.md §3.10: the calling run's budget counts its sub-runs' tokens.
func TestAgentTool_BudgetCountsSubRuns(t *testing.T) {
	sub := &agentloop.Agent{Name: "sub", Model: simtest.NewModel(turn(simtest.Text("expensive"), simtest.Usage(500, 500)))}
	parent := &agentloop.Agent{Name: "lead", Budget: agentloop.Budget{Tokens: 100}, Model: simtest.NewModel(
		turn(simtest.Call("c1", "sub", map[string]string{"task": "t"}), simtest.Usage(10, 10)),
		turn(simtest.Text("never")),
	), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{})}}
	_, err := collect(parent.Stream(context.Background(), user("x"), nil))
	var be *agentloop.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 1020, be.Usage.Total())
}

// design.md §3.10: a cancel of the calling run reaches every depth, with
// its reason, and every call has a result.
func TestAgentTool_CancelReachesEveryDepth(t *testing.T) {
	for depth := 0; depth <= 2; depth++ {
		t.Run(fmt.Sprint("at depth ", depth), func(t *testing.T) {
			leafModel := simtest.NewModel(turn(simtest.Hang()))
			lead := threeLevels(t, leafModel,
				simtest.NewModel(turn(simtest.Call("m1", "leaf", map[string]string{"task": "t"})), turn(simtest.Text("x"))),
				simtest.NewModel(turn(simtest.Call("l1", "mid", map[string]string{"task": "t"})), turn(simtest.Text("x"))),
			)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var err error
			for it, e := range lead.Stream(ctx, user("x"), nil) {
				if e != nil {
					err = e
					break
				}
				if n, ok := it.(*agentloop.Nested); ok && n.Depth == 2 {
					if _, ok := n.Item.(agentloop.TurnStart); ok {
						cancel(agentloop.Cancel("user pressed stop"))
					}
				}
			}
			var ce *agentloop.CancelledError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "user pressed stop", ce.Reason)
			require.NoError(t, ce.History.Validate())
			assert.Empty(t, ce.History.Unanswered())
			assert.Equal(t, "cancelled: user pressed stop", ce.History[len(ce.History)-1].Parts[0].ToolResult.Content)
		})
	}
}

// design.md §3.7, §3.10: a break of the consumer stops the sub-runs at
// every depth; goleak (TestMain) checks that no goroutine is left.
func TestAgentTool_BreakStopsEveryDepth(t *testing.T) {
	for depth := 1; depth <= 2; depth++ {
		t.Run(fmt.Sprint("on an item of depth ", depth), func(t *testing.T) {
			lead := threeLevels(t,
				simtest.NewModel(turn(simtest.Text("one two three"), simtest.Hang())),
				simtest.NewModel(turn(simtest.Text("mid"), simtest.Call("m1", "leaf", map[string]string{"task": "t"})), turn(simtest.Text("x"))),
				simtest.NewModel(turn(simtest.Call("l1", "mid", map[string]string{"task": "t"})), turn(simtest.Text("x"))),
			)
			seen := 0
			for it, err := range lead.Stream(context.Background(), user("x"), nil) {
				require.NoError(t, err)
				if n, ok := it.(*agentloop.Nested); ok && n.Depth == depth {
					if _, ok := n.Item.(agentloop.TextDelta); ok {
						seen++
						break
					}
				}
			}
			assert.Equal(t, 1, seen)
		})
	}
}

// design.md §3.10: nothing of a sub-run is yielded after the calling run
// stopped, also when a ToolContext hook gave the call a context that the
// run's cancel does not reach (the sub-run then goes on, unseen).
func TestAgentTool_NothingOfASubRunIsYieldedAfterAStop(t *testing.T) {
	hooks := map[string]*agentloop.Hooks{
		"with the run's context": nil,
		"with a detached context": {ToolContext: func(ctx context.Context, _ agentloop.ToolCall) context.Context {
			return context.WithoutCancel(ctx)
		}},
	}
	for name, h := range hooks {
		t.Run(name, func(t *testing.T) {
			sub := &agentloop.Agent{Name: "sub", Model: simtest.NewModel(turn(simtest.Text("one two three four five")))}
			lead := &agentloop.Agent{Name: "lead", Hooks: h, Model: simtest.NewModel(
				turn(simtest.Call("c1", "sub", map[string]string{"task": "t"})),
				turn(simtest.Text("x")),
			), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{})}}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			stopped, after := false, 0
			for it := range lead.Stream(ctx, user("x"), nil) {
				if _, ok := it.(*agentloop.Nested); ok && stopped {
					after++
				}
				if n, ok := it.(*agentloop.Nested); ok && !stopped {
					if _, ok := n.Item.(agentloop.TextDelta); ok {
						cancel(agentloop.Cancel("stop"))
						stopped = true
					}
				}
			}
			assert.True(t, stopped)
			assert.Zero(t, after, "nested items yielded after the stop")
		})
	}
}

// design.md §3.10: the call's timeout bounds the sub-run.
func TestAgentTool_TimeoutReachesTheSubRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		subModel := simtest.NewModel(turn(simtest.Hang()))
		sub := &agentloop.Agent{Name: "slow", Model: subModel}
		parent := &agentloop.Agent{Name: "lead", ToolTimeout: time.Minute, Model: simtest.NewModel(
			turn(simtest.Call("c1", "slow", map[string]string{"task": "t"})),
			turn(simtest.Text("gave up")),
		), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{})}}
		items, err := collect(parent.Stream(context.Background(), user("x"), nil))
		require.NoError(t, err)
		res := results(items)
		require.Len(t, res, 1)
		assert.ErrorIs(t, res[0].Err, agentloop.ErrToolTimeout)
		assert.Equal(t, "gave up", final(t, items).Text)
	})
}

// A sub-run that fails gives the call an error result naming the agent.
func TestAgentTool_FailedSubRunIsAnErrorResult(t *testing.T) {
	sub := &agentloop.Agent{Name: "flaky", Model: simtest.NewModel(turn(simtest.Fail("boom")))}
	parent := &agentloop.Agent{Name: "lead", Model: simtest.NewModel(
		turn(simtest.Call("c1", "flaky", map[string]string{"task": "t"})),
		turn(simtest.Text("sorry")),
	), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{})}}
	items, err := collect(parent.Stream(context.Background(), user("x"), nil))
	require.NoError(t, err)
	res := results(items)
	require.Len(t, res, 1)
	assert.True(t, res[0].IsError)
	assert.Contains(t, res[0].Content, `agent "flaky" failed`)
	assert.Contains(t, res[0].Content, "boom")
}

// With Conversation, the sub-agent sees the calling run's conversation
// (without the calling turn's calls) and then the task.
func TestAgentTool_ConversationShowsTheCallersMessages(t *testing.T) {
	subModel := simtest.NewModel(turn(simtest.Text("ok")))
	sub := &agentloop.Agent{Name: "helper", Model: subModel}
	parent := &agentloop.Agent{Name: "lead", Model: simtest.NewModel(
		turn(simtest.Text("Let me ask."), simtest.Call("c1", "helper", map[string]string{"task": "summarize"})),
		turn(simtest.Text("done")),
	), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{Conversation: true})}}
	_, err := collect(parent.Stream(context.Background(), user("I like tea."), nil))
	require.NoError(t, err)
	want := agentloop.History{
		agentloop.UserMessage("I like tea."),
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("Let me ask.")}},
		agentloop.UserMessage("summarize"),
	}
	if d := cmp.Diff(want, subModel.Requests()[0].Messages); d != "" {
		t.Errorf("sub-run's messages (-want +got):\n%s", d)
	}
}

func TestAgentTool_NeedsAName(t *testing.T) {
	_, err := agentloop.AgentTool(&agentloop.Agent{Model: simtest.NewModel()}, agentloop.AgentToolOptions{})
	require.ErrorContains(t, err, "no Name")
	tool, err := agentloop.AgentTool(&agentloop.Agent{Model: simtest.NewModel()}, agentloop.AgentToolOptions{Name: "x"})
	require.NoError(t, err)
	assert.Equal(t, "x", tool.Name)
}

// roundTrip marshals and unmarshals h, as a stateless server would.
func roundTrip(t *testing.T, h agentloop.History) agentloop.History {
	t.Helper()
	b, err := json.Marshal(h)
	require.NoError(t, err)
	var out agentloop.History
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// design.md §6.4: a sub-agent's approval pauses the whole run; the
// decision, appended to the caller's history after a JSON round trip,
// resumes the sub-run where it stopped.
func TestAgentTool_NestedApprovalPausesAndResumesThroughTheHistory(t *testing.T) {
	ran := 0
	pay, err := agentloop.NewTool("pay", "Pay.", func(ctx context.Context, in struct {
		Amount int `json:"amount"`
	}) (string, error) {
		ran++
		return fmt.Sprintf("paid %d", in.Amount), nil
	})
	require.NoError(t, err)
	pay.NeedsApproval = true
	leafModel := simtest.NewModel(
		turn(simtest.Call("p1", "pay", map[string]int{"amount": 5})),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"p1": "paid 5"}}, Reply: []simtest.Step{simtest.Text("payment done")}},
	)
	midModel := simtest.NewModel(
		turn(simtest.Call("m1", "leaf", map[string]string{"task": "pay 5"})),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"m1": "payment done"}}, Reply: []simtest.Step{simtest.Text("mid: paid")}},
	)
	leadModel := simtest.NewModel(
		turn(simtest.Call("l1", "mid", map[string]string{"task": "pay"})),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"l1": "mid: paid"}}, Reply: []simtest.Step{simtest.Text("Paid.")}},
	)
	lead := threeLevels(t, leafModel, midModel, leadModel, pay)

	items, err := collect(lead.Stream(context.Background(), user("pay please"), nil))
	require.NoError(t, err)
	p := pending(t, items)
	require.Len(t, p.Approvals, 1)
	assert.Equal(t, "l1/m1/p1", p.Approvals[0].ID)
	assert.Equal(t, "pay", p.Approvals[0].Name)
	assert.Empty(t, p.History.Unanswered()[1:], "only the lead's call is unanswered")
	assert.Equal(t, 0, ran)

	h := roundTrip(t, p.History)
	if d := cmp.Diff(p.History, h, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); d != "" {
		t.Fatalf("round trip (-before +after):\n%s", d)
	}
	_, err = h.AppendApprovals(agentloop.Approval{CallID: "l1/m1/nope", Approved: true})
	require.ErrorIs(t, err, agentloop.ErrInvalidHistory)
	h, err = h.AppendApprovals(agentloop.Approval{CallID: "l1/m1/p1", Approved: true})
	require.NoError(t, err)
	h = roundTrip(t, h)

	items, err = collect(lead.Stream(context.Background(), h, nil))
	require.NoError(t, err)
	assert.Equal(t, "Paid.", final(t, items).Text)
	assert.Equal(t, 1, ran)
	assert.Contains(t, describeAll(items), "leaf@2[l1 m1]:Result(p1 paid 5)")
	assert.Equal(t, 0, leafModel.Remaining())
	assert.Equal(t, 0, midModel.Remaining())
}

// design.md §6.4: a sub-agent's client tool call reaches the caller as
// the run's Pending; its result resumes the sub-run.
func TestAgentTool_NestedClientCallResumesWithItsResult(t *testing.T) {
	loc, err := agentloop.NewClientTool("get_location", "Where the user is.", nil)
	require.NoError(t, err)
	subModel := simtest.NewModel(
		turn(simtest.Text("Asking."), simtest.Call("g1", "get_location", nil)),
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"g1": "Berlin"}}, Reply: []simtest.Step{simtest.Text("You are in Berlin.")}},
	)
	sub := &agentloop.Agent{Name: "locator", Model: subModel, Tools: []*agentloop.Tool{loc}}
	parent := &agentloop.Agent{Name: "lead", Model: simtest.NewModel(
		turn(simtest.Call("c1", "locator", map[string]string{"task": "where?"})),
		turn(simtest.Text("Berlin it is.")),
	), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{})}}

	items, err := collect(parent.Stream(context.Background(), user("where am I"), nil))
	require.NoError(t, err)
	p := pending(t, items)
	require.Len(t, p.ClientCalls, 1)
	assert.Equal(t, "c1/g1", p.ClientCalls[0].ID)
	assert.NoError(t, p.History.Validate())

	h, err := roundTrip(t, p.History).AppendResults(agentloop.ToolResult{CallID: "c1/g1", Content: "Berlin"})
	require.NoError(t, err)
	items, err = collect(parent.Stream(context.Background(), roundTrip(t, h), nil))
	require.NoError(t, err)
	assert.Equal(t, "Berlin it is.", final(t, items).Text)
	f := final(t, items)
	require.NoError(t, f.History.Validate())
	assert.Equal(t, "c1", f.History[len(f.History)-2].Parts[0].ToolResult.CallID)
	assert.Equal(t, "You are in Berlin.", f.History[len(f.History)-2].Parts[0].ToolResult.Content)
}

func TestHistory_ValidateChecksSubRuns(t *testing.T) {
	h := agentloop.History{
		agentloop.UserMessage("x"),
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "a"}}}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartSubRun, SubRun: &agentloop.SubRun{CallID: "zz"}}}},
	}
	require.ErrorIs(t, h.Validate(), agentloop.ErrInvalidHistory)
	h[2].Parts[0].SubRun.CallID = "c1"
	require.NoError(t, h.Validate())
	h[2].Parts[0].SubRun.History = agentloop.History{{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "q"}}}}}
	require.ErrorIs(t, h.Validate(), agentloop.ErrInvalidHistory)
}

// AgentToolOptions.Options reach every sub-run.
func TestAgentTool_OptionsReachTheSubRun(t *testing.T) {
	subModel := simtest.NewModel(simtest.Turn{Expect: simtest.Expect{System: "Be brief."}, Reply: []simtest.Step{simtest.Text("ok")}})
	sub := &agentloop.Agent{Name: "sub", System: "Be verbose.", Model: subModel}
	parent := &agentloop.Agent{Name: "lead", Model: simtest.NewModel(
		turn(simtest.Call("c1", "sub", map[string]string{"task": "t"})),
		turn(simtest.Text("done")),
	), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{RunOptions: &agentloop.RunOptions{System: "Be brief."}})}}
	items, err := collect(parent.Stream(context.Background(), user("x"), nil))
	require.NoError(t, err)
	res := results(items)
	require.Len(t, res, 1)
	assert.Equal(t, "ok", res[0].Content)
}

// design.md §3.10: sub-runs of calls of one turn run at the same time;
// each one's items keep their order, every item comes before its call's
// result, results come in call order, and usage adds up per agent.
func TestAgentTool_ConcurrentSubRunsKeepTheirOrder(t *testing.T) {
	words := "one two three four five six seven eight nine ten"
	a := &agentloop.Agent{Name: "a", Model: simtest.NewModel(turn(simtest.Text(words), simtest.Usage(1, 1)))}
	b := &agentloop.Agent{Name: "b", Model: simtest.NewModel(turn(simtest.Text(words), simtest.Usage(2, 2)))}
	parent := &agentloop.Agent{Name: "lead", Model: simtest.NewModel(
		turn(simtest.Call("ca", "a", map[string]string{"task": "t"}), simtest.Call("cb", "b", map[string]string{"task": "t"})),
		turn(simtest.Text("done")),
	), Tools: []*agentloop.Tool{agentTool(t, a, agentloop.AgentToolOptions{}), agentTool(t, b, agentloop.AgentToolOptions{})}}
	items, err := collect(parent.Stream(context.Background(), user("x"), nil))
	require.NoError(t, err)
	texts := map[string]string{}
	resultAt := map[string]int{}
	for i, it := range items {
		switch v := it.(type) {
		case *agentloop.Nested:
			_, seen := resultAt[v.CallID]
			require.False(t, seen, "item of %s after its result", v.CallID)
			if d, ok := v.Item.(agentloop.TextDelta); ok {
				texts[v.Agent] += d.Text
			}
		case agentloop.ToolResultReady:
			resultAt[v.Result.CallID] = i
		}
	}
	assert.Equal(t, map[string]string{"a": words, "b": words}, texts)
	assert.Less(t, resultAt["ca"], resultAt["cb"])
	f := final(t, items)
	assert.Equal(t, agentloop.Usage{Input: 1, Output: 1}, f.AgentUsage["a"])
	assert.Equal(t, agentloop.Usage{Input: 2, Output: 2}, f.AgentUsage["b"])
}

// design.md §3.11: a handoff and a pause in one turn: the resumed run goes
// on with the agent handed to.
func TestHandoff_PausedTurnResumesWithTheAgentHandedTo(t *testing.T) {
	loc, err := agentloop.NewClientTool("get_location", "Where the user is.", nil)
	require.NoError(t, err)
	triageModel := simtest.NewModel(turn(simtest.Call("t1", "transfer_to_billing", nil), simtest.Call("g1", "get_location", nil)))
	billingModel := simtest.NewModel(turn(simtest.Text("Billing, in Berlin.")))
	triage := handoffAgents(t, triageModel, billingModel)
	triage.Tools = []*agentloop.Tool{loc}
	items, err := collect(triage.Stream(context.Background(), user("x"), nil))
	require.NoError(t, err)
	p := pending(t, items)
	h, err := roundTrip(t, p.History).AppendResults(agentloop.ToolResult{CallID: "g1", Content: "Berlin"})
	require.NoError(t, err)
	items, err = collect(triage.Stream(context.Background(), h, nil))
	require.NoError(t, err)
	f := final(t, items)
	assert.Equal(t, "Billing, in Berlin.", f.Text)
	assert.Equal(t, "billing", f.History[len(f.History)-1].Agent)
}

// design.md §3.10: every item a sub-run handed over comes before its
// call's result, also when the call ended before the calling run took
// them. The sub-run runs beside another call (so on its call's goroutine);
// the consumer, on its first text, lets it go on and waits until it has
// ended: its other items are then waiting when the run sees the call end.
// Which of the two it sees first is the scheduler's choice, so the run is
// repeated.
func TestAgentTool_ItemsHandedOverBeforeTheCallEndedComeBeforeItsResult(t *testing.T) {
	for range 20 {
		synctest.Test(t, func(t *testing.T) {
			release, proceed := make(chan struct{}), make(chan struct{})
			block, err := agentloop.NewRawTool("block", "Waits.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
				select {
				case <-release:
					return "released", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			})
			require.NoError(t, err)
			subModel := agentloop.ModelFunc(func(ctx context.Context, _ *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
				return func(yield func(agentloop.Chunk, error) bool) {
					if !yield(agentloop.TextDelta{Text: "one "}, nil) {
						return
					}
					select {
					case <-proceed:
					case <-ctx.Done():
						return
					}
					for _, w := range []string{"two ", "three"} {
						if !yield(agentloop.TextDelta{Text: w}, nil) {
							return
						}
					}
				}
			})
			sub := &agentloop.Agent{Name: "sub", Model: subModel}
			parent := &agentloop.Agent{Name: "lead", Model: simtest.NewModel(
				turn(simtest.Call("ca", "sub", map[string]string{"task": "t"}), simtest.Call("cb", "block", nil)),
				turn(simtest.Text("done")),
			), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{}), block}}
			var got []string
			for it, err := range parent.Stream(context.Background(), user("x"), nil) {
				require.NoError(t, err)
				if n, ok := it.(*agentloop.Nested); ok && n.Item == (agentloop.TextDelta{Text: "one "}) {
					close(proceed)
					synctest.Wait() // the sub-run ends; its call returns
					close(release)
				}
				if d := describe(it); !strings.HasSuffix(d, "CallDelta") {
					got = append(got, d)
				}
			}
			want := []string{
				"TurnStart(1)", "Call(ca sub)", "Call(cb block)", "TurnEnd(1)",
				"sub@1[ca]:TurnStart(1)", "sub@1[ca]:Text(one )", "sub@1[ca]:Text(two )", "sub@1[ca]:Text(three)",
				"sub@1[ca]:TurnEnd(1)", "sub@1[ca]:Final(one two three)",
				"Result(ca one two three)", "Result(cb released)",
				"TurnStart(2)", "Text(done)", "TurnEnd(2)", "Final(done)",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("items (-want +got):\n%s", d)
			}
		})
	}
}

// design.md §3.10: a sub-run that runs while another call of its turn
// runs does not hold up that call's progress (the sub-run's model here
// waits for it: run one after the other, the turn would never end).
func TestAgentTool_SubRunRunsAlongsideTheTurnsOtherCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		progressed := make(chan struct{})
		reporter, err := agentloop.NewRawTool("report", "Reports.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
			return "reported", agentloop.ReportProgress(ctx, "half way")
		})
		require.NoError(t, err)
		subModel := agentloop.ModelFunc(func(ctx context.Context, _ *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				select {
				case <-progressed:
				case <-ctx.Done():
					yield(nil, ctx.Err())
					return
				}
				yield(agentloop.TextDelta{Text: "after the progress"}, nil)
			}
		})
		sub := &agentloop.Agent{Name: "sub", Model: subModel}
		parent := &agentloop.Agent{Name: "lead", Model: simtest.NewModel(
			turn(simtest.Call("ca", "sub", map[string]string{"task": "t"}), simtest.Call("cb", "report", nil)),
			turn(simtest.Text("done")),
		), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{}), reporter}}
		var items []agentloop.Item
		for it, err := range parent.Stream(context.Background(), user("x"), nil) {
			require.NoError(t, err)
			if _, ok := it.(agentloop.ToolProgress); ok {
				close(progressed)
			}
			items = append(items, it)
		}
		res := results(items)
		require.Len(t, res, 2)
		assert.Equal(t, "after the progress", res[0].Content)
	})
}

// A sub-agent that panics gives its call the error result of a tool that
// panicked; the calling run goes on.
func TestAgentTool_PanickingSubRunIsTheCallsErrorResult(t *testing.T) {
	boom := agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if yield(agentloop.TextDelta{Text: "about to fail"}, nil) {
				panic("boom")
			}
		}
	})
	sub := &agentloop.Agent{Name: "sub", Model: boom}
	parent := &agentloop.Agent{Name: "lead", Model: simtest.NewModel(
		turn(simtest.Call("c1", "sub", map[string]string{"task": "t"})),
		turn(simtest.Text("recovered")),
	), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{})}}
	items, err := collect(parent.Stream(context.Background(), user("x"), nil))
	require.NoError(t, err)
	res := results(items)
	require.Len(t, res, 1)
	var pe *agentloop.ToolPanicError
	require.ErrorAs(t, res[0].Err, &pe)
	assert.Equal(t, "boom", pe.Value)
	assert.Contains(t, string(pe.Stack), "TestAgentTool_PanickingSubRunIsTheCallsErrorResult", "the stack is the panic's")
	assert.Equal(t, "recovered", final(t, items).Text)
}

// A panic of the consumer's loop body on a sub-run's item reaches the
// consumer, and no goroutine of the run is left.
func TestAgentTool_ConsumersPanicOnANestedItemReachesTheConsumer(t *testing.T) {
	defer goleak.VerifyNone(t)
	sub := &agentloop.Agent{Name: "sub", Model: simtest.NewModel(turn(simtest.Text("one two")))}
	parent := &agentloop.Agent{Name: "lead", Model: simtest.NewModel(
		turn(simtest.Call("c1", "sub", map[string]string{"task": "t"})),
		turn(simtest.Text("x")),
	), Tools: []*agentloop.Tool{agentTool(t, sub, agentloop.AgentToolOptions{})}}
	got := func() (p any) {
		defer func() { p = recover() }()
		for it := range parent.Stream(context.Background(), user("x"), nil) {
			if n, ok := it.(*agentloop.Nested); ok {
				if _, ok := n.Item.(agentloop.TextDelta); ok {
					panic("consumer")
				}
			}
		}
		return nil
	}()
	assert.Equal(t, "consumer", got)
}

// design.md §3.10: a sub-run that starts once the calls before it have
// ended streams after their results (they are not held up by it). With
// ToolConcurrency 1 the sub-run starts after the first call's end, which
// the run may see before or after the sub-run's start: repeated.
func TestAgentTool_SubRunStartingAfterEarlierCallsStreamsAfterTheirResults(t *testing.T) {
	quick, err := agentloop.NewRawTool("quick", "Answers.", nil, func(context.Context, json.RawMessage) (string, error) { return "fast", nil })
	require.NoError(t, err)
	for range 20 {
		sub := &agentloop.Agent{Name: "sub", Model: simtest.NewModel(turn(simtest.Text("hi")))}
		parent := &agentloop.Agent{Name: "lead", ToolConcurrency: 1, Model: simtest.NewModel(
			turn(simtest.Call("cq", "quick", nil), simtest.Call("cs", "sub", map[string]string{"task": "t"})),
			turn(simtest.Text("done")),
		), Tools: []*agentloop.Tool{quick, agentTool(t, sub, agentloop.AgentToolOptions{})}}
		items, err := collect(parent.Stream(context.Background(), user("x"), nil))
		require.NoError(t, err)
		want := []string{
			"TurnStart(1)", "Call(cq quick)", "Call(cs sub)", "TurnEnd(1)",
			"Result(cq fast)",
			"sub@1[cs]:TurnStart(1)", "sub@1[cs]:Text(hi)", "sub@1[cs]:TurnEnd(1)", "sub@1[cs]:Final(hi)",
			"Result(cs hi)",
			"TurnStart(2)", "Text(done)", "TurnEnd(2)", "Final(done)",
		}
		if d := cmp.Diff(want, describeAll(items)); d != "" {
			t.Fatalf("items (-want +got):\n%s", d)
		}
	}
}
