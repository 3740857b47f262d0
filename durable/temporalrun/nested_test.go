package temporalrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// leadWithHelper is a lead agent that calls its sub-agent sub ("helper",
// an AgentTool) once, then answers "done"; each lead call uses 1 input and
// 1 output token.
func leadWithHelper(t testing.TB, sub *agentloop.Agent) *agentloop.Agent {
	t.Helper()
	helper, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{helper},
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
}

// A sub-agent that answers at once: its usage, counted in the tool
// activity, adds up to the workflow's totals as it does in process.
func TestNested_ASubAgentsUsageAddsUpToTheRunsTotals(t *testing.T) {
	usage := agentloop.Usage{Input: 7, Output: 2}
	lead := leadWithHelper(t, &agentloop.Agent{Name: "helper", Model: agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if yield(agentloop.TextDelta{Text: "helped"}, nil) {
				yield(usage, nil)
			}
		}
	})})
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

// leadWithLookingHelper is leadWithHelper whose helper streams its text,
// calls a lookup tool, and answers "it is 5".
func leadWithLookingHelper(t testing.TB) *agentloop.Agent {
	lookup, err := agentloop.NewRawTool("lookup", "Looks up.", nil, func(context.Context, json.RawMessage) (string, error) { return "5", nil })
	require.NoError(t, err)
	return leadWithHelper(t, &agentloop.Agent{Name: "helper", Tools: []*agentloop.Tool{lookup},
		Model: agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				if assistants(req) == 0 {
					yield(agentloop.TextDelta{Text: "let me "}, nil)
					yield(agentloop.TextDelta{Text: "look"}, nil)
					yield(agentloop.ToolCall{Name: "lookup", Args: json.RawMessage(`{}`)}, nil)
				} else {
					yield(agentloop.TextDelta{Text: "it is "}, nil)
					yield(agentloop.TextDelta{Text: "5"}, nil)
				}
				yield(agentloop.Usage{Input: 3, Output: 1}, nil)
			}
		})})
}

// design.md §3.10 under Temporal: the sub-run runs in the tool activity,
// and its items reach OnItem from there as they happen, between the
// call's TurnEnd and its ToolResultReady: the run's consumers see what
// they see in process (the lead's replies in whole parts, the sub-run's
// live deltas).
func TestNested_TheSubRunsItemsReachOnItemBetweenTheCallsTurnEndAndItsResult(t *testing.T) {
	lead := leadWithLookingHelper(t)
	h := agentloop.History{agentloop.UserMessage("help")}

	want := inProcess(t, lead, h)
	got, last, err := execute(t, lead, temporalrun.Options{}, h)
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(wholeParts(want), got, cmpItems), "items")
	require.Empty(t, cmp.Diff(want[len(want)-1], last, cmpItems), "the workflow's result")
	var nested int
	for _, it := range got {
		if _, ok := it.(*agentloop.Nested); ok {
			nested++
		}
	}
	assert.Equal(t, 11, nested, "the sub-run's items: 2 turns (start, 2 deltas, end), a call and its result, its final")
}

// A retried tool activity runs its sub-run again: the first attempt's
// items went out, then the retry's come from the sub-run's first TurnStart
// again, all before the call's result; the usage counts the attempt that
// made the result.
func TestNested_ARetriedActivitysSubRunStreamsAgainFromItsFirstTurn(t *testing.T) {
	var calls atomic.Int32
	lead := leadWithHelper(t, &agentloop.Agent{Name: "helper", Model: agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if calls.Add(1) == 1 {
				if yield(agentloop.TextDelta{Text: "first try"}, nil) {
					yield(nil, fmt.Errorf("model overloaded: %w", temporalrun.ErrRetry))
				}
				return
			}
			if yield(agentloop.TextDelta{Text: "second try"}, nil) {
				yield(agentloop.Usage{Input: 7, Output: 2}, nil)
			}
		}
	})})
	got, last, err := execute(t, lead, temporalrun.Options{}, agentloop.History{agentloop.UserMessage("help")})
	require.NoError(t, err)
	require.Equal(t, int32(2), calls.Load())
	var seq []string
	for _, it := range got {
		switch v := it.(type) {
		case *agentloop.Nested:
			switch n := v.Item.(type) {
			case agentloop.TurnStart:
				seq = append(seq, fmt.Sprintf("nested start %d", n.Turn))
			case agentloop.TextDelta:
				seq = append(seq, "nested "+n.Text)
			}
		case agentloop.TurnEnd:
			seq = append(seq, fmt.Sprintf("end %d", v.Turn))
		case agentloop.ToolResultReady:
			seq = append(seq, "result "+v.Result.Content)
		}
	}
	assert.Equal(t, []string{"end 1", "nested start 1", "nested first try", "nested start 1", "nested second try", "result second try", "end 2"}, seq)
	f, ok := last.(agentloop.Final)
	require.Truef(t, ok, "last item %T", last)
	assert.Equal(t, map[string]agentloop.Usage{"lead": {Input: 2, Output: 2}, "helper": {Input: 7, Output: 2}}, f.AgentUsage)
}
