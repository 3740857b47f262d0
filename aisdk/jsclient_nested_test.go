package aisdk_test

import (
	"context"
	"log/slog"
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
