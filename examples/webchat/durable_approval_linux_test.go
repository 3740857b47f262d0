package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/store/pgstore"
)

// A run pauses on an approval; every replica is restarted; the approval
// is posted a day later (the ended stream logs a day's janitor deletes
// are gone, and no replica that saw the run is left) to a replica that
// never saw the run: the run goes on from the approved call, and the call
// made before the pause does not run again.
func TestDurable_AnApprovalPostedADayLaterAfterEveryReplicaRestartedGoesOnFromTheApprovedCall(t *testing.T) {
	db := postgresDB(t)
	m := newMarkingRun(t, false)
	script := filepath.Join(t.TempDir(), "approval.json")
	err := os.WriteFile(script, []byte(`{"turns_by":"conversation","turns":[
		{"reply":[{"text":"Marking."},{"tool_call":{"id":"m","name":"mark","args":{}}}]},
		{"expect":{"tool_results":{"m":"marked"}},"reply":[{"text":"Deleting."},{"tool_call":{"id":"d","name":"delete_record","args":{"id":42}}}]},
		{"reply":[{"text":"Deleted."}]}]}`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-db", db, "-lease", "1s", "-script", script, "-mcp", m.args[3]}
	bin := buildWebchat(t)
	a := startProcess(t, bin, append(args, "-executor", "a")...)
	b := startProcess(t, bin, append(args, "-executor", "b")...)

	client := &aisdktest.ChatClient{URL: a.url + "/api/chat", ChatID: "c"}
	if _, err := client.Send(context.Background(), "Go"); err != nil {
		t.Fatal(err)
	}
	msgs := client.Messages()
	if len(msgs) != 2 {
		t.Fatalf("messages after the first request: %+v", msgs)
	}
	var asked *aisdk.UIPart
	for i := range msgs[1].Parts {
		if p := &msgs[1].Parts[i]; p.ToolCallID == "d" && p.State == aisdk.StateApprovalRequested && p.Approval != nil {
			asked = p
		}
	}
	if asked == nil {
		t.Fatalf("the run did not pause on delete_record's approval: %+v", msgs[1].Parts)
	}

	a.term(t)
	b.term(t)
	// A day goes by: the janitor deletes the ended stream logs.
	st, err := pgstore.Open(context.Background(), db, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeleteEndedStreams(context.Background(), time.Now().Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	startProcess(t, bin, append(args, "-executor", "a")...)
	c := startProcess(t, bin, append(args, "-executor", "c")...)

	approved := true
	asked.State, asked.Approval.Approved = aisdk.StateApprovalResponded, &approved
	client.URL = c.url + "/api/chat"
	if _, err := client.Resend(context.Background()); err != nil {
		t.Fatalf("posting the approval: %v\nlog:\n%s", err, c.logs)
	}

	view := getChat(t, c.url, "c")
	var texts []string
	deleted := 0
	for _, msg := range view.Messages {
		for _, p := range msg.Parts {
			switch {
			case p.Type == "text":
				texts = append(texts, p.Text)
			case p.ToolCallID == "d" && p.State == aisdk.StateOutputAvailable && strings.Contains(string(p.Output), `"deleted":true`):
				deleted++
			}
		}
	}
	want := []string{"Go", "Marking.", "Deleting.", "Deleted."}
	if fmt.Sprint(texts) != fmt.Sprint(want) || deleted != 1 || view.LastRun != aisdk.RunFinished || view.Streaming {
		t.Errorf("the chat: texts %q (want %q), %d results of delete_record (want 1), last run %q, streaming %v", texts, want, deleted, view.LastRun, view.Streaming)
	}
	if got, err := os.ReadFile(m.marks); err != nil || string(got) != "mark\n" {
		t.Errorf("marks %q (%v): mark, done before the pause, must have run once", got, err)
	}
}
