package agentloop_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

// fullHistory uses every kind of part.
func fullHistory() agentloop.History {
	return agentloop.History{
		agentloop.SystemMessage("Be brief."),
		{ID: "u1", Role: agentloop.RoleUser, Parts: []agentloop.Part{
			agentloop.TextPart("What is in this picture?"),
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Filename: "cat.png", Data: []byte{0x89, 'P', 'N', 'G'}}},
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/jpeg", URL: "https://example.com/cat.jpg"}},
		}},
		{ID: "a1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartReasoning, Text: "Look closely.", Signature: "EqQBCgIYAhIM"},
			{Type: agentloop.PartReasoning, Redacted: "EmwKAhgBEgy3va3pzix"},
			agentloop.TextPart("Let me check."),
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "classify", Args: json.RawMessage(`{"x":1}`)}},
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c2", Name: "delete", Args: json.RawMessage(`{}`)}},
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c2", ID: "approval_c2"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Name: "classify", Content: `{"label":"cat"}`}},
			{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c2", ID: "approval_c2", Approved: false, Reason: "no"}},
			{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c2", Name: "delete", Content: "denied", IsError: true}},
		}},
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("A cat. ✓ 猫")}},
	}
}

// design.md §8.2: a history round-trips through its JSON with no loss.
func TestHistory_JSONRoundTripLosesNothing(t *testing.T) {
	h := fullHistory()
	data, err := json.Marshal(h)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"version":2`)
	var back agentloop.History
	require.NoError(t, json.Unmarshal(data, &back))
	if diff := cmp.Diff(h, back); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}

// design.md §8.2: a missing or unknown version, an unknown role and malformed
// messages are errors that wrap ErrInvalidHistory.
func TestHistory_UnmarshalRejectsBadInput(t *testing.T) {
	cases := map[string]string{
		"unknown version":      `{"version":7,"messages":[]}`,
		"no version":           `{"messages":[]}`,
		"unknown role":         `{"version":2,"messages":[{"role":"robot","parts":[]}]}`,
		"unknown role in v1":   `{"version":1,"messages":[{"role":"robot","parts":[]}]}`,
		"messages not a list":  `{"version":2,"messages":{}}`,
		"args and invalidArgs": `{"version":2,"messages":[{"role":"assistant","parts":[{"type":"toolCall","toolCall":{"id":"c","name":"f","args":{},"invalidArgs":"{"}}]}]}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			var h agentloop.History
			err := json.Unmarshal([]byte(in), &h)
			require.ErrorIs(t, err, agentloop.ErrInvalidHistory)
		})
	}
	var h agentloop.History
	var syntax *json.SyntaxError
	require.ErrorAs(t, json.Unmarshal([]byte(`{"version":1,`), &h), &syntax, "encoding/json rejects broken JSON before UnmarshalJSON runs")
	err := json.Unmarshal([]byte(`{"version":7,"messages":[]}`), &h)
	assert.ErrorContains(t, err, "version 7 is not supported")
}

// design.md §8.2: the persisted format is camelCase throughout (keys and part types), and
// pinned here so that a change to it is a deliberate one.
func TestHistory_JSONFormatIsCamelCase(t *testing.T) {
	h := agentloop.History{
		{ID: "a1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "f", Args: json.RawMessage(`{"x": 1}`)}},
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c1", ID: "ap1"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Name: "f", Content: "no", IsError: true, Err: errors.New("not serialized")}},
		}},
		{Role: agentloop.RoleUser, Parts: []agentloop.Part{{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "text/plain", URL: "data:,x"}}}},
	}
	data, err := json.Marshal(h)
	require.NoError(t, err)
	assert.JSONEq(t, `{"version":2,"messages":[
	  {"id":"a1","role":"assistant","parts":[
	    {"type":"toolCall","toolCall":{"id":"c1","name":"f","args":{"x":1}}},
	    {"type":"approvalRequest","approval":{"callId":"c1","id":"ap1"}}]},
	  {"role":"tool","parts":[{"type":"toolResult","toolResult":{"callId":"c1","name":"f","content":"no","isError":true}}]},
	  {"role":"user","parts":[{"type":"file","file":{"mediaType":"text/plain","url":"data:,x"}}]}]}`, string(data))
}

// design.md §8.2: histories written by the first release (version 1, snake_case) still load.
func TestHistory_ReadsVersion1(t *testing.T) {
	v1 := `{"version":1,"messages":[
	  {"id":"u1","role":"user","parts":[{"type":"text","text":"hi"},{"type":"file","file":{"media_type":"image/png","data":"iVBORw=="}}]},
	  {"role":"assistant","parts":[{"type":"reasoning","text":"r","signature":"s"},{"type":"tool_call","tool_call":{"id":"c1","name":"f","args":{"x":1}}},
	    {"type":"approval_request","approval":{"call_id":"c1","id":"ap"}}]},
	  {"role":"tool","parts":[{"type":"approval_response","approval":{"call_id":"c1","id":"ap","approved":true}},
	    {"type":"tool_result","tool_result":{"call_id":"c1","name":"f","content":"ok","is_error":true}}]}]}`
	var h agentloop.History
	require.NoError(t, json.Unmarshal([]byte(v1), &h))
	want := agentloop.History{
		{ID: "u1", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("hi"),
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}}}},
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{{Type: agentloop.PartReasoning, Text: "r", Signature: "s"},
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "f", Args: json.RawMessage(`{"x":1}`)}},
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c1", ID: "ap"}}}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c1", ID: "ap", Approved: true}},
			{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Name: "f", Content: "ok", IsError: true}}}},
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Fatalf("version 1 (-want +got):\n%s", diff)
	}
}

// design.md §8.3: arguments the model wrote as invalid JSON (or nothing) survive a round
// trip byte for byte, marked as such, so every history can be stored.
func TestHistory_InvalidToolArgumentsRoundTrip(t *testing.T) {
	for _, args := range []string{`{"a": 1,`, `not json at all`, "\"unterminated", ""} {
		h := agentloop.History{{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "f", Args: json.RawMessage(args)}}}}}
		data, err := json.Marshal(h)
		require.NoError(t, err, "args %q", args)
		if args != "" {
			assert.Contains(t, string(data), `"invalidArgs":`)
		}
		var back agentloop.History
		require.NoError(t, json.Unmarshal(data, &back))
		assert.Equal(t, args, string(back[0].Parts[0].ToolCall.Args))
	}
}

// design.md §8.4: Clone is deep: changing anything the copy holds leaves the original as it
// was, down to the bytes of arguments and files.
func TestHistory_CloneIsDeep(t *testing.T) {
	h := fullHistory()
	want := fullHistory()
	c := h.Clone()
	for i := range c {
		for j := range c[i].Parts {
			p := &c[i].Parts[j]
			p.Text = "changed"
			if p.ToolCall != nil {
				p.ToolCall.Name = "renamed"
				p.ToolCall.Args[0] = '['
			}
			if p.ToolResult != nil {
				p.ToolResult.Content = "redacted"
			}
			if p.Approval != nil {
				p.Approval.Approved = true
			}
			if p.File != nil {
				p.File.Filename = "x"
				if len(p.File.Data) > 0 {
					p.File.Data[0] = 0
				}
			}
		}
		c[i].Parts = append(c[i].Parts, agentloop.TextPart("more"))
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Fatalf("the original changed (-want +got):\n%s", diff)
	}
	assert.Nil(t, agentloop.History(nil).Clone())
}

func TestHistory_EmptyMarshalsAsEmptyList(t *testing.T) {
	data, err := json.Marshal(agentloop.History(nil))
	require.NoError(t, err)
	assert.JSONEq(t, `{"version":2,"messages":[]}`, string(data))
}

// design.md §8.5: Unanswered lists the calls still waiting; AppendResults answers them
// and refuses an id that is not among them.
func TestHistory_UnansweredAndAppendResults(t *testing.T) {
	h := agentloop.History{
		agentloop.UserMessage("x"),
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "a"}},
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c2", Name: "b"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Name: "a"}}}},
	}
	un := h.Unanswered()
	require.Len(t, un, 1)
	assert.Equal(t, "c2", un[0].ID)

	_, err := h.AppendResults(agentloop.ToolResult{CallID: "c1", Content: "again"})
	require.ErrorIs(t, err, agentloop.ErrInvalidHistory, "an answered call cannot be answered twice")
	_, err = h.AppendResults(agentloop.ToolResult{CallID: "zzz"})
	require.ErrorContains(t, err, `"zzz"`)

	h2, err := h.AppendResults(agentloop.ToolResult{CallID: "c2", Content: "ok"})
	require.NoError(t, err)
	assert.Empty(t, h2.Unanswered())
	assert.Len(t, h, 3, "the receiver is unchanged")
	assert.Equal(t, "b", h2[3].Parts[0].ToolResult.Name)

	_, err = h.AppendApprovals(agentloop.Approval{CallID: "nope", Approved: true})
	require.ErrorContains(t, err, `"nope"`)
}

// design.md §8.5: Validate reports the first structural problem and names it.
func TestHistory_ValidateNamesTheProblem(t *testing.T) {
	require.NoError(t, fullHistory().Validate())
	dup := agentloop.History{{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
		{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1"}},
		{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1"}},
	}}}
	assert.ErrorContains(t, dup.Validate(), `tool call id "c1" is used twice`)
	approval := agentloop.History{{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "x9"}}}}}
	assert.ErrorContains(t, approval.Validate(), `"x9"`)
}

func TestHistory_LastAssistantText(t *testing.T) {
	assert.Equal(t, "A cat. ✓ 猫", fullHistory().LastAssistantText())
	assert.Equal(t, "", agentloop.History(nil).LastAssistantText())
}

// design.md §8.2: whatever unmarshals, marshals again and reads back.
func FuzzHistoryUnmarshal(f *testing.F) {
	data, _ := json.Marshal(fullHistory())
	f.Add(data)
	f.Add([]byte(`{"version":1,"messages":[{"role":"tool","parts":[{"type":"tool_result"}]}]}`))
	f.Add([]byte(`{"version":2,"messages":[{"role":"assistant","parts":[{"type":"toolCall","toolCall":{"id":"c","name":"f","invalidArgs":"{\"a\":"}}]}]}`))
	f.Add([]byte(`{"version":1,"messages":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var h agentloop.History
		if err := json.Unmarshal(data, &h); err != nil {
			return
		}
		_ = h.Validate()
		_ = h.Unanswered()
		_ = h.LastAssistantText()
		out, err := json.Marshal(h)
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		var back agentloop.History
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("a marshalled history does not unmarshal: %v", err)
		}
	})
}
