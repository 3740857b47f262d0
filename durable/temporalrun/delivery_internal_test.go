package temporalrun

import (
	"context"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

// A call's sub-run items go out only while the workflow awaits the call,
// and only from its latest attempt: an earlier attempt still running (a
// timed-out one) delivers nothing once a later one delivered, and no
// attempt delivers after the call's result (closeCall).
func TestDelivery_ACallsItemsGoOutWhileItIsAwaitedFromItsLatestAttempt(t *testing.T) {
	var got []string
	r, err := New(&agentloop.Agent{Model: agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(func(agentloop.Chunk, error) bool) {}
	})}, Options{OnItem: func(id string, it agentloop.Item, _ error) {
		got = append(got, id+" "+it.(*agentloop.Nested).Item.(agentloop.TextDelta).Text)
	}})
	require.NoError(t, err)
	d := r.delivery("run/exec")
	item := func(text string) *agentloop.Nested {
		return &agentloop.Nested{SubAgent: &agentloop.SubAgent{CallID: "c1"}, Item: agentloop.TextDelta{Text: text}}
	}
	d.nested(r, "run", "c1", 1, item("before the call is awaited"))
	d.openCall("c1")
	d.nested(r, "run", "c1", 1, item("attempt 1"))
	d.nested(r, "run", "c1", 2, item("attempt 2"))
	d.nested(r, "run", "c1", 1, item("attempt 1, late"))
	d.nested(r, "run", "c1", 2, item("attempt 2 again"))
	d.closeCall("c1")
	d.nested(r, "run", "c1", 2, item("after the result"))
	assert.Equal(t, []string{"run attempt 1", "run attempt 2", "run attempt 2 again"}, got)
	assert.Same(t, d, r.executionDelivery("run/exec"))
	assert.Nil(t, r.executionDelivery("run/other"), "an execution this process does not deliver")
}
