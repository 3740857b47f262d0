package aisdk_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/simtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsResearcher is a lead agent whose "researcher" sub-agent calls
// get_weather (counted in runs; with approve, only once approved) and
// reports back.
func jsResearcher(t *testing.T, approve bool, runs *atomic.Int32) *agentloop.Agent {
	t.Helper()
	weather, err := agentloop.NewTool("get_weather", "Forecast for a city.", func(ctx context.Context, a weatherIn) (string, error) {
		runs.Add(1)
		return "sunny in " + a.City, nil
	})
	require.NoError(t, err)
	weather.NeedsApproval = approve
	researcher := &agentloop.Agent{Name: "researcher", Tools: []*agentloop.Tool{weather}, Model: simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Checking."), simtest.Call("w1", "get_weather", map[string]string{"city": "Oslo"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Sunny in Oslo.")}},
	)}
	rt, err := agentloop.AgentTool(researcher, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{rt}, Model: simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("l1", "researcher", map[string]string{"task": "Weather in Oslo?"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("It is sunny.")}},
	)}
}

// The real client keeps a sub-agent's data part and shows it while the
// parent call runs (the call's part still input-available), and keeps it
// once the call has its result.
func TestJSClient_SubagentWorkIsShownWhileItsCallRuns(t *testing.T) {
	node := requireNodeHarness(t)
	var runs atomic.Int32
	h := &aisdk.Handler{Agent: jsResearcher(t, false, &runs), NewMessageID: func() string { return "msg-js-1" }, Logger: slog.New(slog.DiscardHandler)}
	res := runJSClient(t, node, h, "subagent")
	assertChat(t, res, []string{"step-start", `tool-researcher(output-available) -> "Sunny in Oslo."`, "data-subagent", "step-start", "text(done) It is sunny."})
	assert.Contains(t, res.Views, "tool-researcher input-available null | data-subagent l1 researcher running [text:Checking., get_weather(input-available)]",
		"the sub-agent's call was shown while the parent call ran")
	assert.Equal(t, "tool-researcher output-available \"Sunny in Oslo.\" | data-subagent l1 researcher done [text:Checking., get_weather(output-available), text:Sunny in Oslo.]", res.Views[len(res.Views)-1])
	assert.Len(t, res.Requests, 1, "a data part never makes the client re-send")
}

// A sub-agent's call that needs approval reaches the real client as a tool
// part awaiting approval; approved in the page, the sub-run resumes from
// its signed state and the parent answers.
func TestJSClient_SubagentApprovalIsApprovedLikeAnyOther(t *testing.T) {
	node := requireNodeHarness(t)
	var runs atomic.Int32
	h := &aisdk.Handler{Agent: jsResearcher(t, true, &runs), NewMessageID: func() string { return "msg-js-1" }, Logger: slog.New(slog.DiscardHandler)}
	res := runJSClient(t, node, h, "subagent-approval")
	asst := assertChat(t, res, []string{
		"step-start", `tool-researcher(output-available) -> "Sunny in Oslo."`, "data-subagent", "data-subrun",
		"step-start", `tool-get_weather(output-available) -> "sunny in Oslo"`,
		"step-start", "text(done) It is sunny.",
	})
	require.Len(t, asst.Parts, 8)
	assert.Equal(t, "l1/w1", asst.Parts[5]["toolCallId"])
	assert.Equal(t, int32(1), runs.Load(), "the approved call ran once")
	require.Len(t, res.Requests, 2)
	last := res.Views[len(res.Views)-1]
	assert.Contains(t, last, "data-subagent l1 researcher done [text:Checking., get_weather(output-available), text:Sunny in Oslo.]",
		"the resumed sub-run's view goes on from its state")
	assert.Contains(t, res.Views, `tool-researcher input-available null | data-subagent l1 researcher paused [text:Checking., get_weather(approval-requested)] | tool-get_weather approval-requested null`,
		"the page showed the sub-agent's call awaiting approval")
}

// jsLocator is a lead agent whose "locator" sub-agent calls the client
// tool getLocation (a tool without Func, run by the page) and reports back;
// its second turn expects the page's answer.
func jsLocator(t *testing.T) *agentloop.Agent {
	t.Helper()
	loc, err := agentloop.NewClientTool("getLocation", "The user's location.", locationSchema)
	require.NoError(t, err)
	locator := &agentloop.Agent{Name: "locator", Tools: []*agentloop.Tool{loc}, Model: simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Asking the page."), simtest.Call("g1", "getLocation", map[string]string{"precision": "city"})}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"g1": "Berlin"}}, Reply: []simtest.Step{simtest.Text("You are in Berlin.")}},
	)}
	lt, err := agentloop.AgentTool(locator, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{lt}, Model: simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("l1", "locator", map[string]string{"task": "Where is the user?"})}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"l1": "You are in Berlin."}}, Reply: []simtest.Step{simtest.Text("You are in Berlin, it seems.")}},
	)}
}

// A sub-agent's client tool pauses the whole run and reaches the real
// client as a call of the page's tool; the client's answer (addToolOutput)
// resumes the sub-run where it stopped, and the lead answers with the
// sub-agent's answer. In the stateless mode the sub-run's state comes back
// signed; in the stored mode it is the stored chat's.
func TestJSClient_SubagentClientToolIsRunByThePage(t *testing.T) {
	node := requireNodeHarness(t)
	for _, mode := range []string{"stateless", "stored"} {
		t.Run(mode, func(t *testing.T) {
			var h http.Handler = &aisdk.Handler{Agent: jsLocator(t), NewMessageID: func() string { return "msg-js-1" }, Logger: slog.New(slog.DiscardHandler)}
			if mode == "stored" {
				cs := &aisdk.ChatServer{Agent: jsLocator(t), Store: newStore(t), NewMessageID: func() string { return "msg-js-1" }, Logger: slog.New(slog.DiscardHandler)}
				h = cs.Routes("/api")
			}
			res := runJSClient(t, node, h, "subagent-client-tool")
			// The scripts' Expects check that the sub-run was given the
			// page's answer and the lead the sub-agent's.
			want := []string{"step-start", `tool-locator(output-available) -> "You are in Berlin."`, "data-subagent"}
			if mode == "stateless" {
				want = append(want, "data-subrun") // the paused sub-run's signed state
			}
			want = append(want,
				"step-start", `tool-getLocation(output-available) -> {"city":"Berlin","precision":"city"}`,
				"step-start", "text(done) You are in Berlin, it seems.")
			asst := assertChat(t, res, want)
			assert.Equal(t, "l1/g1", asst.Parts[len(want)-3]["toolCallId"], "the page answered the sub-agent's call")
			assert.Contains(t, res.Views, `tool-locator input-available null | data-subagent l1 locator paused [text:Asking the page., getLocation(input-available)] | tool-getLocation input-available null`,
				"the whole run paused with the sub-agent's call handed to the page")
			assert.Equal(t, `tool-locator output-available "You are in Berlin." | data-subagent l1 locator done [text:Asking the page., getLocation(output-available), text:You are in Berlin.] | tool-getLocation output-available {"city":"Berlin","precision":"city"}`,
				res.Views[len(res.Views)-1], "the resumed sub-run's view goes on from its state")
			assertContinuation(t, res.requests(t), asst.ID, "output-available")
		})
	}
}
