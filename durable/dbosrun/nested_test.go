package dbosrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/dbosrun"
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
	out := map[string]int{}
	for k, v := range c.n {
		out[k] = v
	}
	return out
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
				n := replies(req)
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
				n := replies(req)
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

// design.md §6.4 under DBOS: a sub-agent's approval pauses the workflow
// with the sub-run's state in its history; the approval, in a new run
// after a restart, resumes the sub-run where it stopped.
func TestNested_ASubAgentsApprovalPausesTheRunAndResumesTheSubRunAfterARestart(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testNested(t, b) })
	}
}

func testNested(t *testing.T, b backend) {
	var c counter
	agent := nestedAgent(t, &c)
	ctx := context.Background()
	start := func() (dbos.Context, *dbosrun.Runner) {
		d, err := openDBOS(ctx, b.url, b.schema)
		require.NoError(t, err)
		r, err := dbosrun.New(d, agent, dbosrun.Options{})
		require.NoError(t, err)
		require.NoError(t, dbos.Launch(d))
		return d, r
	}
	first := dbosrun.Run{ID: "chat-n/1", ConversationID: "chat-n", History: agentloop.History{agentloop.UserMessage("pay 5")}}

	d, r := start()
	last, err := agentloop.Drain(r.Stream(ctx, first))
	require.NoError(t, err)
	p, ok := last.(agentloop.Pending)
	require.Truef(t, ok, "last item %T", last)
	require.Len(t, p.Approvals, 1)
	callID := p.History[1].Parts[0].ToolCall.ID
	assert.Equal(t, callID+"/"+"call_1_0", p.Approvals[0].ID, "the sub-run's call, under the lead's call")
	assert.Equal(t, "pay", p.Approvals[0].Name)
	tm := p.History[len(p.History)-1]
	require.Equal(t, agentloop.PartSubRun, tm.Parts[0].Type, "the history holds the sub-run's state")
	assert.Equal(t, "researcher", tm.Parts[0].SubRun.Agent)
	assert.Equal(t, agentloop.Usage{Input: 30, Output: 3}, p.Usage, "the lead's call and the researcher's two")
	assert.Equal(t, map[string]agentloop.Usage{"lead": {Input: 10, Output: 1}, "researcher": {Input: 20, Output: 2}}, p.AgentUsage)

	// A replay of the paused run (a fork from after its last step, as a
	// recovery replays it) pauses again from the recorded steps: the
	// sub-agent's step replays as its pause, and nothing runs again.
	steps, err := dbos.GetWorkflowSteps(d, first.ID)
	require.NoError(t, err)
	before := c.counts()
	_, err = dbos.ForkWorkflow[any](d, dbos.ForkWorkflowInput{OriginalWorkflowID: first.ID, ForkedWorkflowID: first.ID + "-replay", StartStep: uint(len(steps))})
	require.NoError(t, err)
	last, err = agentloop.Drain(r.Stream(ctx, dbosrun.Run{ID: first.ID + "-replay"}))
	require.NoError(t, err)
	replayed, ok := last.(agentloop.Pending)
	require.Truef(t, ok, "the replayed run ends with %T", last)
	assert.Equal(t, p.Approvals, replayed.Approvals)
	assert.Equal(t, before, c.counts(), "a replay makes no call")
	require.NoError(t, dbos.Shutdown(d, 10*time.Second))

	// Another process, later: the paused run's recorded outcome is the same.
	d, r = start()
	t.Cleanup(func() { _ = dbos.Shutdown(d, 10*time.Second) })
	last, err = agentloop.Drain(r.Stream(ctx, first))
	require.NoError(t, err)
	p, ok = last.(agentloop.Pending)
	require.Truef(t, ok, "recorded outcome %T", last)
	require.Len(t, p.Approvals, 1)
	h, err := p.History.AppendApprovals(agentloop.Approval{CallID: p.Approvals[0].ID, Approved: true})
	require.NoError(t, err)

	last, err = agentloop.Drain(r.Stream(ctx, dbosrun.Run{ID: "chat-n/2", ConversationID: "chat-n", History: h}))
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

// A sub-agent's client tool call pauses the workflow as the lead's
// Pending; its result, in a new run, resumes the sub-run with it.
func TestNested_ASubAgentsClientCallResumesTheSubRunWithItsResult(t *testing.T) {
	loc, err := agentloop.NewClientTool("get_location", "Where the user is.", nil)
	require.NoError(t, err)
	var c counter
	sub := &agentloop.Agent{Name: "locator", Tools: []*agentloop.Tool{loc},
		Model: agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				n := replies(req)
				c.add(fmt.Sprintf("locator model %d", n))
				if n == 0 {
					yield(agentloop.ToolCall{Name: "get_location", Args: json.RawMessage(`{}`)}, nil)
					return
				}
				yield(agentloop.TextDelta{Text: "You are in " + req.Messages[len(req.Messages)-1].Parts[0].ToolResult.Content + "."}, nil)
			}
		})}
	locator, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	lead := &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{locator},
		Model: agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				n := replies(req)
				c.add(fmt.Sprintf("lead model %d", n))
				if n == 0 {
					yield(agentloop.ToolCall{Name: "locator", Args: json.RawMessage(`{"task":"where?"}`)}, nil)
					return
				}
				yield(agentloop.TextDelta{Text: "Noted: " + req.Messages[len(req.Messages)-1].Parts[0].ToolResult.Content}, nil)
			}
		})}
	ctx := context.Background()
	d, err := openDBOS(ctx, "sqlite:"+filepath.Join(t.TempDir(), "dbos.db"), "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = dbos.Shutdown(d, 10*time.Second) })
	r, err := dbosrun.New(d, lead, dbosrun.Options{})
	require.NoError(t, err)
	require.NoError(t, dbos.Launch(d))

	last, err := agentloop.Drain(r.Stream(ctx, dbosrun.Run{ID: "chat-l/1", ConversationID: "chat-l", History: agentloop.History{agentloop.UserMessage("where am I")}}))
	require.NoError(t, err)
	p, ok := last.(agentloop.Pending)
	require.Truef(t, ok, "last item %T", last)
	require.Len(t, p.ClientCalls, 1)
	assert.Equal(t, "get_location", p.ClientCalls[0].Name)
	h, err := p.History.AppendResults(agentloop.ToolResult{CallID: p.ClientCalls[0].ID, Content: "Berlin"})
	require.NoError(t, err)

	last, err = agentloop.Drain(r.Stream(ctx, dbosrun.Run{ID: "chat-l/2", ConversationID: "chat-l", History: h}))
	require.NoError(t, err)
	f, ok := last.(agentloop.Final)
	require.Truef(t, ok, "last item %T", last)
	assert.Equal(t, "Noted: You are in Berlin.", f.Text)
	assert.Equal(t, map[string]int{"lead model 0": 1, "locator model 0": 1, "locator model 1": 1, "lead model 1": 1}, c.counts())
}

// helperLead is a lead agent that calls its helper sub-agent (an
// AgentTool) once, then answers; the lead's calls use 1 input and 1 output
// token each, the helper's one call 7 and 2.
func helperLead(t *testing.T, c *counter) *agentloop.Agent {
	t.Helper()
	sub := &agentloop.Agent{Name: "helper", Model: agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			c.add("helper model")
			if yield(agentloop.TextDelta{Text: "helped"}, nil) {
				yield(agentloop.Usage{Input: 7, Output: 2}, nil)
			}
		}
	})}
	helper, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	require.NoError(t, err)
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{helper},
		Model: agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				n := replies(req)
				c.add(fmt.Sprintf("lead model %d", n))
				if n == 0 {
					yield(agentloop.ToolCall{Name: "helper", Args: json.RawMessage(`{"task":"help"}`)}, nil)
				} else {
					yield(agentloop.TextDelta{Text: "done"}, nil)
				}
				yield(agentloop.Usage{Input: 1, Output: 1}, nil)
			}
		})}
}

// design.md §3.10 under DBOS: a run replayed past a completed agent-tool
// step, as a recovery replays it (here a fork from the step after it), does
// not see the sub-run's items again, yet counts its usage: the step
// recorded it. Final.Usage and AgentUsage are those of the run that never
// stopped.
func TestNested_ARunReplayedPastASubAgentsStepCountsItsUsage(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			var c counter
			ctx := context.Background()
			d, err := openDBOS(ctx, b.url, b.schema)
			require.NoError(t, err)
			t.Cleanup(func() { _ = dbos.Shutdown(d, 10*time.Second) })
			r, err := dbosrun.New(d, helperLead(t, &c), dbosrun.Options{})
			require.NoError(t, err)
			require.NoError(t, dbos.Launch(d))
			run := dbosrun.Run{ID: "chat-u/1", ConversationID: "chat-u", History: agentloop.History{agentloop.UserMessage("help")}}
			last, err := agentloop.Drain(r.Stream(ctx, run))
			require.NoError(t, err)
			live, ok := last.(agentloop.Final)
			require.Truef(t, ok, "last item %T", last)
			assert.Equal(t, agentloop.Usage{Input: 9, Output: 4}, live.Usage)
			assert.Equal(t, map[string]agentloop.Usage{"lead": {Input: 2, Output: 2}, "helper": {Input: 7, Output: 2}}, live.AgentUsage)

			steps, err := dbos.GetWorkflowSteps(d, run.ID)
			require.NoError(t, err)
			after := -1
			for _, s := range steps {
				if s.StepName == "agentloop.tool/helper" {
					after = s.StepID + 1
				}
			}
			require.Positive(t, after, "the agent tool's step: %+v", steps)
			_, err = dbos.ForkWorkflow[any](d, dbos.ForkWorkflowInput{OriginalWorkflowID: run.ID, ForkedWorkflowID: run.ID + "-replay", StartStep: uint(after)})
			require.NoError(t, err)
			var nested int
			last, err = agentloop.Drain(func(yield func(agentloop.Item, error) bool) {
				for it, err := range r.Stream(ctx, dbosrun.Run{ID: run.ID + "-replay"}) {
					if _, ok := it.(*agentloop.Nested); ok {
						nested++
					}
					if !yield(it, err) {
						return
					}
				}
			})
			require.NoError(t, err)
			replayed, ok := last.(agentloop.Final)
			require.Truef(t, ok, "last item %T", last)
			assert.Zero(t, nested, "the replayed step yields no sub-run items")
			assert.Equal(t, map[string]int{"lead model 0": 1, "helper model": 1, "lead model 1": 2}, c.counts(), "only the last model call runs again")
			assert.Equal(t, live.Usage, replayed.Usage)
			assert.Equal(t, live.AgentUsage, replayed.AgentUsage)
		})
	}
}

// helperMarkingAgent's lead calls its helper sub-agent (an AgentTool,
// which answers at once), then tool b, then answers "done"; every model
// and tool call leaves a mark. The lead's calls use 1 input and 1 output
// token each, the helper's 7 and 2. When blocked is not nil, b closes it
// and then blocks until its context is done.
func helperMarkingAgent(marksPath string, blocked chan struct{}) *agentloop.Agent {
	b, err := agentloop.NewRawTool("b", "Marks.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		mark(marksPath, "tool b")
		if blocked != nil {
			close(blocked)
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "b done", nil
	})
	if err != nil {
		panic(err)
	}
	sub := &agentloop.Agent{Name: "helper", Model: agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			mark(marksPath, "helper model")
			if yield(agentloop.TextDelta{Text: "helped"}, nil) {
				yield(agentloop.Usage{Input: 7, Output: 2}, nil)
			}
		}
	})}
	helper, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	if err != nil {
		panic(err)
	}
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{helper, b},
		Model: agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				n := replies(req)
				mark(marksPath, fmt.Sprintf("lead model %d", n))
				switch n {
				case 0:
					yield(agentloop.ToolCall{Name: "helper", Args: json.RawMessage(`{"task":"help"}`)}, nil)
				case 1:
					yield(agentloop.ToolCall{Name: "b", Args: json.RawMessage(`{}`)}, nil)
				default:
					yield(agentloop.TextDelta{Text: "done"}, nil)
				}
				yield(agentloop.Usage{Input: 1, Output: 1}, nil)
			}
		})}
}

// A process killed (SIGKILL) after an agent tool's step completed: the
// next process recovers the run, replaying that step without its sub-run's
// items, and the run ends with the usage, in all and per agent, of the
// same run in process, which never stopped.
func TestNested_ARunRecoveredPastASubAgentsStepAfterACrashCountsItsUsage(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			want, err := agentloop.Drain(helperMarkingAgent(filepath.Join(t.TempDir(), "marks"), nil).Stream(context.Background(), crashRun.History, nil))
			require.NoError(t, err)
			inProcess := want.(agentloop.Final)
			require.Equal(t, map[string]agentloop.Usage{"lead": {Input: 3, Output: 3}, "helper": {Input: 7, Output: 2}}, inProcess.AgentUsage)

			marksPath := filepath.Join(t.TempDir(), "marks")
			crashChild(t, b, marksPath, "helper")
			ctx := context.Background()
			d, err := openDBOS(ctx, b.url, b.schema)
			require.NoError(t, err)
			t.Cleanup(func() { _ = dbos.Shutdown(d, 10*time.Second) })
			r, err := dbosrun.New(d, helperMarkingAgent(marksPath, nil), dbosrun.Options{})
			require.NoError(t, err)
			require.NoError(t, dbos.Launch(d))
			last, err := agentloop.Drain(r.Stream(ctx, crashRun))
			require.NoError(t, err)
			f, ok := last.(agentloop.Final)
			require.Truef(t, ok, "last item %T", last)
			assert.Equal(t, map[string]int{"lead model 0": 1, "helper model": 1, "lead model 1": 1, "tool b": 2, "lead model 2": 1},
				marks(t, marksPath), "the helper's step ran once, before the crash")
			assert.Equal(t, inProcess.Usage, f.Usage)
			assert.Equal(t, inProcess.AgentUsage, f.AgentUsage)
		})
	}
}
