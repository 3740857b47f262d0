package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

// The demo script hands a research request to the researcher sub-agent,
// whose save_note call pauses the chat for the user's approval; approved,
// the researcher reports and the answer sums its report up.
func TestDemo_TheResearcherLooksUpFilesAfterApprovalAndReports(t *testing.T) {
	tools, err := backendTools()
	require.NoError(t, err)
	research, err := researcherTool(nil, tools[0], pacing{})
	require.NoError(t, err)
	agent := &agentloop.Agent{Model: demoModel(pacing{}), Tools: append(tools, research)}

	var pending agentloop.Pending
	var agents []string
	for it, err := range agent.Stream(t.Context(), agentloop.History{agentloop.UserMessage("Research the weather in Oslo")}, nil) {
		require.NoError(t, err)
		switch it := it.(type) {
		case *agentloop.Nested:
			agents = append(agents, it.Agent)
		case agentloop.Pending:
			pending = it
		}
	}
	require.Len(t, pending.Approvals, 1)
	call := pending.Approvals[0]
	assert.Equal(t, "save_note", call.Name)
	assert.Contains(t, call.ID, "/", "the call is the researcher's")
	assert.Contains(t, agents, "researcher")

	h, err := pending.History.AppendApprovals(agentloop.Approval{CallID: call.ID, ID: "approval_" + call.ID, Approved: true})
	require.NoError(t, err)
	text, err := agentloop.Text(agent.Stream(t.Context(), h, nil))
	require.NoError(t, err)
	assert.Contains(t, text, "**Researcher:** Oslo will be")
	assert.True(t, strings.Contains(text, "The finding is in the notes."), text)
}
