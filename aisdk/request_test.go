package aisdk

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/google/go-cmp/cmp"
)

// The bodies of ui-message-stream.md, verbatim.
const (
	specToolContinuation = `{"id":"chat-tool","messages":[
  {"id":"u1","role":"user","parts":[{"type":"text","text":"Where am I and what time is it?"}]},
  {"id":"msg-tool-1","role":"assistant","parts":[
    {"type":"step-start"},
    {"type":"text","text":"Let me check the time and your location.","state":"done"},
    {"type":"tool-getTime","toolCallId":"call-time","state":"output-available","input":{"tz":"UTC"},"output":{"iso":"2026-01-01T00:00:00Z"}},
    {"type":"tool-getLocation","toolCallId":"call-loc","state":"output-available","input":{"precision":"city"},"output":{"city":"Berlin","country":"DE"}}]}],
 "trigger":"submit-message","messageId":"msg-tool-1"}`

	specApprovalContinuation = `{"id":"chat-approval","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Delete old-notes.txt"}]},{"id":"msg-appr-1","role":"assistant","parts":[{"type":"step-start"},
  {"type":"tool-deleteFile","toolCallId":"call-del","state":"approval-responded","input":{"path":"old-notes.txt"},
   "approval":{"id":"appr-1","approved":false,"reason":"user said no"}}]}],
 "trigger":"submit-message","messageId":"msg-appr-1"}`

	specAssistantUI = `{"system":"You are a test assistant.",
 "tools":{"getLocation":{"description":"Get the user's location from the browser",
   "parameters":{"type":"object","properties":{"precision":{"type":"string","enum":["city","country"]}},"required":["precision"]}}},
 "id":"chat-tool",
 "messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Where am I and what time is it?"}],"metadata":{"custom":{}}}],
 "trigger":"submit-message","metadata":{}}`
)

func decode(t *testing.T, body string) *ChatRequest {
	t.Helper()
	req, err := DecodeRequest(strings.NewReader(body), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestDecodeRequest_ToolContinuationFromTheSpec(t *testing.T) {
	req := decode(t, specToolContinuation)
	if req.ID != "chat-tool" || req.Trigger != "submit-message" || req.MessageID != "msg-tool-1" || len(req.Messages) != 2 {
		t.Fatalf("decoded %+v", req)
	}
	h, err := ToHistory(req.Messages)
	if err != nil {
		t.Fatal(err)
	}
	// §6's example, in the loop's terms.
	want := agentloop.History{
		{ID: "u1", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("Where am I and what time is it?")}},
		{ID: "msg-tool-1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			agentloop.TextPart("Let me check the time and your location."),
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "call-time", Name: "getTime", Args: json.RawMessage(`{"tz":"UTC"}`)}},
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "call-loc", Name: "getLocation", Args: json.RawMessage(`{"precision":"city"}`)}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "call-time", Name: "getTime", Content: `{"iso":"2026-01-01T00:00:00Z"}`}},
			{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "call-loc", Name: "getLocation", Content: `{"city":"Berlin","country":"DE"}`}},
		}},
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
}

func TestDecodeRequest_ApprovalContinuationFromTheSpec(t *testing.T) {
	req := decode(t, specApprovalContinuation)
	p := req.Messages[1].Parts[1]
	if p.ToolNameOf() != "deleteFile" || p.State != StateApprovalResponded || p.Approval == nil || *p.Approval.Approved || p.Approval.Reason != "user said no" {
		t.Fatalf("part %+v", p)
	}
	h, err := ToHistory(req.Messages)
	if err != nil {
		t.Fatal(err)
	}
	// assistant[tool-call, approval request] → tool[approval response]; the
	// loop makes the denied result when it resumes.
	want := agentloop.History{
		h[0],
		{ID: "msg-appr-1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "call-del", Name: "deleteFile", Args: json.RawMessage(`{"path":"old-notes.txt"}`)}},
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "call-del", ID: "appr-1"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "call-del", ID: "appr-1", Approved: false, Reason: "user said no"}},
		}},
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if got := h.Unanswered(); len(got) != 1 || got[0].ID != "call-del" {
		t.Errorf("Unanswered = %v, want the denied call, for the loop to answer", got)
	}
}

func TestDecodeRequest_AssistantUIBodyFromTheSpec(t *testing.T) {
	req := decode(t, specAssistantUI)
	if req.System != "You are a test assistant." || string(req.Metadata) != `{}` {
		t.Errorf("system %q, metadata %s", req.System, req.Metadata)
	}
	tool, ok := req.Tools["getLocation"]
	if !ok || tool.Description != "Get the user's location from the browser" || !strings.Contains(string(tool.Parameters), `"enum":["city","country"]`) {
		t.Errorf("tools %+v", req.Tools)
	}
	if string(req.Messages[0].Metadata) != `{"custom":{}}` {
		t.Errorf("message metadata %s", req.Messages[0].Metadata)
	}
}

func TestDecodeRequest_KeepsExtraBodyKeysAndUnknownPartKeys(t *testing.T) {
	req := decode(t, `{"id":"c","userId":"u-7","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi","custom":{"x":1}},{"type":"data-note","data":{"n":1},"id":"d"}]}]}`)
	if string(req.Extra["userId"]) != `"u-7"` {
		t.Errorf("Extra = %v", req.Extra)
	}
	p := req.Messages[0].Parts[0]
	if string(p.Extra["custom"]) != `{"x":1}` {
		t.Errorf("part Extra = %v", p.Extra)
	}
	b, err := json.Marshal(p)
	if err != nil || string(b) != `{"type":"text","text":"hi","custom":{"x":1}}` {
		t.Errorf("part marshals to %s, %v", b, err)
	}
}

func TestDecodeRequest_BadBodiesNameTheProblem(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{``, "body is empty"},
		{`null`, "body is null"},
		{`[]`, "not a JSON object"},
		{`{"id":"c"}`, `no "messages" field`},
		{`{"messages":{}}`, `"messages" must be an array`},
		{`{"messages":[]}`, `"messages" is empty`},
		{`{"messages":[{"id":"1","parts":[]}]}`, `message 0 has no "role"`},
		{`{"messages":[{"id":"1","role":"tool","parts":[]}]}`, `role "tool"`},
		{`{"messages":[{"id":"1","role":"user"}]}`, `no "parts" array`},
		{`{"messages":[{"id":"1","role":"user","parts":[{"text":"x"}]}]}`, `part 0 has no "type"`},
		{`{"messages":[{"id":"1","role":"assistant","parts":[{"type":"tool-x","state":"input-available"}]}]}`, `no "toolCallId"`},
		{`{"messages":[{"id":"1","role":"assistant","parts":[{"type":"tool-x","toolCallId":"c","state":"running"}]}]}`, `unknown state "running"`},
		{`{"messages":[{"id":"1","role":"assistant","parts":[{"type":"dynamic-tool","toolCallId":"c","state":"input-available"}]}]}`, `no tool name`},
		{`{"messages":[{"id":"1","role":"assistant","parts":[{"type":"tool-x","toolCallId":"c","state":"approval-responded","approval":{"id":"a"}}]}]}`, `no "approval.approved"`},
		{`{"messages":[{"id":"1","role":"assistant","parts":[{"type":"tool-x","toolCallId":"c","state":"approval-requested"}]}]}`, `no "approval" with an id`},
		{`{"id":5,"messages":[]}`, `field "id"`},
		{`{"messages":[{"id":"1","role":"user","parts":[]}],"tools":[]}`, `"tools" must be an object`},
		{`{"messages":[{"id":"1","role":"user","parts":[]}],"tools":{"t":{"parameters":"x"}}}`, `tool "t": "parameters" must be a JSON Schema object`},
		{`{"messages":[{"id":"1","role":"user","parts":[{"type":"text","text":5}]}]}`, `message 0`},
		{`{"messages":[{"id":"1","role":"user","parts":[]}],"trigger":"continue"}`, `field "trigger" is "continue"; want "submit-message" or "regenerate-message"`},
	} {
		_, err := DecodeRequest(strings.NewReader(tc.body), Limits{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadRequest) {
			t.Errorf("DecodeRequest(%s) = %v, want an ErrBadRequest containing %q", tc.body, err, tc.want)
		}
	}
}

func TestDecodeRequest_Limits(t *testing.T) {
	msg := `{"id":"1","role":"user","parts":[{"type":"text","text":"hi"}]}`
	body := `{"messages":[` + msg + `,` + msg + `,` + msg + `]}`
	if _, err := DecodeRequest(strings.NewReader(body), Limits{MaxMessages: 2}); err == nil || !strings.Contains(err.Error(), "3 messages, more than the limit of 2") {
		t.Errorf("message limit: %v", err)
	}
	if _, err := DecodeRequest(strings.NewReader(body), Limits{MaxParts: 2}); err == nil || !strings.Contains(err.Error(), "more than 2 message parts") {
		t.Errorf("part limit: %v", err)
	}
	if _, err := DecodeRequest(strings.NewReader(body), Limits{MaxBodyBytes: 20}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("size limit: %v", err)
	}
	if _, err := DecodeRequest(strings.NewReader(body), Limits{MaxBodyBytes: -1, MaxMessages: -1, MaxParts: -1}); err != nil {
		t.Errorf("no limits: %v", err)
	}
}

func TestChatRequest_MarshalJSONPutsExtraAtTheTop(t *testing.T) {
	req := decode(t, `{"id":"c","userId":"u-7","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}],"trigger":"submit-message"}`)
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	back := decode(t, string(b))
	if diff := cmp.Diff(req, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(b), `"userId":"u-7"`) {
		t.Errorf("marshalled %s", b)
	}
}
