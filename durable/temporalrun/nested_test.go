package temporalrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/internal/enginetest"
	"github.com/agentloop/agentloop/durable/temporalrun"
)

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
				if enginetest.Replies(req) == 0 {
					yield(agentloop.ToolCall{Name: "helper", Args: json.RawMessage(`{"task":"help"}`)}, nil)
				} else {
					yield(agentloop.TextDelta{Text: "done"}, nil)
				}
				yield(agentloop.Usage{Input: 1, Output: 1}, nil)
			}
		})}
}

// leadWithLookingHelper is leadWithHelper whose helper streams its text,
// calls a lookup tool, and answers "it is 5".
func leadWithLookingHelper(t testing.TB) *agentloop.Agent {
	lookup, err := agentloop.NewRawTool("lookup", "Looks up.", nil, func(context.Context, json.RawMessage) (string, error) { return "5", nil })
	require.NoError(t, err)
	return leadWithHelper(t, &agentloop.Agent{Name: "helper", Tools: []*agentloop.Tool{lookup},
		Model: agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				if enginetest.Replies(req) == 0 {
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
	require.Empty(t, cmp.Diff(enginetest.WholeParts(want), got, cmpItems), "items")
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
