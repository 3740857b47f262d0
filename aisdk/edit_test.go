package aisdk_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/aisdk/internal/servetest"
	"github.com/agentloop/agentloop/simtest"
)

func texts(h agentloop.History) string {
	var out []string
	for _, m := range h {
		out = append(out, m.Text())
	}
	return strings.Join(out, ",")
}

// assistant-ui's edit of the first user message posts the edited message
// alone, under a new id: it replaces the whole chat (the model sees only
// it), as an edit of a later message replaces the chat from there; a
// regenerate of the first answer likewise. A client that posts only its
// last message says so (aisdk.LastMessageOnly) and appends.
func TestStored_AnEditOfTheFirstMessageReplacesTheChat(t *testing.T) {
	var n int
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		n++
		return []simtest.Step{simtest.Text(fmt.Sprintf("A%d", n))}, nil
	})
	r := servetest.NewReplica(t, newStore(t), model)
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	for _, q := range []string{"Q1", "Q2"} {
		if _, err := client.Send(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	client.SetMessages([]aisdk.UIMessage{{ID: "edited", Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: "Q1'"}}}})
	if _, err := client.Resend(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := texts(servetest.History(t, r.Server.Store, "c")); got != "Q1',A3" {
		t.Errorf("stored after the edit: %q, want \"Q1',A3\"", got)
	}
	reqs := model.Requests()
	if got := texts(reqs[len(reqs)-1].Messages); got != "Q1'" {
		t.Errorf("the model saw %q, want only the edited message", got)
	}

	// Regenerate the first (and only) answer.
	body := `{"id":"c","trigger":"regenerate-message","messages":[{"id":"edited","role":"user","parts":[{"type":"text","text":"Q1'"}]}]}`
	if status, b := postBody(t, r.ChatURL(), []byte(body)); status != http.StatusOK {
		t.Fatalf("regenerate: %d %s", status, b)
	}
	if got := texts(servetest.History(t, r.Server.Store, "c")); got != "Q1',A4" {
		t.Errorf("stored after the regenerate: %q", got)
	}

	// A client that sends only its last message, and says so, appends.
	body = `{"id":"c","lastMessageOnly":true,"messages":[{"id":"q2","role":"user","parts":[{"type":"text","text":"Q2"}]}]}`
	if status, b := postBody(t, r.ChatURL(), []byte(body)); status != http.StatusOK {
		t.Fatalf("last message only: %d %s", status, b)
	}
	if got := texts(servetest.History(t, r.Server.Store, "c")); got != "Q1',A4,Q2,A5" {
		t.Errorf("stored after a last-message-only post: %q", got)
	}
}
