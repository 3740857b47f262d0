package aisdk

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// researchAgent is a lead agent with a "researcher" sub-agent that calls
// get_weather and reports back; approve makes get_weather need approval.
func researchAgent(t testing.TB, approve bool) (*agentloop.Agent, *simtest.Model, *simtest.Model) {
	t.Helper()
	weather, err := agentloop.NewTool("get_weather", "Forecast for a city.", func(ctx context.Context, a struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + a.City, nil
	})
	require.NoError(t, err)
	weather.NeedsApproval = approve
	sub := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Checking."), simtest.Call("w1", "get_weather", map[string]string{"city": "Oslo"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Sunny in Oslo.")}},
	)
	researcher := &agentloop.Agent{Name: "researcher", Model: sub, Tools: []*agentloop.Tool{weather}}
	rt, err := agentloop.AgentTool(researcher, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	lead := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("l1", "researcher", map[string]string{"task": "Weather in Oslo?"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("It is sunny.")}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("You are welcome.")}},
	)
	return &agentloop.Agent{Name: "lead", Model: lead, Tools: []*agentloop.Tool{rt}}, lead, sub
}

// mapRun maps a whole run of agent on h.
func mapRun(t testing.TB, m *Mapper, agent *agentloop.Agent, h agentloop.History) []Chunk {
	t.Helper()
	var out []Chunk
	for it, err := range agent.Stream(context.Background(), h, nil) {
		out = m.Map(out, it, err)
	}
	return m.End(out)
}

func TestMapper_SubagentWorkIsADataPartPerSubRunAsItHappens(t *testing.T) {
	agent, _, _ := researchAgent(t, false)
	got := wire(t, mapRun(t, NewMapper("m"), agent, agentloop.History{agentloop.UserMessage("Weather?")}))
	// A sub-run's text is held until its next item (or a Flush).
	want := []string{
		`{"type":"start","messageId":"m"}`,
		`{"type":"start-step"}`,
		`{"type":"tool-input-start","toolCallId":"l1","toolName":"researcher"}`,
		`{"type":"tool-input-delta","toolCallId":"l1","inputTextDelta":"{\"task\":\""}`,
		`{"type":"tool-input-delta","toolCallId":"l1","inputTextDelta":"Weather i"}`,
		`{"type":"tool-input-delta","toolCallId":"l1","inputTextDelta":"n Oslo?\"}"}`,
		`{"type":"tool-input-available","toolCallId":"l1","toolName":"researcher","input":{"task":"Weather in Oslo?"}}`,
		`{"type":"data-subagent","id":"l1","data":{"callId":"l1","path":["l1"],"agent":"researcher","depth":1,"state":"running","parts":[{"type":"text","text":"Checking."},{"type":"tool","toolCallId":"w1","toolName":"get_weather","input":{"city":"Oslo"},"state":"input-available"}]}}`,
		`{"type":"data-subagent","id":"l1","data":{"callId":"l1","path":["l1"],"agent":"researcher","depth":1,"state":"running","parts":[{"type":"text","text":"Checking."},{"type":"tool","toolCallId":"w1","toolName":"get_weather","input":{"city":"Oslo"},"state":"output-available","output":"sunny in Oslo"}]}}`,
		`{"type":"data-subagent","id":"l1","data":{"callId":"l1","path":["l1"],"agent":"researcher","depth":1,"state":"done","parts":[{"type":"text","text":"Checking."},{"type":"tool","toolCallId":"w1","toolName":"get_weather","input":{"city":"Oslo"},"state":"output-available","output":"sunny in Oslo"},{"type":"text","text":"Sunny in Oslo."}]}}`,
		`{"type":"tool-output-available","toolCallId":"l1","output":"Sunny in Oslo."}`,
		`{"type":"finish-step"}`,
		`{"type":"start-step"}`,
		`{"type":"text-start","id":"text-1"}`,
		`{"type":"text-delta","id":"text-1","delta":"It "}`,
		`{"type":"text-delta","id":"text-1","delta":"is "}`,
		`{"type":"text-delta","id":"text-1","delta":"sunny."}`,
		`{"type":"text-end","id":"text-1"}`,
		`{"type":"finish-step"}`,
		`{"type":"finish","finishReason":"stop"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestMapper_FlushSendsASubagentsHeldTextOncePerFlush(t *testing.T) {
	m := NewMapper("m")
	n := func(it agentloop.Item) *agentloop.Nested {
		return &agentloop.Nested{SubAgent: &agentloop.SubAgent{CallID: "l1", Agent: "researcher", Depth: 1, Path: []string{"l1"}}, Item: it}
	}
	var out []Chunk
	for _, d := range []string{"a", "b", "c"} {
		out = m.Map(out, n(agentloop.TextDelta{Text: d}), nil)
	}
	require.Len(t, out, 1, "only the start chunk before a flush")
	out = m.Flush(out[:0])
	require.Equal(t, []string{`{"type":"data-subagent","id":"l1","data":{"callId":"l1","path":["l1"],"agent":"researcher","depth":1,"state":"running","parts":[{"type":"text","text":"abc"}]}}`}, wire(t, out))
	require.Empty(t, m.Flush(nil), "a second flush has nothing new")
}

// A sub-run whose first turn starts again was run again by an engine (a
// retried Temporal activity): its part starts over instead of showing the
// failed attempt's work followed by the retry's.
func TestMapper_ASubRunWhoseFirstTurnStartsAgainStartsItsPartOver(t *testing.T) {
	m := NewMapper("m")
	sub := &agentloop.SubAgent{CallID: "l1", Agent: "researcher", Depth: 1, Path: []string{"l1"}}
	n := func(it agentloop.Item) *agentloop.Nested { return &agentloop.Nested{SubAgent: sub, Item: it} }
	var out []Chunk
	for _, it := range []agentloop.Item{
		agentloop.TurnStart{Turn: 1}, agentloop.TextDelta{Text: "first try"}, agentloop.TurnEnd{Turn: 1, Err: errors.New("overloaded")},
		agentloop.TurnStart{Turn: 1}, agentloop.TextDelta{Text: "second "}, agentloop.TextDelta{Text: "try"}, agentloop.TurnEnd{Turn: 1},
		agentloop.TurnStart{Turn: 2}, agentloop.Final{},
	} {
		out = m.Map(out, n(it), nil)
		if _, ok := it.(agentloop.TurnEnd); ok {
			out = m.Flush(out) // as a Handler or a stored run's sink does, in time
		}
	}
	require.Equal(t, []string{
		`{"type":"start","messageId":"m"}`,
		`{"type":"data-subagent","id":"l1","data":{"callId":"l1","path":["l1"],"agent":"researcher","depth":1,"state":"running","parts":[{"type":"text","text":"first try"}]}}`,
		`{"type":"data-subagent","id":"l1","data":{"callId":"l1","path":["l1"],"agent":"researcher","depth":1,"state":"running","parts":[]}}`,
		`{"type":"data-subagent","id":"l1","data":{"callId":"l1","path":["l1"],"agent":"researcher","depth":1,"state":"running","parts":[{"type":"text","text":"second try"}]}}`,
		`{"type":"data-subagent","id":"l1","data":{"callId":"l1","path":["l1"],"agent":"researcher","depth":1,"state":"done","parts":[{"type":"text","text":"second try"}]}}`,
	}, wire(t, out))
}

func TestMapper_AgentsWithinAgentsGetAPartEachTaggedWithPathAndDepth(t *testing.T) {
	m := NewMapper("m")
	out := m.Map(nil, &agentloop.Nested{SubAgent: &agentloop.SubAgent{CallID: "l1", Agent: "fact-checker", Depth: 2, Path: []string{"l1", "s1"}}, Item: agentloop.Final{}}, nil)
	require.Equal(t, []string{
		`{"type":"start","messageId":"m"}`,
		`{"type":"data-subagent","id":"l1/s1","data":{"callId":"l1","path":["l1","s1"],"agent":"fact-checker","depth":2,"state":"done","parts":[]}}`,
	}, wire(t, out))
}

func TestMapper_HandoffsNameTheSpeakingAgentInMessageMetadata(t *testing.T) {
	m := NewMapper("m")
	var out []Chunk
	for _, it := range []agentloop.Item{
		agentloop.TurnStart{Turn: 1, Agent: "triage"},
		agentloop.TurnEnd{Turn: 1},
		agentloop.TurnStart{Turn: 2, Agent: "triage"},
		agentloop.TurnEnd{Turn: 2},
		agentloop.TurnStart{Turn: 3, Agent: "billing"},
	} {
		out = m.Map(out, it, nil)
	}
	var md []string
	for _, s := range wire(t, out) {
		if strings.Contains(s, "message-metadata") {
			md = append(md, s)
		}
	}
	require.Equal(t, []string{
		`{"type":"message-metadata","messageMetadata":{"agent":"triage"}}`,
		`{"type":"message-metadata","messageMetadata":{"agent":"billing"}}`,
	}, md)
}

func TestFromHistory_NamesTheLastAgentOfAMessageInItsMetadata(t *testing.T) {
	say := func(agent, text string) agentloop.Message {
		return agentloop.Message{Role: agentloop.RoleAssistant, Agent: agent, Parts: []agentloop.Part{agentloop.TextPart(text)}}
	}
	a1, a2 := say("triage", "Let me transfer you."), say("billing", "Billing here.")
	msgs := FromHistory(agentloop.History{agentloop.UserMessage("refund?"), a1, a2})
	require.Len(t, msgs, 2)
	require.JSONEq(t, `{"agent":"billing"}`, string(msgs[1].Metadata))
	require.Empty(t, FromHistory(agentloop.History{agentloop.UserMessage("hi"), say("", "hello")})[1].Metadata, "runs without handoffs have no metadata")
}

// approveNested answers the sub-agent's call awaiting approval in the last
// message as addToolApprovalResponse does, and returns its part.
func approveNested(t *testing.T, ch *chat, id string) *UIPart {
	t.Helper()
	for i := range ch.last().Parts {
		p := &ch.last().Parts[i]
		if p.ToolCallID == id {
			require.Equal(t, StateApprovalRequested, p.State)
			require.Equal(t, "approval_"+id, p.Approval.ID)
			yes := true
			p.State, p.Approval.Approved = StateApprovalResponded, &yes
			return p
		}
	}
	t.Fatalf("no part for call %q in %+v", id, ch.last().Parts)
	return nil
}

// partOf returns the part of the last message with type typ and id.
func partOf(ch *chat, typ, id string) *UIPart {
	for i := range ch.last().Parts {
		if p := &ch.last().Parts[i]; p.Type == typ && p.ID == id {
			return p
		}
	}
	return nil
}

func TestHandler_ASubagentsApprovalResumesTheSubRunFromItsSignedState(t *testing.T) {
	agent, lead, sub := researchAgent(t, true)
	h := &Handler{Agent: agent, NewMessageID: func() string { return "msg-new" }, Logger: discardLogger}
	ch := &chat{t: t, url: newServer(t, h).URL, id: "chat-sub"}
	ch.say("u1", "Weather?")
	client, _, raw := ch.post("")
	require.Equal(t, FinishReasonToolCalls, client.finish, raw)
	state := partOf(ch, "data-subrun", "l1")
	require.NotNil(t, state, "the paused sub-run's state travels in the message")
	approveNested(t, ch, "l1/w1")

	client, code, raw := ch.post(ch.last().ID)
	require.Equal(t, 200, code, raw)
	require.Equal(t, FinishReasonStop, client.finish, raw)
	require.Equal(t, 2, sub.Calls(), "the sub-run went on from its state: one model call before, one after")
	require.Equal(t, 2, lead.Calls())
	parent := ch.last().Parts[1]
	require.Equal(t, "l1", parent.ToolCallID)
	require.Equal(t, StateOutputAvailable, parent.State)
	require.JSONEq(t, `"Sunny in Oslo."`, string(parent.Output))
	for _, p := range ch.last().Parts {
		if p.ToolCallID == "l1/w1" {
			require.Equal(t, StateOutputAvailable, p.State, "the approved call's part has its result")
		}
	}

	// The next message posts all of it back, signed: accepted.
	ch.say("u2", "Thanks")
	client, code, raw = ch.post("")
	require.Equal(t, 200, code, raw)
	require.Equal(t, FinishReasonStop, client.finish, raw)
	require.Equal(t, 3, lead.Calls())
	require.Equal(t, 2, sub.Calls(), "the finished sub-run is not run again")
}

func TestSecurity_AnAlteredOrForgedSubRunStateIsRefused(t *testing.T) {
	for name, alter := range map[string]func(*SubrunState){
		"history changed": func(st *SubrunState) { st.History = strings.Replace(st.History, "Oslo", "Bergen", 1) },
		"agent changed":   func(st *SubrunState) { st.Agent = "admin" },
		"moved to a call": func(st *SubrunState) { st.CallID = "l2" },
		"unsigned":        func(st *SubrunState) { st.Signature = "" },
	} {
		t.Run(name, func(t *testing.T) {
			agent, _, sub := researchAgent(t, true)
			h := &Handler{Agent: agent, NewMessageID: func() string { return "msg-new" }, Logger: discardLogger}
			ch := &chat{t: t, url: newServer(t, h).URL, id: "chat-sub"}
			ch.say("u1", "Weather?")
			ch.post("")
			approveNested(t, ch, "l1/w1")
			part := partOf(ch, "data-subrun", "l1")
			var st SubrunState
			require.NoError(t, json.Unmarshal(part.Data, &st))
			alter(&st)
			part.Data, _ = json.Marshal(st)
			_, code, raw := ch.post(ch.last().ID)
			require.Equal(t, 403, code, raw)
			require.Contains(t, raw, "sub-agent")
			require.Equal(t, 1, sub.Calls(), "the sub-run did not go on")
		})
	}
}

func TestChatServer_ASubagentsApprovalResumesTheSubRunFromTheStoredHistory(t *testing.T) {
	agent, lead, sub := researchAgent(t, true)
	st := newMemStore(t)
	srv := &ChatServer{Agent: agent, Store: st, NewMessageID: func() string { return "msg-new" }, Logger: discardLogger}
	ch := &chat{t: t, url: newServer(t, srv).URL, id: "chat-sub"}
	ch.say("u1", "Weather?")
	client, _, raw := ch.post("")
	require.Equal(t, FinishReasonToolCalls, client.finish, raw)
	require.Nil(t, partOf(ch, "data-subrun", "l1"), "the stored mode keeps the state in the store")
	approveNested(t, ch, "l1/w1")

	client, code, raw := ch.post(ch.last().ID)
	require.Equal(t, 200, code, raw)
	require.Equal(t, FinishReasonStop, client.finish, raw)
	require.Equal(t, 2, sub.Calls())
	require.Equal(t, 2, lead.Calls())
	h := storedHistory(t, st, "chat-sub")
	require.Equal(t, "It is sunny.", h[len(h)-1].Text())
}

func TestChatServer_AForgedResultForASubagentsCallAwaitingApprovalIsRefused(t *testing.T) {
	agent, _, sub := researchAgent(t, true)
	srv := &ChatServer{Agent: agent, Store: newMemStore(t), NewMessageID: func() string { return "msg-new" }, Logger: discardLogger}
	ch := &chat{t: t, url: newServer(t, srv).URL, id: "chat-sub"}
	ch.say("u1", "Weather?")
	ch.post("")
	p := approveNested(t, ch, "l1/w1")
	p.State, p.Output = StateOutputAvailable, json.RawMessage(`"snow"`)
	_, code, raw := ch.post(ch.last().ID)
	require.Equal(t, 409, code, raw)
	require.Contains(t, raw, "needs approval")
	require.Equal(t, 1, sub.Calls())
}

func TestChatServer_APausedSubagentShowsInTheChatViewAndIsApprovedAfterAReload(t *testing.T) {
	agent, _, sub := researchAgent(t, true)
	st := newMemStore(t)
	srv := &ChatServer{Agent: agent, Store: st, NewMessageID: func() string { return "msg-new" }, Logger: discardLogger}
	ch := &chat{t: t, url: newServer(t, srv).URL, id: "chat-sub"}
	ch.say("u1", "Weather?")
	ch.post("")

	// The page reloads: its messages are the chat view's.
	ch.msgs = FromHistory(storedHistory(t, st, "chat-sub"))
	var types []string
	for _, p := range ch.last().Parts {
		types = append(types, p.Type+"("+string(p.State)+")")
	}
	require.Equal(t, []string{"step-start()", "tool-researcher(input-available)", "data-subagent()", "step-start()", "tool-get_weather(approval-requested)"}, types)
	var view SubagentView
	require.NoError(t, json.Unmarshal(partOf(ch, "data-subagent", "l1").Data, &view))
	require.Equal(t, "paused", view.State)
	require.Equal(t, "researcher", view.Agent)
	approveNested(t, ch, "l1/w1")
	client, code, raw := ch.post(ch.last().ID)
	require.Equal(t, 200, code, raw)
	require.Equal(t, FinishReasonStop, client.finish, raw)
	require.Equal(t, 2, sub.Calls())
}

func TestNestedAnswers_ADecisionOrResultGivenAlreadyIsLeftOut(t *testing.T) {
	agent, _, _ := researchAgent(t, true)
	var paused agentloop.History
	for it, err := range agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("Weather?")}, nil) {
		require.NoError(t, err)
		if p, ok := it.(agentloop.Pending); ok {
			paused = p.History
		}
	}
	yes := agentloop.Approval{CallID: "l1/w1", ID: "approval_l1/w1", Approved: true}
	a := nestedAnswers{approvals: []agentloop.Approval{yes}}
	decided, err := a.apply(paused)
	require.NoError(t, err)
	require.Len(t, decided, len(paused)+1, "the decision is added")
	again, err := a.apply(decided)
	require.NoError(t, err)
	require.Len(t, again, len(decided), "the same decision posted again adds nothing")

	forged := nestedAnswers{results: []agentloop.ToolResult{{CallID: "l1/w1", Name: "get_weather", Content: "snow"}}}
	_, err = forged.apply(paused)
	require.ErrorContains(t, err, "needs approval")
	_, err = forged.apply(decided)
	require.ErrorContains(t, err, "needs approval", "an approved call's result is the server's to give")
}

// A sub-agent's client tool is handed to the client like any other; its
// output, posted back, resumes the sub-run (stateless mode).
func TestHandler_ASubagentsClientToolOutputResumesTheSubRun(t *testing.T) {
	locate, err := agentloop.NewClientTool("get_location", "The user's city.", nil)
	require.NoError(t, err)
	sub := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("c1", "get_location", map[string]any{})}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c1": `{"city":"Oslo"}`}}, Reply: []simtest.Step{simtest.Text("You are in Oslo.")}},
	)
	scout, err := agentloop.AgentTool(&agentloop.Agent{Name: "scout", Model: sub, Tools: []*agentloop.Tool{locate}}, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	lead := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("l1", "scout", map[string]string{"task": "Where is the user?"})}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"l1": "You are in Oslo."}}, Reply: []simtest.Step{simtest.Text("Oslo it is.")}},
	)
	h := &Handler{Agent: &agentloop.Agent{Model: lead, Tools: []*agentloop.Tool{scout}}, NewMessageID: func() string { return "msg-new" }, Logger: discardLogger}
	ch := &chat{t: t, url: newServer(t, h).URL, id: "chat-scout"}
	ch.say("u1", "Where am I?")
	client, _, raw := ch.post("")
	require.Equal(t, FinishReasonToolCalls, client.finish, raw)
	require.True(t, completeWithToolCalls(*ch.last()) == false, "the call waits for its output")
	var part *UIPart
	for i := range ch.last().Parts {
		if ch.last().Parts[i].ToolCallID == "l1/c1" {
			part = &ch.last().Parts[i]
		}
	}
	require.NotNil(t, part, "the sub-agent's client call is handed over")
	require.Equal(t, StateInputAvailable, part.State)
	part.State, part.Output = StateOutputAvailable, json.RawMessage(`{"city":"Oslo"}`)
	require.True(t, completeWithToolCalls(*ch.last()), "its output completes the last step, so the client re-sends")

	client, code, raw := ch.post(ch.last().ID)
	require.Equal(t, 200, code, raw)
	require.Equal(t, FinishReasonStop, client.finish, raw)
	require.Equal(t, 2, sub.Calls())
	require.Equal(t, 2, lead.Calls())
}
