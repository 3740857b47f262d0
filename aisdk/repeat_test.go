package aisdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/aisdk/internal/servetest"
	"github.com/agentloop/agentloop/simtest"
)

// postBody posts a raw chat body and returns the status and the body.
func postBody(t *testing.T, url string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func historyJSON(t *testing.T, r servetest.Replica, chatID string) string {
	t.Helper()
	b, err := json.Marshal(servetest.History(t, r.Server.Store, chatID))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An approval posted again after its run answered runs nothing (neither
// the tool nor the model) and stores nothing: it is a 409 that tells the
// page to reload.
func TestStored_ARepeatedApprovalRunsNothingAndStoresNothingTwice(t *testing.T) {
	del, runs := newDeleteRecord(t)
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("d", "delete_record", map[string]int{"id": 7})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Deleted.")}},
	)
	r := servetest.NewReplica(t, newStore(t), model, del)
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c",
		Approve: func(string, json.RawMessage) (bool, string) { return true, "fine" }}
	if _, err := client.Send(context.Background(), "Delete record 7"); err != nil {
		t.Fatal(err)
	}
	tr := client.Transcript()
	approval := tr[len(tr)-1].Request
	before := historyJSON(t, r, "c")

	status, body := postBody(t, r.ChatURL(), approval)
	if status != http.StatusConflict || !strings.Contains(body, "already has these results and decisions") {
		t.Errorf("the repeated approval got %d %s, want 409", status, body)
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model ran %d times, want 2", n)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the approved tool ran %d times, want once", n)
	}
	if after := historyJSON(t, r, "c"); after != before {
		t.Errorf("the stored chat changed:\n%s\nwas\n%s", after, before)
	}
}

// A POST retried after its first attempt was saved and answered (the
// client never saw the answer) gets the stored answer, and nothing runs
// or is written again.
func TestStored_ARetriedPostGetsTheStoredAnswer(t *testing.T) {
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Hello there.")}})
	r := servetest.NewReplica(t, newStore(t), model)
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	if _, err := client.Send(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	first := client.Transcript()[0]
	before := historyJSON(t, r, "c")

	retry := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	retry.SetMessages(client.Messages()[:1])
	msgs, err := retry.Resend(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[len(msgs)-1]; got.Role != "assistant" || got.ID != client.Messages()[1].ID || len(got.Parts) == 0 || got.Parts[len(got.Parts)-1].Text != "Hello there." {
		t.Errorf("the retry got %+v, want the stored answer", got)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("the model ran %d times, want once", n)
	}
	if after := historyJSON(t, r, "c"); after != before {
		t.Errorf("the stored chat changed:\n%s\nwas\n%s", after, before)
	}
	// The same request, byte for byte, gets the same.
	if status, body := postBody(t, r.ChatURL(), first.Request); status != http.StatusOK || !strings.Contains(body, "Hello there.") {
		t.Errorf("the byte-for-byte retry got %d %s", status, body)
	}
}

// A POST retried while the run of its first attempt goes on (a double
// click, a client that timed out) follows that run's stream: it neither
// stops the run nor starts another.
func TestStored_ARetriedPostWhileItsRunGoesOnGetsItsStream(t *testing.T) {
	g := servetest.NewGate(t)
	defer g.Open()
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Waiting."), simtest.Call("g", "wait_for_it", map[string]string{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Done.")}},
	)
	r := servetest.NewReplica(t, newStore(t), model, g.Tool)
	user := aisdk.UIMessage{ID: "u1", Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: "go"}}}
	first := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	first.SetMessages([]aisdk.UIMessage{user})
	done := make(chan error, 1)
	go func() {
		_, err := first.Resend(context.Background())
		done <- err
	}()
	<-g.Started

	retry := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", OnChunk: func(_ int, data json.RawMessage) {
		if isChunk(data, "tool-input-available", "g") {
			g.Open() // the retry follows the run from its start
		}
	}}
	retry.SetMessages([]aisdk.UIMessage{user})
	msgs, err := retry.Resend(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := msgs[len(msgs)-1].Parts; got[len(got)-1].Text != "Done." {
		t.Errorf("the retry ends with %+v", got[len(got)-1])
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model ran %d times, want 2", n)
	}
	if h := servetest.History(t, r.Server.Store, "c"); h.LastAssistantText() != "Done." || len(g.Started) != 0 {
		t.Errorf("stored %+v; the tool started again: %v", h, len(g.Started) != 0)
	}
}

// A request that is refused (409: it does not fit the stored chat) while
// a run of the chat goes on stops nothing: the run ends with its answer.
func TestStored_ARefusedRequestStopsNothing(t *testing.T) {
	g := servetest.NewGate(t)
	defer g.Open()
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Waiting."), simtest.Call("g", "wait_for_it", map[string]string{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Done.")}},
	)
	r := servetest.NewReplica(t, newStore(t), model, g.Tool)
	first := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	done := make(chan error, 1)
	go func() {
		_, err := first.Send(context.Background(), "go")
		done <- err
	}()
	<-g.Started
	// A forged request: the stored user message, edited in place.
	forged := `{"id":"c","trigger":"submit-message","messages":[` +
		`{"id":"user-1","role":"user","parts":[{"type":"text","text":"something else"}]},` +
		`{"id":"u2","role":"user","parts":[{"type":"text","text":"and more"}]}]}`
	if status, body := postBody(t, r.ChatURL(), []byte(forged)); status != http.StatusConflict {
		t.Fatalf("the forged request got %d %s, want 409", status, body)
	}
	s, err := r.Server.Store.ActiveStream(context.Background(), "c")
	if err != nil || s.StopRequested {
		t.Errorf("the run after the refused request: %+v, %v; want it running, not asked to stop", s, err)
	}
	g.Open()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if h := servetest.History(t, r.Server.Store, "c"); h.LastAssistantText() != "Done." {
		t.Errorf("stored %+v", h)
	}
}

// A user message posted again after the chat went on from it is a 409:
// its answer is no longer the chat's last, and nothing runs.
func TestStored_AUserMessageRepeatedAfterTheChatWentOnIsRefused(t *testing.T) {
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("One.")}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Two.")}},
	)
	r := servetest.NewReplica(t, newStore(t), model)
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	for _, q := range []string{"first", "second"} {
		if _, err := client.Send(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	before := historyJSON(t, r, "c")
	status, body := postBody(t, r.ChatURL(), client.Transcript()[0].Request)
	if status != http.StatusConflict || !strings.Contains(body, "went on since") {
		t.Errorf("the old request again got %d %s, want 409", status, body)
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model ran %d times, want 2", n)
	}
	if after := historyJSON(t, r, "c"); after != before {
		t.Errorf("the stored chat changed")
	}
}
