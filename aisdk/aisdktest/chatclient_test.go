package aisdktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/simtest"
	"github.com/google/go-cmp/cmp"
)

// replay is a handler that answers the n-th POST with bodies[n] (an SSE
// body; each entry is one chunk line or comment, "\n\n"-terminated when it
// does not end in a newline) and records the posted bodies.
type replay struct {
	bodies   []string
	requests []map[string]json.RawMessage
}

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var body map[string]json.RawMessage
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		http.Error(w, "bad body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.requests = append(r.requests, body)
	n := len(r.requests) - 1
	if n >= len(r.bodies) {
		http.Error(w, fmt.Sprintf("no response scripted for POST %d", n+1), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write([]byte(r.bodies[n]))
}

// discardLogger keeps the handler's error logs out of the test output.
var discardLogger = slog.New(slog.DiscardHandler)

// sse frames chunk lines as "data: <line>\n\n" and ends with [DONE].
func sse(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("data: " + l + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// summary is a compact view of a part for comparisons.
func summary(msgs []aisdk.UIMessage) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role+" "+m.ID)
		for _, p := range m.Parts {
			s := "  " + p.Type
			if p.State != "" {
				s += "(" + string(p.State) + ")"
			}
			if p.Text != "" {
				s += " " + p.Text
			}
			if p.Output != nil {
				s += " -> " + string(p.Output)
			}
			if p.ErrorText != "" {
				s += " ! " + p.ErrorText
			}
			out = append(out, s)
		}
	}
	return out
}

func TestChatClient_PlainAnswerFromSpec(t *testing.T) {
	h := &replay{bodies: []string{sse(
		`{"type":"start"}`, `{"type":"start-step"}`,
		`{"type":"reasoning-start","id":"r1"}`, `{"type":"reasoning-delta","id":"r1","delta":"Think."}`, `{"type":"reasoning-end","id":"r1"}`,
		`{"type":"text-start","id":"t1"}`, `{"type":"text-delta","id":"t1","delta":"Hel"}`, `{"type":"text-delta","id":"t1","delta":"lo"}`, `{"type":"text-end","id":"t1"}`,
		`{"type":"finish-step"}`, `{"type":"finish","finishReason":"stop"}`,
	)}}
	c := &aisdktest.ChatClient{Handler: h, ChatID: "chat-plain"}
	msgs, err := c.Send(context.Background(), "Hi")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user user-1", "  text Hi", "assistant client-msg-2", "  step-start", "  reasoning(done) Think.", "  text(done) Hello"}
	if diff := cmp.Diff(want, summary(msgs)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	tr := c.Transcript()
	if len(tr) != 1 || len(tr[0].Chunks) != 11 || !tr[0].Done || tr[0].Status != 200 {
		t.Fatalf("transcript %+v", tr)
	}
	if got := string(tr[0].Request); got != `{"id":"chat-plain","messages":[{"id":"user-1","role":"user","parts":[{"type":"text","text":"Hi"}]}],"trigger":"submit-message"}` {
		t.Errorf("request body %s", got)
	}
}

// The spec's §5 frontend-tool round trip: a server tool and a client tool in
// one step, the client answers, re-posts with messageId, and the server
// continues the same message.
func TestChatClient_FrontendToolRoundTripFromSpec(t *testing.T) {
	h := &replay{bodies: []string{
		sse(`{"type":"start","messageId":"msg-tool-1"}`, `{"type":"start-step"}`,
			`{"type":"text-start","id":"t1"}`, `{"type":"text-delta","id":"t1","delta":"Let me check the time and your location."}`, `{"type":"text-end","id":"t1"}`,
			`{"type":"tool-input-start","toolCallId":"call-time","toolName":"getTime"}`,
			`{"type":"tool-input-delta","toolCallId":"call-time","inputTextDelta":"{\"tz\":\"UTC\"}"}`,
			`{"type":"tool-input-available","toolCallId":"call-time","toolName":"getTime","input":{"tz":"UTC"}}`,
			`{"type":"tool-output-available","toolCallId":"call-time","output":{"iso":"2026-01-01T00:00:00Z"}}`,
			`{"type":"tool-input-start","toolCallId":"call-loc","toolName":"getLocation"}`,
			`{"type":"tool-input-delta","toolCallId":"call-loc","inputTextDelta":"{\"precision\":"}`,
			`{"type":"tool-input-delta","toolCallId":"call-loc","inputTextDelta":"\"city\"}"}`,
			`{"type":"tool-input-available","toolCallId":"call-loc","toolName":"getLocation","input":{"precision":"city"}}`,
			`{"type":"finish-step"}`, `{"type":"finish","finishReason":"tool-calls"}`),
		sse(`{"type":"start","messageId":"msg-tool-1"}`, `{"type":"start-step"}`,
			`{"type":"text-start","id":"t2"}`, `{"type":"text-delta","id":"t2","delta":"You are in Berlin."}`, `{"type":"text-end","id":"t2"}`,
			`{"type":"finish-step"}`, `{"type":"finish","finishReason":"stop"}`),
	}}
	var gotInput string
	c := &aisdktest.ChatClient{Handler: h, ChatID: "chat-tool", Tools: map[string]aisdktest.ClientToolFunc{
		"getLocation": func(input json.RawMessage) (any, error) {
			gotInput = string(input)
			return map[string]string{"city": "Berlin", "country": "DE"}, nil
		},
	}}
	msgs, err := c.Send(context.Background(), "Where am I and what time is it?")
	if err != nil {
		t.Fatal(err)
	}
	if gotInput != `{"precision":"city"}` {
		t.Errorf("client tool input %s", gotInput)
	}
	want := []string{"user user-1", "  text Where am I and what time is it?", "assistant msg-tool-1",
		"  step-start", "  text(done) Let me check the time and your location.",
		`  tool-getTime(output-available) -> {"iso":"2026-01-01T00:00:00Z"}`,
		`  tool-getLocation(output-available) -> {"city":"Berlin","country":"DE"}`,
		"  step-start", "  text(done) You are in Berlin."}
	if diff := cmp.Diff(want, summary(msgs)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if len(h.requests) != 2 {
		t.Fatalf("%d POSTs, want 2", len(h.requests))
	}
	second := h.requests[1]
	if string(second["messageId"]) != `"msg-tool-1"` || string(second["trigger"]) != `"submit-message"` {
		t.Errorf("POST 2 messageId %s trigger %s", second["messageId"], second["trigger"])
	}
	wantMsgs := `[{"id":"user-1","role":"user","parts":[{"type":"text","text":"Where am I and what time is it?"}]},` +
		`{"id":"msg-tool-1","role":"assistant","parts":[{"type":"step-start"},` +
		`{"type":"text","state":"done","text":"Let me check the time and your location."},` +
		`{"type":"tool-getTime","state":"output-available","toolCallId":"call-time","input":{"tz":"UTC"},"output":{"iso":"2026-01-01T00:00:00Z"}},` +
		`{"type":"tool-getLocation","state":"output-available","toolCallId":"call-loc","input":{"precision":"city"},"output":{"city":"Berlin","country":"DE"}}]}]`
	var gotJSON, wantJSON any
	if err := json.Unmarshal(second["messages"], &gotJSON); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(wantMsgs), &wantJSON)
	if diff := cmp.Diff(wantJSON, gotJSON); diff != "" {
		t.Errorf("POST 2 messages (-want +got):\n%s", diff)
	}
}

// The spec's §5.1 approval, denied.
func TestChatClient_ApprovalDeniedFromSpec(t *testing.T) {
	h := &replay{bodies: []string{
		sse(`{"type":"start","messageId":"msg-appr-1"}`, `{"type":"start-step"}`,
			`{"type":"tool-input-available","toolCallId":"call-del","toolName":"deleteFile","input":{"path":"old-notes.txt"}}`,
			`{"type":"tool-approval-request","approvalId":"appr-1","toolCallId":"call-del"}`,
			`{"type":"finish-step"}`, `{"type":"finish","finishReason":"tool-calls"}`),
		sse(`{"type":"start","messageId":"msg-appr-1"}`, `{"type":"tool-output-denied","toolCallId":"call-del"}`,
			`{"type":"start-step"}`, `{"type":"text-start","id":"t1"}`, `{"type":"text-delta","id":"t1","delta":"Kept it."}`, `{"type":"text-end","id":"t1"}`,
			`{"type":"finish-step"}`, `{"type":"finish","finishReason":"stop"}`),
	}}
	var asked []string
	c := &aisdktest.ChatClient{Handler: h, Approve: func(name string, input json.RawMessage) (bool, string) {
		asked = append(asked, name+" "+string(input))
		return false, "user said no"
	}}
	msgs, err := c.Send(context.Background(), "Delete old notes")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`deleteFile {"path":"old-notes.txt"}`}, asked); diff != "" {
		t.Errorf("approvals asked (-want +got):\n%s", diff)
	}
	want := []string{"user user-1", "  text Delete old notes", "assistant msg-appr-1", "  step-start", "  tool-deleteFile(output-denied)", "  step-start", "  text(done) Kept it."}
	if diff := cmp.Diff(want, summary(msgs)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if len(h.requests) != 2 || !strings.Contains(string(h.requests[1]["messages"]),
		`{"type":"tool-deleteFile","state":"approval-responded","toolCallId":"call-del","input":{"path":"old-notes.txt"},"approval":{"id":"appr-1","approved":false,"reason":"user said no"}}`) {
		t.Errorf("POST 2 does not carry the approval response: %v", h.requests)
	}
}

func TestChatClient_AcceptsSSEFramingVariants(t *testing.T) {
	body := ": stream-open\r\n\r\n" +
		"data:{\"type\":\"start\"}\r\n\r\n" +
		"event: ignored\nid: 7\ndata: {\"type\":\"text-start\",\n" + "data: \"id\":\"t1\"}\n\n" +
		": keep-alive\n\n" +
		"data: {\"type\":\"text-delta\",\"id\":\"t1\",\"delta\":\"ok\",\"extra\":{\"kept\":true}}\r\r" +
		"data: {\"type\":\"text-end\",\"id\":\"t1\",\"providerMetadata\":{\"p\":{\"k\":null}}}\n\n" +
		"data: {\"type\":\"data-weather\",\"id\":\"w\",\"data\":null}\n\n" +
		"data: {\"type\":\"data-weather\",\"id\":\"w\",\"data\":{\"t\":1}}\n\n" +
		"data: {\"type\":\"data-note\",\"transient\":true,\"data\":1}\n\n" +
		"data: {\"type\":\"start\",\"messageMetadata\":null}\n\n" // no finish, no [DONE]
	c := &aisdktest.ChatClient{Handler: &replay{bodies: []string{body}}}
	msgs, err := c.Send(context.Background(), "Hi")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user user-1", "  text Hi", "assistant client-msg-2", "  text(done) ok", "  data-weather"}
	if diff := cmp.Diff(want, summary(msgs)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if got := string(msgs[1].Parts[1].Data); got != `{"t":1}` {
		t.Errorf("data part %s, want the second chunk's data replacing the first", got)
	}
	if c.Transcript()[0].Done {
		t.Error("Done without [DONE]")
	}
}

func TestChatClient_RejectsInvalidChunksNamingThem(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bodies []string
		want   []string // substrings of the error
	}{
		{"text-delta without start", []string{sse(`{"type":"start"}`, `{"type":"text-delta","id":"t1","delta":"x"}`)},
			[]string{"chunk 2", `"text-delta"`, `no active text part with id "t1"`}},
		{"text-end without start", []string{sse(`{"type":"reasoning-end","id":"r9"}`)}, []string{"reasoning part", `"r9"`}},
		{"null messageId", []string{sse(`{"type":"start","messageId":null}`)}, []string{`"messageId"`, "null is not allowed"}},
		{"null providerExecuted", []string{sse(`{"type":"tool-input-available","toolCallId":"c","toolName":"x","input":{},"providerExecuted":null}`)}, []string{`"providerExecuted"`, "null"}},
		{"unknown chunk type", []string{sse(`{"type":"text","text":"v4 style"}`)}, []string{`unknown chunk type "text"`}},
		{"no type", []string{sse(`{"id":"x"}`)}, []string{`"type" is missing`}},
		{"not JSON", []string{sse(`{oops`)}, []string{"chunk 1 {oops", "not a JSON object"}},
		{"finishReason unknown", []string{sse(`{"type":"finish","finishReason":"unknown"}`)}, []string{`"unknown" is not one of stop`}},
		{"flat providerMetadata", []string{sse(`{"type":"text-start","id":"t","providerMetadata":{"x":1}}`)}, []string{"providerMetadata", "{provider: {key: value}}"}},
		{"tool input missing", []string{sse(`{"type":"tool-input-available","toolCallId":"c","toolName":"x"}`)}, []string{`required field "input" is missing`}},
		{"data chunk without data", []string{sse(`{"type":"data-x","id":"a"}`)}, []string{`required field "data"`}},
		{"tool output for unknown call", []string{sse(`{"type":"tool-output-available","toolCallId":"ghost","output":1}`)}, []string{`no tool part for tool call "ghost"`}},
		{"approval for unknown call", []string{sse(`{"type":"tool-approval-request","approvalId":"a","toolCallId":"ghost"}`)}, []string{`"ghost"`}},
		{"tool-input-delta without start", []string{sse(`{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"{"}`)}, []string{"no tool-input-start"}},
		{"duplicate tool call id", []string{sse(
			`{"type":"tool-input-available","toolCallId":"c","toolName":"x","input":{}}`,
			`{"type":"tool-input-available","toolCallId":"c","toolName":"x","input":{}}`)}, []string{"chunk 2", "unique"}},
		{"unclosed text", []string{sse(`{"type":"text-start","id":"t1"}`, `{"type":"finish","finishReason":"stop"}`)}, []string{`text part "t1" never closed`}},
		{"continuation with another messageId", []string{
			sse(`{"type":"start","messageId":"m1"}`, `{"type":"start-step"}`, `{"type":"tool-input-available","toolCallId":"c","toolName":"loc","input":{}}`, `{"type":"finish","finishReason":"tool-calls"}`),
			sse(`{"type":"start","messageId":"m2"}`)}, []string{"response 2, chunk 1", `"m2" differs from the continued assistant message "m1"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &aisdktest.ChatClient{Handler: &replay{bodies: tc.bodies}, Tools: map[string]aisdktest.ClientToolFunc{
				"loc": func(json.RawMessage) (any, error) { return "here", nil },
			}}
			_, err := c.Send(context.Background(), "Hi")
			if !errors.Is(err, aisdktest.ErrProtocol) {
				t.Fatalf("error %v, want a protocol error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// A server that ends every response on a server tool's result makes the
// client re-post forever; the client stops at its bound.
func TestChatClient_ReportsTheRePostLoop(t *testing.T) {
	loop := sse(`{"type":"start","messageId":"m1"}`, `{"type":"start-step"}`,
		`{"type":"tool-input-available","toolCallId":"c%d","toolName":"get_weather","input":{}}`,
		`{"type":"tool-output-available","toolCallId":"c%d","output":"sunny"}`,
		`{"type":"finish-step"}`, `{"type":"finish","finishReason":"stop"}`)
	h := &replay{}
	for i := range 5 {
		h.bodies = append(h.bodies, fmt.Sprintf(loop, i, i))
	}
	c := &aisdktest.ChatClient{Handler: h, MaxRoundTrips: 3}
	_, err := c.Send(context.Background(), "Weather?")
	if !errors.Is(err, aisdktest.ErrTooManyRoundTrips) {
		t.Fatalf("error %v, want ErrTooManyRoundTrips", err)
	}
	if len(h.requests) != 3 {
		t.Errorf("%d POSTs, want the bound 3", len(h.requests))
	}
}

func TestChatClient_ErrorChunkEndsWithStreamError(t *testing.T) {
	h := &replay{bodies: []string{sse(`{"type":"start","messageId":"m1"}`, `{"type":"text-start","id":"t1"}`,
		`{"type":"text-delta","id":"t1","delta":"Partial"}`, `{"type":"error","errorText":"model exploded"}`,
		`{"type":"text-delta","id":"nope","delta":"ignored after the error"}`)}}
	c := &aisdktest.ChatClient{Handler: h}
	msgs, err := c.Send(context.Background(), "Hi")
	var se *aisdktest.StreamError
	if !errors.As(err, &se) || se.ErrorText != "model exploded" {
		t.Fatalf("error %v, want a StreamError with the error text", err)
	}
	want := []string{"user user-1", "  text Hi", "assistant m1", "  text(streaming) Partial"}
	if diff := cmp.Diff(want, summary(msgs)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestChatClient_HTTPErrorCarriesTheBody(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"messages: empty"}`, http.StatusBadRequest)
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := &aisdktest.ChatClient{URL: srv.URL, HTTPClient: srv.Client()}
	_, err := c.Send(context.Background(), "Hi")
	var he *aisdktest.HTTPStatusError
	if !errors.As(err, &he) || he.Status != 400 || !strings.Contains(he.Body, "messages: empty") {
		t.Fatalf("error %v, want HTTP 400 with the body", err)
	}
}

func TestCompleteWithToolCalls_FollowsTheAISDKRules(t *testing.T) {
	yes, no := true, false
	asst := func(parts ...aisdk.UIPart) []aisdk.UIMessage {
		return []aisdk.UIMessage{{ID: "u", Role: "user"}, {ID: "a", Role: "assistant", Parts: parts}}
	}
	step := aisdk.UIPart{Type: "step-start"}
	done := aisdk.UIPart{Type: "tool-x", State: "output-available", Output: json.RawMessage(`1`)}
	for _, tc := range []struct {
		name string
		msgs []aisdk.UIMessage
		want bool
	}{
		{"answered client tool", asst(step, done), true},
		{"errored client tool", asst(step, aisdk.UIPart{Type: "tool-x", State: "output-error"}), true},
		{"pending call", asst(step, done, aisdk.UIPart{Type: "tool-y", State: "input-available"}), false},
		{"preliminary output", asst(step, aisdk.UIPart{Type: "tool-x", State: "output-available", Preliminary: &yes}), false},
		{"provider-executed only", asst(step, aisdk.UIPart{Type: "tool-x", State: "output-available", ProviderExecuted: &yes}), false},
		{"providerExecuted false counts", asst(step, aisdk.UIPart{Type: "tool-x", State: "output-available", ProviderExecuted: &no}), true},
		{"final text step", asst(step, done, step, aisdk.UIPart{Type: "text", State: "done"}), false},
		{"streaming text after the call", asst(step, done, aisdk.UIPart{Type: "text", State: "streaming"}), false},
		{"last message from the user", []aisdk.UIMessage{{Role: "user"}}, false},
	} {
		if got := aisdktest.CompleteWithToolCalls(tc.msgs); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	if !aisdktest.CompleteWithApprovalResponses(asst(step, done, aisdk.UIPart{Type: "tool-d", State: "approval-responded"})) {
		t.Error("approval-responded with answered tools: want complete")
	}
	if aisdktest.CompleteWithApprovalResponses(asst(step, aisdk.UIPart{Type: "tool-d", State: "approval-responded"}, aisdk.UIPart{Type: "tool-e", State: "approval-requested"})) {
		t.Error("an unanswered approval: want incomplete")
	}
}

// The client against the real aisdk.Handler, driven by simtest scripts.

func TestChatClient_AISDKHandlerClientToolRoundTrip(t *testing.T) {
	loc, err := agentloop.NewClientTool("getLocation", "The user's location.", json.RawMessage(`{"type":"object","properties":{"precision":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	weather, err := agentloop.NewTool("get_weather", "Forecast.", func(ctx context.Context, a struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + a.City, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Checking."),
			simtest.Call("call-w", "get_weather", map[string]string{"city": "Oslo"}),
			simtest.Call("call-loc", "getLocation", map[string]string{"precision": "city"})}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"call-loc": "Berlin", "call-w": "sunny"}},
			Reply: []simtest.Step{simtest.Text("Berlin, and sunny in Oslo.")}},
	)
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{weather, loc}}, NewMessageID: func() string { return "msg-1" }}
	c := &aisdktest.ChatClient{Handler: h, Tools: map[string]aisdktest.ClientToolFunc{
		"getLocation": func(json.RawMessage) (any, error) { return map[string]string{"city": "Berlin"}, nil },
	}}
	msgs, err := c.Send(context.Background(), "Where am I?")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user user-1", "  text Where am I?", "assistant msg-1", "  step-start", "  text(done) Checking.",
		`  tool-get_weather(output-available) -> "sunny in Oslo"`, `  tool-getLocation(output-available) -> {"city":"Berlin"}`,
		"  step-start", "  text(done) Berlin, and sunny in Oslo."}
	if diff := cmp.Diff(want, summary(msgs)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if n := len(c.Transcript()); n != 2 {
		t.Errorf("%d POSTs, want 2", n)
	}
}

func TestChatClient_AISDKHandlerApprovals(t *testing.T) {
	for _, approved := range []bool{true, false} {
		t.Run(fmt.Sprint("approved=", approved), func(t *testing.T) {
			var runs atomic.Int32
			del, err := agentloop.NewTool("delete_record", "Delete.", func(ctx context.Context, a struct {
				ID int `json:"id"`
			}) (string, error) {
				runs.Add(1)
				return fmt.Sprint("deleted ", a.ID), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			del.NeedsApproval = true
			model := simtest.NewModel(
				simtest.Turn{Reply: []simtest.Step{simtest.Call("call-del", "delete_record", map[string]int{"id": 7})}},
				simtest.Turn{Reply: []simtest.Step{simtest.Text("Finished.")}},
			)
			h := &aisdk.Handler{Agent: &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{del}}}
			c := &aisdktest.ChatClient{Handler: h, Approve: func(name string, input json.RawMessage) (bool, string) {
				if name != "delete_record" || string(input) != `{"id":7}` {
					t.Errorf("approval asked for %s %s", name, input)
				}
				return approved, "decided by the test"
			}}
			msgs, err := c.Send(context.Background(), "Delete record 7")
			if err != nil {
				t.Fatal(err)
			}
			tool := msgs[1].Parts[1]
			wantState, wantRuns := aisdk.StateOutputDenied, int32(0)
			if approved {
				wantState, wantRuns = aisdk.StateOutputAvailable, 1
			}
			if tool.State != wantState || runs.Load() != wantRuns {
				t.Errorf("tool part %+v after %d runs, want %s after %d", tool, runs.Load(), wantState, wantRuns)
			}
			if got := msgs[1].Parts[len(msgs[1].Parts)-1]; got.Text != "Finished." {
				t.Errorf("last part %+v, want the final text", got)
			}
		})
	}
}

func TestChatClient_AISDKHandlerErrorMidStream(t *testing.T) {
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Partial"), simtest.Fail("boom")}})
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: model}, ErrorText: func(err error) string { return err.Error() }, Logger: discardLogger}
	c := &aisdktest.ChatClient{Handler: h}
	_, err := c.Send(context.Background(), "Hi")
	var se *aisdktest.StreamError
	if !errors.As(err, &se) || !strings.Contains(se.ErrorText, "boom") {
		t.Fatalf("error %v, want a StreamError naming boom", err)
	}
}

// TestValidateChunk_AgreesWithTheJSClientSchema checks ValidateChunk against
// the verdicts of the real client's schema (uiMessageChunkSchema from
// ai@7.0.173, parsed with @ai-sdk/provider-utils safeParseJSON in Node) on
// the same chunks.
func TestValidateChunk_AgreesWithTheJSClientSchema(t *testing.T) {
	for _, tc := range []struct {
		valid bool
		chunk string
	}{
		{false, `{"type":"start","messageId":null}`},
		{true, `{"type":"start","messageMetadata":null}`},
		{true, `{"type":"start"}`},
		{false, `{"type":"start","messageId":5}`},
		{false, `{"type":"text-start"}`},
		{false, `{"type":"text-start","id":"a","providerMetadata":{"x":1}}`},
		{true, `{"type":"text-start","id":"a","providerMetadata":{"x":{"y":null}}}`},
		{false, `{"type":"text-start","id":"a","providerMetadata":{"x":null}}`},
		{false, `{"type":"text-end","id":"a","citations":null}`},
		{true, `{"type":"text-end","id":"a","citations":[]}`},
		{false, `{"type":"text-end","id":"a","citations":[{"bogus":1}]}`},
		{false, `{"type":"tool-input-available","toolCallId":"c","toolName":"x"}`},
		{true, `{"type":"tool-input-available","toolCallId":"c","toolName":"x","input":null}`},
		{false, `{"type":"tool-input-available","toolCallId":"c","toolName":"x","input":null,"providerExecuted":null}`},
		{false, `{"type":"tool-input-start","toolCallId":"c","toolName":"x","inputEncoding":"xml"}`},
		{true, `{"type":"tool-input-start","toolCallId":"c","toolName":"x","toolMetadata":{"a":1}}`},
		{false, `{"type":"tool-input-start","toolCallId":"c","toolName":"x","toolMetadata":5}`},
		{false, `{"type":"tool-output-available","toolCallId":"c"}`},
		{true, `{"type":"tool-output-available","toolCallId":"c","output":null}`},
		{false, `{"type":"tool-approval-response","approvalId":"a"}`},
		{false, `{"type":"finish","finishReason":"unknown"}`},
		{true, `{"type":"finish","finishReason":"interrupted"}`},
		{false, `{"type":"finish","finishReason":null}`},
		{false, `{"type":"data-"}`},
		{true, `{"type":"data-","data":1}`},
		{false, `{"type":"data-x","data":1,"transient":null}`},
		{true, `{"type":"custom","kind":"nodot"}`},
		{false, `{"type":"text","text":"x"}`},
		{true, `{"type":"steering-message","id":"s","parts":[]}`},
		{false, `{"type":"steering-message","id":"s","parts":[{"type":"bogus"}]}`},
		{false, `{"type":"message-metadata"}`},
		{false, `{"type":"abort","reason":null}`},
		{false, `{"type":"source-document","sourceId":"s","mediaType":"m"}`},
		{true, `{"type":"file","url":"not a url","mediaType":"m"}`},
		{false, `{"type":"error","errorText":null}`},
		{true, `{"type":"text-end","id":"a","citations":[{"source":{"type":"source","sourceType":"url","id":"s1","url":"https://x"},"startIndex":0,"endIndex":3,"citedText":"abc"}]}`},
		{true, `{"type":"text-end","id":"a","citations":[{"source":{"type":"source","sourceType":"document","id":"s1","mediaType":"text/plain","title":"T"}}]}`},
		{false, `{"type":"text-end","id":"a","citations":[{"source":{"type":"source","sourceType":"document","id":"s1","mediaType":"text/plain"}}]}`},
		{false, `{"type":"text-end","id":"a","citations":[{"source":{"type":"source","sourceType":"url","id":"s1","url":"https://x"},"startIndex":-1}]}`},
		{false, `{"type":"text-end","id":"a","citations":[{"source":{"type":"src","sourceType":"url","id":"s1","url":"https://x"}}]}`},
		{true, `{"type":"steering-message","id":"s","parts":[{"type":"text","text":"hi"},{"type":"file","mediaType":"image/png","url":"data:x","providerReference":{"a":"b"}}]}`},
		{false, `{"type":"steering-message","id":"s","parts":[{"type":"file","mediaType":"image/png","url":"data:x","providerReference":{"a":1}}]}`},
		{true, `{"type":"tool-approval-request","approvalId":"a","toolCallId":"c","approvalDescriptor":null,"isAutomatic":true}`},
		{true, `{"type":"reasoning-file","url":"u","mediaType":"m","providerMetadata":{}}`},
	} {
		err := aisdktest.ValidateChunk([]byte(tc.chunk))
		if (err == nil) != tc.valid {
			t.Errorf("ValidateChunk(%s) = %v, the JS client says valid=%v", tc.chunk, err, tc.valid)
		}
		if err != nil && !errors.Is(err, aisdktest.ErrProtocol) {
			t.Errorf("error %v does not wrap ErrProtocol", err)
		}
	}
}

// FuzzChatClient_ResponseBody feeds arbitrary response bodies to the
// client: it must never panic, and whatever it accepts holds only valid
// chunks.
func FuzzChatClient_ResponseBody(f *testing.F) {
	f.Add(sse(`{"type":"start"}`, `{"type":"text-start","id":"t"}`, `{"type":"text-delta","id":"t","delta":"x"}`, `{"type":"text-end","id":"t"}`))
	f.Add(sse(`{"type":"tool-input-start","toolCallId":"c","toolName":"loc"}`, `{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"{"}`,
		`{"type":"tool-input-available","toolCallId":"c","toolName":"loc","input":{}}`, `{"type":"tool-approval-request","approvalId":"a","toolCallId":"c"}`))
	f.Add("data:{\"type\":\"reset-step\"}\r\r: c\n\ndata: {\"type\":\"data-x\",\n" + "data: \"data\":1}\n\n")
	f.Add(sse(`{"type":"error","errorText":"x"}`, `{oops`))
	f.Add("data: {\"type\":\"text-end\",\"id\":\"a\",\"citations\":[{\"source\":{\"type\":\"source\",\"sourceType\":\"url\",\"id\":\"s\",\"url\":\"u\"}}]}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) })
		c := &aisdktest.ChatClient{Handler: h, MaxRoundTrips: 2,
			Tools:   map[string]aisdktest.ClientToolFunc{"loc": func(json.RawMessage) (any, error) { return 1, nil }},
			Approve: func(string, json.RawMessage) (bool, string) { return true, "" }}
		_, err := c.Send(context.Background(), "hi")
		if err != nil {
			return
		}
		for _, ex := range c.Transcript() {
			for _, ch := range ex.Chunks {
				if verr := aisdktest.ValidateChunk(ch); verr != nil {
					t.Fatalf("accepted an invalid chunk %s: %v", ch, verr)
				}
			}
		}
		if _, err := json.Marshal(c.Messages()); err != nil {
			t.Fatalf("the built messages do not marshal: %v", err)
		}
	})
}

// Over a real loopback connection, a client tool that fails is posted back
// as output-error and the model sees the error text.
func TestChatClient_URLClientToolErrorReachesTheModel(t *testing.T) {
	form, err := agentloop.NewClientTool("form", "Ask the user.", nil)
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call-f", "form", map[string]string{})}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"call-f": "user closed the form"}}, Reply: []simtest.Step{simtest.Text("Never mind.")}},
	)
	srv := httptest.NewServer(&aisdk.Handler{Agent: &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{form}}})
	defer srv.Close()
	c := &aisdktest.ChatClient{URL: srv.URL + "/api/chat", HTTPClient: srv.Client(), Tools: map[string]aisdktest.ClientToolFunc{
		"form": func(json.RawMessage) (any, error) { return nil, errors.New("user closed the form") },
	}}
	msgs, err := c.Send(context.Background(), "Fill the form")
	if err != nil {
		t.Fatal(err)
	}
	got := summary(msgs)
	want := []string{"  step-start", "  tool-form(output-error) ! user closed the form", "  step-start", "  text(done) Never mind."}
	if diff := cmp.Diff(want, got[3:]); diff != "" {
		t.Errorf("assistant parts (-want +got):\n%s", diff)
	}
}

// A client tool that needs approval is handed to the client once the user
// approved it: the continuation announces the call again, the client runs
// it and posts the output, and the model answers from it, all in one
// assistant message.
func TestChatClient_AISDKHandlerApprovedClientToolRunsOnTheClient(t *testing.T) {
	loc, err := agentloop.NewClientTool("getLocation", "The user's location.", json.RawMessage(`{"type":"object","properties":{"precision":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	loc.NeedsApproval = true
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call-loc", "getLocation", map[string]string{"precision": "city"})}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"call-loc": "Berlin"}}, Reply: []simtest.Step{simtest.Text("You are in Berlin.")}},
	)
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{loc}}}
	c := &aisdktest.ChatClient{
		Handler: h,
		Approve: func(string, json.RawMessage) (bool, string) { return true, "" },
		Tools: map[string]aisdktest.ClientToolFunc{"getLocation": func(json.RawMessage) (any, error) {
			return map[string]string{"city": "Berlin"}, nil
		}},
	}
	msgs, err := c.Send(context.Background(), "Where am I?")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want the user message and one assistant message", len(msgs))
	}
	var got []string
	for _, p := range msgs[1].Parts {
		got = append(got, p.Type+"("+string(p.State)+")")
	}
	want := []string{"step-start()", "tool-getLocation(output-available)", "step-start()", "text(done)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("assistant parts (-want +got):\n%s", diff)
	}
	if model.Remaining() != 0 {
		t.Errorf("%d model turns left, want the answer after the client's output", model.Remaining())
	}
}

// The AI SDK client drops an event the stream ends inside of (no blank line
// after it), so a server that forgets the last blank line loses its last
// chunk; the ChatClient reports it.
func TestChatClient_ReportsAnEventTheStreamEndsInside(t *testing.T) {
	body := "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"finish\",\"finishReason\":\"stop\"}\n"
	c := &aisdktest.ChatClient{Handler: &replay{bodies: []string{body}}}
	_, err := c.Send(context.Background(), "Hi")
	var ce *aisdktest.ChunkError
	if !errors.As(err, &ce) || ce.Index != 2 || !strings.Contains(ce.Reason, "drops it") {
		t.Fatalf("error %v, want a ChunkError for chunk 2 saying the client drops it", err)
	}
}
