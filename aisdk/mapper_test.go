package aisdk

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/google/go-cmp/cmp"
)

type pair struct {
	item agentloop.Item
	err  error
}

func mapAll(m *Mapper, pairs []pair) []Chunk {
	var out []Chunk
	for _, p := range pairs {
		out = m.Map(out, p.item, p.err)
	}
	return m.End(out)
}

func call(id, name, args string) agentloop.ToolCall {
	return agentloop.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// mapperCase is a run's items, fed to a Mapper for message id, and the
// chunks it must make, in wire form; an entry of want may hold several
// chunks, one a line (see textPart).
type mapperCase struct {
	name  string
	id    string
	pairs []pair
	want  []string
}

// runMapperCases checks, for each case in a subtest of its name, the
// chunks the Mapper makes, that each parses, and that the client accepts
// the sequence.
func runMapperCases(t *testing.T, cases []mapperCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			chunks := mapAll(NewMapper(tt.id), tt.pairs)
			var want []string
			for _, w := range tt.want {
				want = append(want, strings.Split(w, "\n")...)
			}
			if diff := cmp.Diff(want, wire(t, chunks)); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			c := newUIClient(&UIMessage{Role: "assistant", Parts: preexisting(tt.pairs)})
			for _, ch := range chunks {
				if _, err := ParseChunk([]byte(wire(t, []Chunk{ch})[0])); err != nil {
					t.Fatal(err)
				}
				if err := c.apply(ch); err != nil {
					t.Fatalf("client rejects %s: %v", ChunkType(ch), err)
				}
			}
		})
	}
}

// The wire forms of the chunks most cases share.
const (
	startStep  = `{"type":"start-step"}`
	finishStep = `{"type":"finish-step"}`
)

func startMsg(id string) string { return `{"type":"start","messageId":"` + id + `"}` }

func finishWith(reason string) string { return `{"type":"finish","finishReason":"` + reason + `"}` }

// textPart is a text part with one delta: its start, delta and end chunks,
// one a line.
func textPart(id, delta string) string {
	d, _ := json.Marshal(delta) // a string always marshals
	return `{"type":"text-start","id":"` + id + `"}` + "\n" +
		`{"type":"text-delta","id":"` + id + `","delta":` + string(d) + "}\n" +
		`{"type":"text-end","id":"` + id + `"}`
}

func TestMapper_SpecSequences(t *testing.T) {
	getTime := call("call-time", "getTime", `{"tz":"UTC"}`)
	getLoc := call("call-loc", "getLocation", `{"precision":"city"}`)
	del := call("call-del", "deleteFile", `{"path":"old-notes.txt"}`)
	tests := []mapperCase{
		{
			name: "plain answer with reasoning (§2.2)",
			id:   "msg-1",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.ReasoningDelta{Text: "Think."}},
				{item: agentloop.ReasoningEnd{}},
				{item: agentloop.TextDelta{Text: "Hello"}},
				{item: agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishStop}},
				{item: agentloop.Final{Text: "Hello"}},
			},
			want: []string{
				startMsg("msg-1"),
				startStep,
				`{"type":"reasoning-start","id":"reasoning-1"}`,
				`{"type":"reasoning-delta","id":"reasoning-1","delta":"Think."}`,
				`{"type":"reasoning-end","id":"reasoning-1"}`,
				textPart("text-2", "Hello"),
				finishStep,
				finishWith("stop"),
			},
		},
		{
			name: "server tool and client tool in one step, paused for the client (§5 step 2)",
			id:   "msg-tool-1",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.TextDelta{Text: "Let me check the time and your location."}},
				{item: agentloop.ToolCallDelta{Index: 0, ID: "call-time", Name: "getTime", Args: `{"tz":"UTC"}`}},
				{item: agentloop.ToolCallReady{Call: getTime}},
				{item: agentloop.ToolCallDelta{Index: 1, ID: "call-loc", Name: "getLocation", Args: `{"precision":`}},
				{item: agentloop.ToolCallDelta{Index: 1, ID: "call-loc", Name: "getLocation", Args: `"city"}`}},
				{item: agentloop.ToolCallReady{Call: getLoc, RunsOnClient: true}},
				{item: agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishToolCalls}},
				{item: agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: "call-time", Name: "getTime", Content: `{"iso":"2026-01-01T00:00:00Z"}`}}},
				{item: agentloop.Pending{ClientCalls: []agentloop.ToolCall{getLoc}}},
			},
			want: []string{
				startMsg("msg-tool-1"),
				startStep,
				textPart("text-1", "Let me check the time and your location."),
				`{"type":"tool-input-start","toolCallId":"call-time","toolName":"getTime"}`,
				`{"type":"tool-input-delta","toolCallId":"call-time","inputTextDelta":"{\"tz\":\"UTC\"}"}`,
				`{"type":"tool-input-available","toolCallId":"call-time","toolName":"getTime","input":{"tz":"UTC"}}`,
				`{"type":"tool-input-start","toolCallId":"call-loc","toolName":"getLocation"}`,
				`{"type":"tool-input-delta","toolCallId":"call-loc","inputTextDelta":"{\"precision\":"}`,
				`{"type":"tool-input-delta","toolCallId":"call-loc","inputTextDelta":"\"city\"}"}`,
				`{"type":"tool-output-available","toolCallId":"call-time","output":{"iso":"2026-01-01T00:00:00Z"}}`,
				`{"type":"tool-input-available","toolCallId":"call-loc","toolName":"getLocation","input":{"precision":"city"}}`,
				finishStep,
				finishWith("tool-calls"),
			},
		},
		{
			name: "continuation reuses the message id (§5 step 7)",
			id:   "msg-tool-1",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.TextDelta{Text: `Your location is {"city":"Berlin","country":"DE"}.`}},
				{item: agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishStop}},
				{item: agentloop.Final{}},
			},
			want: []string{
				startMsg("msg-tool-1"),
				startStep,
				textPart("text-1", `Your location is {"city":"Berlin","country":"DE"}.`),
				finishStep,
				finishWith("stop"),
			},
		},
		{
			name: "approval request (§5.1 step 1)",
			id:   "msg-appr-1",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.ToolCallReady{Call: del, NeedsApproval: true}},
				{item: agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishToolCalls, Message: agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
					{Type: agentloop.PartToolCall, ToolCall: &del},
					{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "call-del", ID: "appr-1"}},
				}}}},
				{item: agentloop.Pending{Approvals: []agentloop.ToolCall{del}}},
			},
			want: []string{
				startMsg("msg-appr-1"),
				startStep,
				`{"type":"tool-input-available","toolCallId":"call-del","toolName":"deleteFile","input":{"path":"old-notes.txt"}}`,
				`{"type":"tool-approval-request","approvalId":"appr-1","toolCallId":"call-del"}`,
				finishStep,
				finishWith("tool-calls"),
			},
		},
		{
			name: "approved call runs before the first step (§5.1 step 3)",
			id:   "msg-appr-1",
			pairs: []pair{
				{item: agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: "call-del", Name: "deleteFile", Content: `{"deleted":true}`}}},
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.TextDelta{Text: "Deleted."}},
				{item: agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishStop}},
				{item: agentloop.Final{}},
			},
			want: []string{
				startMsg("msg-appr-1"),
				`{"type":"tool-output-available","toolCallId":"call-del","output":{"deleted":true}}`,
				startStep,
				textPart("text-1", "Deleted."),
				finishStep,
				finishWith("stop"),
			},
		},
		{
			name: "an approved client tool is handed to the client on resume",
			id:   "msg-appr-1",
			pairs: []pair{
				{item: agentloop.Pending{ClientCalls: []agentloop.ToolCall{getLoc}}},
			},
			want: []string{
				startMsg("msg-appr-1"),
				`{"type":"tool-input-available","toolCallId":"call-loc","toolName":"getLocation","input":{"precision":"city"}}`,
				finishWith("tool-calls"),
			},
		},
		{
			name: "denied call (§5.1 step 3)",
			id:   "msg-appr-1",
			pairs: []pair{
				{item: agentloop.ToolResultReady{Denied: true, Result: agentloop.ToolResult{CallID: "call-del", Name: "deleteFile", IsError: true, Content: "The user denied this tool call."}}},
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.TextDelta{Text: "OK."}},
				{item: agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishLength}},
				{item: agentloop.Final{}},
			},
			want: []string{
				startMsg("msg-appr-1"),
				`{"type":"tool-output-denied","toolCallId":"call-del"}`,
				startStep,
				textPart("text-1", "OK."),
				finishStep,
				finishWith("length"),
			},
		},
		{
			name: "tool error result and plain-text output",
			id:   "m",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.ToolCallReady{Call: call("a", "fail", `{}`)}},
				{item: agentloop.ToolCallReady{Call: call("b", "echo", ``)}},
				{item: agentloop.TurnEnd{Turn: 1}},
				{item: agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: "a", IsError: true, Content: "error: boom"}}},
				{item: agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: "b", Content: "plain text"}}},
				{item: agentloop.TurnStart{Turn: 2}},
				{item: agentloop.TextDelta{Text: "x"}},
				{item: agentloop.TurnEnd{Turn: 2, FinishReason: agentloop.FinishContentFilter}},
				{item: agentloop.Final{}},
			},
			want: []string{
				startMsg("m"),
				startStep,
				`{"type":"tool-input-available","toolCallId":"a","toolName":"fail","input":{}}`,
				`{"type":"tool-input-available","toolCallId":"b","toolName":"echo","input":{}}`,
				`{"type":"tool-output-error","toolCallId":"a","errorText":"error: boom"}`,
				`{"type":"tool-output-available","toolCallId":"b","output":"plain text"}`,
				finishStep,
				startStep,
				textPart("text-1", "x"),
				finishStep,
				finishWith("content-filter"),
			},
		},
		{
			name: "client call with arguments the loop rejects becomes tool-input-error",
			id:   "m",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.ToolCallReady{Call: call("c", "form", `{"x":1}`), RunsOnClient: true}},
				{item: agentloop.TurnEnd{Turn: 1}},
				{item: agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: "c", IsError: true, Content: "bad args"}}},
				{item: agentloop.TurnStart{Turn: 2}},
				{item: agentloop.TextDelta{Text: "sorry"}},
				{item: agentloop.TurnEnd{Turn: 2}},
				{item: agentloop.Final{}},
			},
			want: []string{
				startMsg("m"),
				startStep,
				`{"type":"tool-input-error","toolCallId":"c","toolName":"form","input":{"x":1},"errorText":"bad args"}`,
				finishStep,
				startStep,
				textPart("text-1", "sorry"),
				finishStep,
				finishWith("stop"),
			},
		},
		{
			name: "failure mid-text closes the part and ends with error",
			id:   "m",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.TextDelta{Text: "Hal"}},
				{err: errors.New("provider went away")},
				{item: agentloop.TextDelta{Text: "ignored"}},
			},
			want: []string{
				startMsg("m"),
				startStep,
				textPart("text-1", "Hal"),
				finishStep,
				`{"type":"error","errorText":"provider went away"}`,
			},
		},
		{
			name: "reasoning with a signature and redacted reasoning carry provider metadata",
			id:   "m",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.ReasoningDelta{Text: "a"}},
				{item: agentloop.ReasoningEnd{Signature: "sig"}},
				{item: agentloop.ReasoningEnd{Redacted: "opaque"}},
				{item: agentloop.TurnEnd{Turn: 1}},
				{item: agentloop.Final{}},
			},
			want: []string{
				startMsg("m"),
				startStep,
				`{"type":"reasoning-start","id":"reasoning-1"}`,
				`{"type":"reasoning-delta","id":"reasoning-1","delta":"a"}`,
				`{"type":"reasoning-end","id":"reasoning-1","providerMetadata":{"agentloop":{"signature":"sig"}}}`,
				`{"type":"reasoning-start","id":"reasoning-2"}`,
				`{"type":"reasoning-end","id":"reasoning-2","providerMetadata":{"agentloop":{"redacted":"opaque"}}}`,
				finishStep,
				finishWith("stop"),
			},
		},
		{
			name: "a failed run answers the client calls it never handed over",
			id:   "m",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.ToolCallReady{Call: call("c", "form", `{"x":1}`), RunsOnClient: true}},
				{err: errors.New("model failed")},
			},
			want: []string{
				startMsg("m"),
				startStep,
				`{"type":"tool-input-error","toolCallId":"c","toolName":"form","input":{"x":1},"errorText":"not run: model failed"}`,
				finishStep,
				`{"type":"error","errorText":"model failed"}`,
			},
		},
		{
			name:  "a run that ends without a final item ends with an error",
			id:    "",
			pairs: []pair{{item: agentloop.TurnStart{Turn: 1}}},
			want: []string{
				`{"type":"start"}`,
				startStep,
				finishStep,
				`{"type":"error","errorText":"aisdk: the run ended without a final item"}`,
			},
		},
	}
	runMapperCases(t, tests)
}

// preexisting returns the tool parts a continuation's message already has
// for results that come before the first step.
func preexisting(pairs []pair) []UIPart {
	var parts []UIPart
	for _, p := range pairs {
		switch it := p.item.(type) {
		case agentloop.TurnStart:
			return parts
		case agentloop.ToolResultReady:
			parts = append(parts, UIPart{Type: "tool-x", ToolCallID: it.Result.CallID, State: StateApprovalResponded})
		}
	}
	return parts
}

func TestMapper_ErrorTextHidesDetails(t *testing.T) {
	m := NewMapper("m")
	m.ErrorText = func(error) string { return "Something went wrong." }
	got := wire(t, m.Map(nil, nil, errors.New("secret: db password wrong")))
	want := []string{startMsg("m"), `{"type":"error","errorText":"Something went wrong."}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	if !m.Done() {
		t.Error("Done is false after an error")
	}
}

func TestMapper_InvalidArgumentsTravelAsString(t *testing.T) {
	m := NewMapper("m")
	got := wire(t, m.Map(nil, agentloop.ToolCallReady{Call: call("c", "add", `{"a":`)}, nil))
	if want := `{"type":"tool-input-available","toolCallId":"c","toolName":"add","input":"{\"a\":"}`; got[1] != want {
		t.Errorf("got %s, want %s", got[1], want)
	}
}

func TestFinishReasonOf_MapsEveryLoopReason(t *testing.T) {
	for in, want := range map[agentloop.FinishReason]FinishReason{
		agentloop.FinishStop: "stop", agentloop.FinishLength: "length", agentloop.FinishToolCalls: "tool-calls",
		agentloop.FinishContentFilter: "content-filter", agentloop.FinishError: "error", agentloop.FinishOther: "other",
		"": "stop", "weird": "other",
	} {
		if got := finishReasonOf(in); got != want || !got.valid() {
			t.Errorf("finishReasonOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMapper_NewItemsOfTheLoop(t *testing.T) {
	unknown := call("c-x", "no_such_tool", `{}`)
	tests := []mapperCase{
		{
			name: "progress is preliminary output, replaced by the result",
			id:   "m",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.ToolCallReady{Call: call("c", "import", `{}`)}},
				{item: agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishToolCalls}},
				{item: agentloop.ToolProgress{CallID: "c", Name: "import", Content: `{"done":1}`}},
				{item: agentloop.ToolProgress{CallID: "c", Name: "import", Content: "almost"}},
				{item: agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: "c", Name: "import", Content: `{"done":2}`}}},
				{item: agentloop.TurnStart{Turn: 2}},
				{item: agentloop.TurnEnd{Turn: 2}},
				{item: agentloop.Final{}},
			},
			want: []string{
				startMsg("m"),
				startStep,
				`{"type":"tool-input-available","toolCallId":"c","toolName":"import","input":{}}`,
				`{"type":"tool-output-available","toolCallId":"c","output":{"done":1},"preliminary":true}`,
				`{"type":"tool-output-available","toolCallId":"c","output":"almost","preliminary":true}`,
				`{"type":"tool-output-available","toolCallId":"c","output":{"done":2}}`,
				finishStep,
				startStep,
				finishStep,
				finishWith("stop"),
			},
		},
		{
			name: "a server call the loop rejects is an invalid call, never runnable",
			id:   "m",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.ToolCallDelta{Index: 0, ID: "c-x", Name: "no_such_tool", Args: `{}`}},
				{item: agentloop.ToolCallReady{Call: unknown, Err: agentloop.ErrUnknownTool}},
				{item: agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishToolCalls}},
				{item: agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: "c-x", Name: "no_such_tool", IsError: true, Content: "unknown tool no_such_tool"}}},
				{item: agentloop.TurnStart{Turn: 2}},
				{item: agentloop.TurnEnd{Turn: 2}},
				{item: agentloop.Final{}},
			},
			want: []string{
				startMsg("m"),
				startStep,
				`{"type":"tool-input-start","toolCallId":"c-x","toolName":"no_such_tool"}`,
				`{"type":"tool-input-delta","toolCallId":"c-x","inputTextDelta":"{}"}`,
				`{"type":"tool-input-error","toolCallId":"c-x","toolName":"no_such_tool","input":{},"errorText":"unknown tool no_such_tool"}`,
				finishStep,
				startStep,
				finishStep,
				finishWith("stop"),
			},
		},
		{
			name: "a failed turn ends its step, then the error",
			id:   "m",
			pairs: []pair{
				{item: agentloop.TurnStart{Turn: 1}},
				{item: agentloop.TextDelta{Text: "Par"}},
				{item: agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishError, Err: errors.New("model failed")}},
				{err: errors.New("model failed")},
			},
			want: []string{
				startMsg("m"),
				startStep,
				textPart("text-1", "Par"),
				finishStep,
				`{"type":"error","errorText":"model failed"}`,
			},
		},
	}
	runMapperCases(t, tests)
}

// With signing on, every server-made chunk carries its signature where the
// client keeps it, and what the client gets back verifies.
func TestMapper_SignsWhatTheServerMade(t *testing.T) {
	s := newSigner([]byte("a mapper test secret, 32+ bytes long"))
	m := NewMapper("m")
	m.signWith(s, nil)
	del := call("c-d", "delete", `{"id":7}`)
	chunks := mapAll(m, []pair{
		{item: agentloop.TurnStart{Turn: 1}},
		{item: agentloop.ReasoningDelta{Text: "Think."}},
		{item: agentloop.ReasoningEnd{Signature: "provider-sig"}},
		{item: agentloop.TextDelta{Text: "Bad \xffbyte"}},
		{item: agentloop.ToolCallReady{Call: call("c-w", "weather", `{"city":"Oslo"}`)}},
		{item: agentloop.ToolCallReady{Call: call("c-x", "nope", `{}`), Err: agentloop.ErrUnknownTool}},
		{item: agentloop.ToolCallReady{Call: call("c-f", "form", `{}`), RunsOnClient: true}},
		{item: agentloop.ToolCallReady{Call: del, NeedsApproval: true}},
		{item: agentloop.TurnEnd{Turn: 1, FinishReason: agentloop.FinishToolCalls, Message: agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartToolCall, ToolCall: &del},
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c-d", ID: "a-1"}},
		}}}},
		{item: agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: "c-w", Content: `{"t":-0.0}`}}},
		{item: agentloop.ToolResultReady{Result: agentloop.ToolResult{CallID: "c-x", IsError: true, Content: "unknown tool"}}},
		{item: agentloop.Pending{ClientCalls: []agentloop.ToolCall{call("c-f", "form", `{}`)}, Approvals: []agentloop.ToolCall{del}}},
	})
	unsigned := map[string]bool{"start": true, "start-step": true, "finish-step": true, "finish": true,
		"reasoning-start": true, "reasoning-delta": true, "text-start": true, "text-delta": true}
	for _, line := range wire(t, chunks) {
		var c struct {
			Type      string
			Signature string
		}
		_ = json.Unmarshal([]byte(line), &c)
		if !unsigned[c.Type] && !strings.Contains(line, `"sig":"`) && c.Signature == "" {
			t.Errorf("chunk %s carries no signature", line)
		}
	}
	msg := UIMessage{ID: "m", Role: "assistant"}
	c := newUIClient(&msg)
	for _, ch := range chunks {
		if err := c.apply(ch); err != nil {
			t.Fatal(err)
		}
	}
	// Through JSON, as the browser holds it.
	b, _ := json.Marshal([]UIMessage{msg})
	var back []UIMessage
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if _, err := s.verify(back); err != nil {
		t.Errorf("the client's copy does not verify: %v", err)
	}
}
