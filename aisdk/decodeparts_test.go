package aisdk

import (
	"strings"
	"testing"
)

// The one-pass decoder cuts messages' parts from shared slabs; each
// message's slice has its own length as capacity, so that appending to
// one never writes over the next message's parts.
func TestDecodeRequest_AppendingToOneMessagesPartsLeavesTheNextOnesAlone(t *testing.T) {
	var msgs []string
	for i := range 5 {
		msgs = append(msgs, `{"id":"u`+string(rune('0'+i))+`","role":"user","parts":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`)
	}
	req, err := DecodeRequest(strings.NewReader(`{"id":"c","messages":[`+strings.Join(msgs, ",")+`]}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range req.Messages {
		if p := req.Messages[i].Parts; len(p) != 2 || cap(p) != 2 {
			t.Fatalf("message %d: %d parts, capacity %d; want 2 and 2", i, len(p), cap(p))
		}
	}
	req.Messages[0].Parts = append(req.Messages[0].Parts, UIPart{Type: "text", Text: "appended"})
	if got := req.Messages[1].Parts[0].Text; got != "a" {
		t.Errorf("the next message's first part reads %q after an append to the first message, want %q", got, "a")
	}
}
