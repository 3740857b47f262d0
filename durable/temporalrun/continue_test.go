package temporalrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/enginetest"
	"github.com/agentloop/agentloop/durable/temporalrun"
)

// countingAgent's model calls tool "step" on each of its first toolTurns
// turns (10 input and 2 output tokens a call), then answers; calls counts
// its model calls and tool calls.
func countingAgent(t testing.TB, toolTurns int, modelCalls, toolCalls *atomic.Int32) *agentloop.Agent {
	tool, err := agentloop.NewRawTool("step", "A step.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		toolCalls.Add(1)
		return "stepped", nil
	})
	require.NoError(t, err)
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			modelCalls.Add(1)
			if !yield(agentloop.Usage{Input: 10, Output: 2}, nil) {
				return
			}
			if enginetest.Replies(req) < toolTurns {
				yield(agentloop.ToolCall{Name: "step", Args: json.RawMessage(`{}`)}, nil)
				return
			}
			yield(agentloop.TextDelta{Text: "done"}, nil)
		}
	})
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}}
}

// executeChain runs a run in the test suite, following its continuations
// as new as Temporal would (each a new execution, in a fresh environment,
// on the input the last one continued with); it returns the items OnItem
// saw across them, the run's last item or error, and how many executions
// it took.
func executeChain(t *testing.T, agent *agentloop.Agent, opts temporalrun.Options, h agentloop.History) ([]agentloop.Item, agentloop.Item, error, int) {
	t.Helper()
	rec := &recorder{}
	opts.OnItem = rec.onItem
	r, err := temporalrun.New(agent, opts)
	require.NoError(t, err)
	in := temporalrun.Input{ConversationID: "chat-1", History: h}
	for n := 1; ; n++ {
		require.Less(t, n, 20, "the run keeps continuing as new")
		env := newEnv(t)
		r.Register(env)
		env.ExecuteWorkflow(r.WorkflowName(), in)
		require.True(t, env.IsWorkflowCompleted())
		var cont *workflow.ContinueAsNewError
		if err := env.GetWorkflowError(); errors.As(err, &cont) {
			require.Equal(t, r.WorkflowName(), cont.WorkflowType.Name)
			in = temporalrun.Input{}
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(cont.Input, &in))
			continue
		} else {
			require.NoError(t, err)
		}
		var out temporalrun.Outcome
		require.NoError(t, env.GetWorkflowResult(&out))
		last, err := out.Item()
		return rec.items, last, err, n
	}
}

// A long run continues as new every ContinueAfter model calls with its
// history as the state; across the executions it makes each call once and
// gives the items, turn numbers, usage and final history of the same run
// in process.
func TestWorkflow_ALongRunContinuesAsNewAndStaysTheSameRun(t *testing.T) {
	var localModel, localTools, model, tools atomic.Int32
	h := agentloop.History{agentloop.UserMessage("go")}
	want := inProcess(t, countingAgent(t, 5, &localModel, &localTools), h)

	got, last, err, executions := executeChain(t, countingAgent(t, 5, &model, &tools), temporalrun.Options{ContinueAfter: 2}, h)
	require.NoError(t, err)
	require.Equal(t, 3, executions, "6 model calls, 2 per execution")
	require.Equal(t, []int32{6, 5}, []int32{model.Load(), tools.Load()}, "each model and tool call once")
	require.Empty(t, cmp.Diff(enginetest.WholeParts(want), got, cmpItems), "items")
	f, ok := last.(agentloop.Final)
	require.Truef(t, ok, "last item %T", last)
	require.Equal(t, 6, f.Turns)
	require.Equal(t, agentloop.Usage{Input: 60, Output: 12}, f.Usage)
	require.Empty(t, cmp.Diff(want[len(want)-1], last, cmpItems), "the final item")
}

// The turn limit counts the model calls of every execution.
func TestWorkflow_AContinuedRunStopsAtTheAgentsTurnLimit(t *testing.T) {
	var model, tools atomic.Int32
	agent := countingAgent(t, 5, &model, &tools)
	agent.MaxTurns = 3
	_, last, err, executions := executeChain(t, agent, temporalrun.Options{ContinueAfter: 1}, agentloop.History{agentloop.UserMessage("go")})
	require.Nil(t, last)
	var tl *agentloop.TurnLimitError
	require.ErrorAs(t, err, &tl)
	require.Equal(t, 3, tl.Limit)
	require.Equal(t, int32(3), model.Load(), "three model calls in all")
	require.Equal(t, 3, executions)
}

// Without ContinueAfter (and without Temporal's suggestion) a run is one
// execution.
func TestWorkflow_ARunDoesNotContinueAsNewUnlessAsked(t *testing.T) {
	var model, tools atomic.Int32
	_, last, err, executions := executeChain(t, countingAgent(t, 5, &model, &tools), temporalrun.Options{}, agentloop.History{agentloop.UserMessage("go")})
	require.NoError(t, err)
	require.IsType(t, agentloop.Final{}, last)
	require.Equal(t, 1, executions)
}
