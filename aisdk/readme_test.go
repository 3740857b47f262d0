package aisdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/simtest"
)

// The README's aisdk example: serve an agent to useChat, then drive it as
// the browser would with aisdktest.
func TestREADME_ServeAWebChat(t *testing.T) {
	deleteRecord, err := agentloop.NewTool("delete_record", "Delete a record.",
		func(ctx context.Context, in struct {
			ID int `json:"id"`
		}) (string, error) {
			return "deleted", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	deleteRecord.NeedsApproval = true
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_1", "delete_record", map[string]int{"id": 7})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Record 7 is deleted.")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{deleteRecord}}
	secret := []byte("32 or more random bytes, from a secret store")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	chat := &aisdk.Handler{
		Agent:  agent,
		Secret: secret, // signs what the server decided; the same on every replica
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", chat)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second, // no ReadTimeout or WriteTimeout: answers stream
		IdleTimeout:       2 * time.Minute,
	}
	go srv.Serve(ln)
	defer srv.Close()

	ctx := t.Context()
	url := "http://" + ln.Addr().String() + "/api/chat"

	// In a test, play the browser: approve the call, then read the answer.
	client := &aisdktest.ChatClient{URL: url, Approve: func(tool string, input json.RawMessage) (bool, string) {
		return tool == "delete_record", ""
	}}
	msgs, err := client.Send(ctx, "Delete record 7")
	if err != nil {
		t.Fatal(err)
	}
	answer := msgs[len(msgs)-1].Parts
	if got := answer[len(answer)-1].Text; got != "Record 7 is deleted." {
		t.Errorf("answer %q", got)
	}
	if err := srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Error(err)
	}
}
