package aisdk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/google/go-cmp/cmp"
)

func mustMessages(t *testing.T, s string) []UIMessage {
	t.Helper()
	var msgs []UIMessage
	if err := json.Unmarshal([]byte(s), &msgs); err != nil {
		t.Fatal(err)
	}
	return msgs
}

func tc(id, name, args string) agentloop.Part {
	return agentloop.Part{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}}
}

func tr(id, name, content string, isErr bool) agentloop.Part {
	return agentloop.Part{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: id, Name: name, Content: content, IsError: isErr}}
}

func TestToHistory_EveryPartTypeAndToolState(t *testing.T) {
	msgs := mustMessages(t, `[
	 {"id":"s","role":"system","parts":[{"type":"text","text":"Be "},{"type":"text","text":"brief."}]},
	 {"id":"u1","role":"user","parts":[
	   {"type":"text","text":"Look"},
	   {"type":"file","mediaType":"image/png","url":"data:image/png;base64,AAAA","filename":"a.png"},
	   {"type":"data-note","data":{"x":1}},
	   {"type":"source-url","sourceId":"s1","url":"https://x"},
	   {"type":"something-new","foo":1}]},
	 {"id":"a1","role":"assistant","parts":[
	   {"type":"step-start"},
	   {"type":"reasoning","text":"hm","state":"done","providerMetadata":{"agentloop":{"signature":"sig"}}},
	   {"type":"text","text":"Working.","state":"done"},
	   {"type":"source-document","sourceId":"d","mediaType":"text/plain","title":"t"},
	   {"type":"custom","kind":"x.y"},
	   {"type":"tool-stream","toolCallId":"c0","state":"input-streaming","input":{"partial":"#"}},
	   {"type":"tool-ok","toolCallId":"c1","state":"output-available","input":{"a":1},"output":"plain"},
	   {"type":"dynamic-tool","toolName":"dyn","toolCallId":"c2","state":"output-error","input":{},"errorText":"boom"},
	   {"type":"tool-del","toolCallId":"c3","state":"output-denied","input":{"p":"x"},"approval":{"id":"ap3","approved":false,"reason":"no"}},
	   {"type":"tool-run","toolCallId":"c4","state":"output-available","input":{},"output":{"done":true},"approval":{"id":"ap4","approved":true}},
	   {"type":"step-start"},
	   {"type":"text","text":"Next.","state":"done"},
	   {"type":"steering-message","id":"st","parts":[{"type":"text","text":"steer"}]},
	   {"type":"text","text":"After.","state":"done"}]},
	 {"id":"u2","role":"user","parts":[{"type":"text","text":"more"}]},
	 {"id":"a2","role":"assistant","parts":[
	   {"type":"step-start"},
	   {"type":"tool-wait","toolCallId":"c5","state":"approval-requested","input":{},"approval":{"id":"ap5"}},
	   {"type":"tool-old","toolCallId":"c6","state":"approval-responded","input":{},"approval":{"id":"ap6","approved":false}},
	   {"type":"tool-form","toolCallId":"c7","state":"input-available","input":{"f":1}}]},
	 {"id":"u3","role":"user","parts":[{"type":"text","text":"again"}]},
	 {"id":"a3","role":"assistant","parts":[
	   {"type":"step-start"},
	   {"type":"tool-ask","toolCallId":"c8","state":"approval-requested","input":{},"approval":{"id":"ap8"}},
	   {"type":"tool-go","toolCallId":"c9","state":"approval-responded","input":{},"approval":{"id":"ap9","approved":true}}]}
	]`)
	got, err := ToHistory(msgs)
	if err != nil {
		t.Fatal(err)
	}
	appr := func(typ agentloop.PartType, call, id string, ok bool, reason string) agentloop.Part {
		return agentloop.Part{Type: typ, Approval: &agentloop.Approval{CallID: call, ID: id, Approved: ok, Reason: reason}}
	}
	want := agentloop.History{
		{ID: "s", Role: agentloop.RoleSystem, Parts: []agentloop.Part{agentloop.TextPart("Be brief.")}},
		{ID: "u1", Role: agentloop.RoleUser, Parts: []agentloop.Part{
			agentloop.TextPart("Look"),
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Filename: "a.png", Data: []byte{0, 0, 0}}},
		}},
		{ID: "a1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartReasoning, Text: "hm", Signature: "sig"},
			agentloop.TextPart("Working."),
			tc("c1", "ok", `{"a":1}`),
			tc("c2", "dyn", `{}`),
			tc("c3", "del", `{"p":"x"}`),
			tc("c4", "run", `{}`),
			appr(agentloop.PartApprovalRequest, "c3", "ap3", false, ""),
			appr(agentloop.PartApprovalRequest, "c4", "ap4", false, ""),
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			tr("c1", "ok", "plain", false),
			tr("c2", "dyn", "boom", true),
			appr(agentloop.PartApprovalResponse, "c3", "ap3", false, "no"),
			tr("c3", "del", "The user denied this tool call. Reason: no", true),
			appr(agentloop.PartApprovalResponse, "c4", "ap4", true, ""),
			tr("c4", "run", `{"done":true}`, false),
		}},
		{ID: "a1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("Next.")}},
		{ID: "st", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("steer")}},
		{ID: "a1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("After.")}},
		{ID: "u2", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("more")}},
		// approval-requested before the last user message is dropped; an
		// earlier denial gets its result; input-available stays a call.
		{ID: "a2", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			tc("c6", "old", `{}`),
			tc("c7", "form", `{"f":1}`),
			appr(agentloop.PartApprovalRequest, "c6", "ap6", false, ""),
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			appr(agentloop.PartApprovalResponse, "c6", "ap6", false, ""),
			tr("c6", "old", "The user denied this tool call.", true),
		}},
		{ID: "u3", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("again")}},
		// At the end: pending calls for the loop.
		{ID: "a3", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			tc("c8", "ask", `{}`),
			tc("c9", "go", `{}`),
			appr(agentloop.PartApprovalRequest, "c8", "ap8", false, ""),
			appr(agentloop.PartApprovalRequest, "c9", "ap9", false, ""),
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			appr(agentloop.PartApprovalResponse, "c9", "ap9", true, ""),
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
}

func TestToHistory_RejectsDuplicateCallIDs(t *testing.T) {
	msgs := mustMessages(t, `[{"id":"a","role":"assistant","parts":[
	  {"type":"tool-x","toolCallId":"c","state":"input-available","input":{}},
	  {"type":"step-start"},
	  {"type":"tool-y","toolCallId":"c","state":"input-available","input":{}}]}]`)
	_, err := ToHistory(msgs)
	if err == nil || !strings.Contains(err.Error(), `"c" is used twice`) {
		t.Errorf("err = %v", err)
	}
}

func TestOutputContent(t *testing.T) {
	for in, want := range map[string]string{
		`"text result"`:      "text result",
		`{"b": 2, "a": [1]}`: `{"b":2,"a":[1]}`,
		`42`:                 "42",
		`null`:               "null",
		``:                   "null",
		`{"__aui_modelContent":[{"type":"text","text":"one"},{"type":"file","data":"x","mediaType":"image/png"},{"type":"text","text":"two"}],"value":{"big":true}}`: "one\ntwo",
		`{"__aui_modelContent":[{"type":"file","data":"x","mediaType":"image/png"}],"value":"fallback"}`:                                                             "fallback",
		`{"__aui_modelContent":[],"value":{"v":1}}`: `{"v":1}`,
	} {
		if got := outputContent(json.RawMessage(in)); got != want {
			t.Errorf("outputContent(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestFromHistory_RoundTripsThroughToHistory(t *testing.T) {
	h := agentloop.History{
		{ID: "u1", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("hi"),
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "text/plain", Data: []byte("hello")}}}},
		{ID: "m1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartReasoning, Text: "think", Signature: "sig"},
			{Type: agentloop.PartReasoning, Redacted: "opaque"},
			agentloop.TextPart("Let me see."),
			tc("c1", "get_weather", `{"city":"Oslo"}`),
			tc("c2", "create_record", `{"name":"x"}`),
			tc("c3", "delete_record", `{"id":1}`),
			tc("c4", "delete_record", `{"id":2}`),
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c3", ID: "approval_c3"}},
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c4", ID: "approval_c4"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			tr("c1", "get_weather", `{"temp":20}`, false),
			tr("c2", "create_record", `not json`, false),
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c3", ID: "approval_c3", Approved: true}},
			{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c4", ID: "approval_c4", Reason: "no"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			tr("c3", "delete_record", `{"deleted":1}`, false),
			tr("c4", "delete_record", "The user denied this tool call. Reason: no", true),
		}},
		{ID: "m1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("Done.")}},
		{ID: "u2", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("thanks")}},
	}
	ui := FromHistory(h)
	if len(ui) != 3 || ui[1].ID != "m1" || ui[1].Role != "assistant" {
		t.Fatalf("FromHistory gave %d messages: %+v", len(ui), ui)
	}
	states := []PartState{}
	for _, p := range ui[1].Parts {
		if p.IsTool() {
			states = append(states, p.State)
		}
	}
	if diff := cmp.Diff([]PartState{StateOutputAvailable, StateOutputAvailable, StateOutputAvailable, StateOutputDenied}, states); diff != "" {
		t.Errorf("tool states (-want +got):\n%s", diff)
	}
	// Through JSON, as a client would hold it.
	b, err := json.Marshal(ui)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ToHistory(mustMessages(t, string(b)))
	if err != nil {
		t.Fatal(err)
	}
	want := agentloop.History{
		{ID: "u1", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("hi"),
			// A data: URL's content comes back as the bytes it carries.
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "text/plain", Data: []byte("hello")}}}},
		{ID: "m1", Role: agentloop.RoleAssistant, Parts: h[1].Parts},
		// The tool messages of one step become one.
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			tr("c1", "get_weather", `{"temp":20}`, false),
			tr("c2", "create_record", `not json`, false),
			{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c3", ID: "approval_c3", Approved: true}},
			tr("c3", "delete_record", `{"deleted":1}`, false),
			{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c4", ID: "approval_c4", Reason: "no"}},
			tr("c4", "delete_record", "The user denied this tool call. Reason: no", true),
		}},
		h[5], h[6],
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// And the canonical form is a fixed point.
	if diff := cmp.Diff(back, asPosted(back)); diff != "" {
		t.Errorf("second round trip (-first +second):\n%s", diff)
	}
}

func TestFromHistory_PendingStates(t *testing.T) {
	h := agentloop.History{
		agentloop.UserMessage("go"),
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			tc("c1", "form", `{}`), tc("c2", "del", `{}`), tc("c3", "del", `{}`), tc("c4", "bad", `{`),
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c2", ID: "approval_c2"}},
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c3", ID: "approval_c3"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c3", ID: "approval_c3", Approved: true}},
			tr("c4", "bad", "invalid", true),
		}},
	}
	ui := FromHistory(h)
	if ui[0].ID != "msg-0" || ui[1].ID != "msg-1" {
		t.Errorf("ids %q %q", ui[0].ID, ui[1].ID)
	}
	var got []string
	for _, p := range ui[1].Parts {
		if p.IsTool() {
			got = append(got, string(p.State)+" "+string(p.Input))
		}
	}
	want := []string{"input-available {}", "approval-requested {}", "approval-responded {}", `output-error "{"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	back, err := ToHistory(ui)
	if err != nil {
		t.Fatal(err)
	}
	if calls := back.Unanswered(); len(calls) != 3 {
		t.Errorf("Unanswered after the round trip = %v, want c1, c2, c3", calls)
	}
	if got := string(back[1].ToolCalls()[3].Args); got != "{" {
		t.Errorf("invalid arguments came back as %q", got)
	}
}
