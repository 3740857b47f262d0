package aisdktest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/simtest"
)

// A ChatClient drives an aisdk.Handler the way useChat does: the model asks
// for the client tool getLocation, the client answers it and re-posts
// automatically, and the server continues the same assistant message.
func ExampleChatClient() {
	loc, err := agentloop.NewClientTool("getLocation", "The user's location.", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call-1", "getLocation", map[string]string{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("You are in Berlin.")}},
	)
	handler := &aisdk.Handler{
		Agent:        &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{loc}},
		NewMessageID: func() string { return "msg-1" },
	}
	client := &aisdktest.ChatClient{
		Handler: handler,
		Tools: map[string]aisdktest.ClientToolFunc{
			"getLocation": func(json.RawMessage) (any, error) { return map[string]string{"city": "Berlin"}, nil },
		},
	}
	msgs, err := client.Send(context.Background(), "Where am I?")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range msgs {
		fmt.Println(m.Role, m.ID)
		for _, p := range m.Parts {
			fmt.Println("  " + strings.Join(strings.Fields(p.Type+" "+string(p.State)+" "+p.Text+" "+string(p.Output)), " "))
		}
	}
	for i, ex := range client.Transcript() {
		var body struct {
			MessageID string `json:"messageId"`
		}
		_ = json.Unmarshal(ex.Request, &body)
		fmt.Printf("POST %d: messageId=%q, %d chunks\n", i+1, body.MessageID, len(ex.Chunks))
	}
	// Output:
	// user user-1
	//   text Where am I?
	// assistant msg-1
	//   step-start
	//   tool-getLocation output-available {"city":"Berlin"}
	//   step-start
	//   text done You are in Berlin.
	// POST 1: messageId="", 7 chunks
	// POST 2: messageId="msg-1", 10 chunks
}
