package temporalrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/temporalrun"
)

// counter counts the model and tool calls of a test's agents.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[what]++
}

func (c *counter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// assistants counts the assistant messages of a request: the models below
// play their scripts by the conversation.
func assistants(req *agentloop.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == agentloop.RoleAssistant {
			n++
		}
	}
	return n
}

// nestedAgent is a lead agent whose researcher sub-agent (an AgentTool)
// looks a price up, then pays it with a tool that needs approval, then
// reports back; every model and tool call is counted, and every model
// call uses 10 input and 1 output tokens.
func nestedAgent(t *testing.T, c *counter) *agentloop.Agent {
	t.Helper()
	usage := agentloop.Usage{Input: 10, Output: 1}
	tool := func(name string) *agentloop.Tool {
		tl, err := agentloop.NewRawTool(name, "Counts.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
			c.add("tool " + name)
			return name + " done", nil
		})
		require.NoError(t, err)
		return tl
	}
	pay := tool("pay")
	pay.NeedsApproval = true
	sub := &agentloop.Agent{Name: "researcher", Tools: []*agentloop.Tool{tool("lookup"), pay},
		Model: agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				n := assistants(req)
				c.add(fmt.Sprintf("researcher model %d", n))
				switch n {
				case 0:
					yield(agentloop.ToolCall{Name: "lookup", Args: json.RawMessage(`{}`)}, nil)
				case 1:
					yield(agentloop.ToolCall{Name: "pay", Args: json.RawMessage(`{}`)}, nil)
				default:
					yield(agentloop.TextDelta{Text: "paid 5"}, nil)
				}
				yield(usage, nil)
			}
		})}
	research, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{research},
		Model: agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				n := assistants(req)
				c.add(fmt.Sprintf("lead model %d", n))
				if n == 0 {
					yield(agentloop.ToolCall{Name: "researcher", Args: json.RawMessage(`{"task":"pay 5"}`)}, nil)
				} else {
					yield(agentloop.TextDelta{Text: "The researcher paid."}, nil)
				}
				yield(usage, nil)
			}
		})}
}

// design.md §6.4 under Temporal: a sub-agent's approval pauses the
// workflow (the tool activity returns the sub-run's pause with the call's
// result), and the approval, in a new workflow, resumes the sub-run where
// it stopped.
func TestNested_ASubAgentsApprovalPausesTheWorkflowAndResumesTheSubRun(t *testing.T) {
	var c counter
	agent := nestedAgent(t, &c)

	_, last, err := execute(t, agent, temporalrun.Options{}, agentloop.History{agentloop.UserMessage("pay 5")})
	require.NoError(t, err)
	p, ok := last.(agentloop.Pending)
	require.Truef(t, ok, "last item %T", last)
	require.Len(t, p.Approvals, 1)
	callID := p.History[1].Parts[0].ToolCall.ID
	assert.Equal(t, callID+"/call_1_0", p.Approvals[0].ID, "the sub-run's call, under the lead's call")
	assert.Equal(t, "pay", p.Approvals[0].Name)
	tm := p.History[len(p.History)-1]
	require.Equal(t, agentloop.PartSubRun, tm.Parts[0].Type, "the history holds the sub-run's state")
	assert.Equal(t, "researcher", tm.Parts[0].SubRun.Agent)
	assert.Equal(t, agentloop.Usage{Input: 30, Output: 3}, p.Usage, "the lead's call and the researcher's two, which ran in the tool activity")
	assert.Equal(t, map[string]agentloop.Usage{"lead": {Input: 10, Output: 1}, "researcher": {Input: 20, Output: 2}}, p.AgentUsage)

	h, err := p.History.AppendApprovals(agentloop.Approval{CallID: p.Approvals[0].ID, Approved: true})
	require.NoError(t, err)
	_, last, err = execute(t, agent, temporalrun.Options{}, h)
	require.NoError(t, err)
	f, ok := last.(agentloop.Final)
	require.Truef(t, ok, "last item %T", last)
	assert.Equal(t, "The researcher paid.", f.Text)
	require.NoError(t, f.History.Validate())
	assert.Equal(t, "paid 5", f.History[len(f.History)-2].Parts[0].ToolResult.Content, "the sub-run's answer is the call's result")
	assert.Equal(t, map[string]int{
		"lead model 0": 1, "researcher model 0": 1, "tool lookup": 1, "researcher model 1": 1, // before the pause: once
		"tool pay": 1, "researcher model 2": 1, "lead model 1": 1,
	}, c.counts())
	assert.Equal(t, agentloop.Usage{Input: 20, Output: 2}, f.Usage, "the resumed run's own calls: the researcher's last and the lead's")
	assert.Equal(t, map[string]agentloop.Usage{"lead": {Input: 10, Output: 1}, "researcher": {Input: 10, Output: 1}}, f.AgentUsage)
}

// A sub-agent that answers at once: its usage, counted in the tool
// activity, adds up to the workflow's totals as it does in process.
func TestNested_ASubAgentsUsageAddsUpToTheRunsTotals(t *testing.T) {
	usage := agentloop.Usage{Input: 7, Output: 2}
	sub := &agentloop.Agent{Name: "helper", Model: agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if yield(agentloop.TextDelta{Text: "helped"}, nil) {
				yield(usage, nil)
			}
		}
	})}
	helper, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	lead := &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{helper},
		Model: agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				if assistants(req) == 0 {
					yield(agentloop.ToolCall{Name: "helper", Args: json.RawMessage(`{"task":"help"}`)}, nil)
				} else {
					yield(agentloop.TextDelta{Text: "done"}, nil)
				}
				yield(agentloop.Usage{Input: 1, Output: 1}, nil)
			}
		})}
	h := agentloop.History{agentloop.UserMessage("help")}
	want := inProcess(t, lead, h)
	_, last, err := execute(t, lead, temporalrun.Options{}, h)
	require.NoError(t, err)
	f, ok := last.(agentloop.Final)
	require.Truef(t, ok, "last item %T", last)
	inproc := want[len(want)-1].(agentloop.Final)
	assert.Equal(t, agentloop.Usage{Input: 9, Output: 4}, f.Usage)
	assert.Equal(t, inproc.Usage, f.Usage)
	assert.Equal(t, inproc.AgentUsage, f.AgentUsage)
}
