package agentloop_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// A triage agent looks an order up, then hands the conversation to billing.
// With DropToolsBeforeHandoff, billing's model is given what was said, not
// triage's tool calls and results; the run's history keeps everything.
func ExampleDropToolsBeforeHandoff() {
	lookup, _ := agentloop.NewTool("lookup", "Look an order up.", func(ctx context.Context, in struct {
		Order string `json:"order"`
	}) (string, error) {
		return "order " + in.Order + ": paid", nil
	})
	billingModel := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Refunded order 42.")}})
	billing := &agentloop.Agent{
		Name:          "billing",
		Model:         billingModel,
		HandoffFilter: agentloop.DropToolsBeforeHandoff,
	}
	triage := &agentloop.Agent{
		Name:  "triage",
		Tools: []*agentloop.Tool{lookup},
		Model: simtest.NewModel(
			simtest.Turn{Reply: []simtest.Step{simtest.Call("l1", "lookup", map[string]string{"order": "42"})}},
			simtest.Turn{Reply: []simtest.Step{simtest.Text("Over to billing."), simtest.Call("t1", "transfer_to_billing", nil)}},
		),
		Handoffs: []*agentloop.Agent{billing},
	}

	history := agentloop.History{agentloop.UserMessage("Refund order 42, please.")}
	for item, err := range triage.Stream(context.Background(), history, nil) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if f, ok := item.(agentloop.Final); ok {
			fmt.Printf("%s: %s (%d messages in the history)\n", f.History[len(f.History)-1].Agent, f.Text, len(f.History))
		}
	}
	fmt.Println("billing's model was given:")
	for _, m := range billingModel.Requests()[0].Messages {
		fmt.Printf("  %s: %s\n", m.Role, m.Text())
	}
	// Output:
	// billing: Refunded order 42. (6 messages in the history)
	// billing's model was given:
	//   user: Refund order 42, please.
	//   assistant: Over to billing.
}
