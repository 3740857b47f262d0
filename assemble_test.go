package agentloop_test

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// callIDs returns, in order, the id of every ToolCallDelta and
// ToolCallReady item, and the ids of the calls in the history.
func callIDs(items []agentloop.Item) (deltas, readies, history []string) {
	for _, it := range items {
		switch it := it.(type) {
		case agentloop.ToolCallDelta:
			deltas = append(deltas, it.ID)
		case agentloop.ToolCallReady:
			readies = append(readies, it.Call.ID)
		case agentloop.Final:
			for _, m := range it.History {
				for _, c := range m.ToolCalls() {
					history = append(history, c.ID)
				}
			}
		}
	}
	return deltas, readies, history
}

// design.md §9.1: the ids of a history are unique: an id the server repeats within a turn
// is replaced by a fresh, deterministic one, the same on every item and in
// the history, and the history runs again without complaint.
func TestIDs_RepeatedIDWithinATurnIsReplacedEverywhere(t *testing.T) {
	m := simtest.NewModel(turn(simtest.Call("dup", "echo", `{"text":"a"}`), simtest.Call("dup", "echo", `{"text":"b"}`)), turn(simtest.Text("done")))
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echoTool(t, "echo")}}
	items, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	deltas, readies, history := callIDs(items)
	assert.Equal(t, []string{"dup", "call_0_1"}, readies)
	assert.Equal(t, readies, history)
	for i, id := range deltas {
		assert.Contains(t, readies, id, "delta %d carries an id no call has", i)
	}
	assert.Equal(t, "call_0_1", deltas[len(deltas)-1], "the second call's deltas carry its new id")
	f := final(t, items)
	assert.Len(t, resultsIn(f.History), 2, "each call has its own result")
	_, err = collect((&agentloop.Agent{Model: simtest.NewModel(turn(simtest.Text("again")))}).Stream(t.Context(), append(f.History, agentloop.UserMessage("more")), nil))
	require.NoError(t, err, "the loop accepts its own history")
}

// design.md §9.1: an id the server repeats on a later turn (or that a hook's trimming made
// a provider repeat) is replaced too.
func TestIDs_IDRepeatedAcrossTurnsIsReplaced(t *testing.T) {
	// A model that makes ids up from what it is sent, as providers used to:
	// a hook that trims old messages makes it repeat them.
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		assistants := 0
		for _, msg := range req.Messages {
			if msg.Role == agentloop.RoleAssistant {
				assistants++
			}
		}
		if req.Turn == 3 {
			return []simtest.Step{simtest.Text("done")}, nil
		}
		return []simtest.Step{simtest.Call(fmt.Sprintf("call_%d_0", assistants), "echo", `{"text":"a"}`)}, nil
	})
	trim := &agentloop.Hooks{BeforeModelCall: func(_ context.Context, req *agentloop.Request) error {
		req.Messages = req.Messages[len(req.Messages)-1:] // keep only the newest message
		return nil
	}}
	a := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{echoTool(t, "echo")}, Hooks: trim}
	items, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	_, readies, history := callIDs(items)
	assert.Equal(t, []string{"call_0_0", "call_1_0"}, readies)
	assert.Equal(t, readies, history)
	require.NoError(t, final(t, items).History.Validate())
}

// design.md §9.1: a call whose deltas came without an id keeps the id the loop gave it on
// its first delta, even if the complete call then names another.
func TestIDs_DeltasAndCompleteCallShareOneID(t *testing.T) {
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if req.Turn > 1 {
				yield(agentloop.TextDelta{Text: "ok"}, nil)
				return
			}
			for _, c := range []agentloop.Chunk{
				agentloop.ToolCallDelta{Index: 0, Name: "echo", Args: `{"text":`},
				agentloop.ToolCallDelta{Index: 0, Args: `"a"}`},
				agentloop.ToolCall{ID: "late_id", Name: "echo", Args: []byte(`{"text":"a"}`)},
			} {
				if !yield(c, nil) {
					return
				}
			}
		}
	})
	a := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{echoTool(t, "echo")}}
	items, err := collect(a.Stream(t.Context(), user("x"), nil))
	require.NoError(t, err)
	deltas, readies, history := callIDs(items)
	assert.Equal(t, []string{"call_0_0", "call_0_0"}, deltas)
	assert.Equal(t, []string{"call_0_0"}, readies)
	assert.Equal(t, readies, history)
}
