package telemetry_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/telemetry"
)

// redactSecrets replaces "s3cr3t" in every text, argument and result.
func redactSecrets(_ context.Context, m agentloop.Message) agentloop.Message {
	r := strings.NewReplacer("s3cr3t", "[redacted]")
	for i, p := range m.Parts {
		m.Parts[i].Text = r.Replace(p.Text)
		if p.ToolCall != nil {
			p.ToolCall.Args = json.RawMessage(r.Replace(string(p.ToolCall.Args)))
		}
		if p.ToolResult != nil {
			p.ToolResult.Content = r.Replace(p.ToolResult.Content)
		}
	}
	return m
}

func TestContentFollowsTheConventionsShapesWhenOptedInAndIsRedacted(t *testing.T) {
	h := newHarness(t, telemetry.Options{RecordContent: true, Redact: redactSecrets})
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Reasoning("Look it up."), simtest.Call("c1", "lookup", map[string]any{"q": "s3cr3t"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Found s3cr3t.")}},
	)
	lookup, err := agentloop.NewRawTool("lookup", "", nil, func(context.Context, json.RawMessage) (string, error) {
		return `{"hit":"s3cr3t"}`, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentloop.Agent{Model: model, System: "Keep s3cr3t safe.", Tools: []*agentloop.Tool{lookup}, Hooks: h.hooks}
	history := agentloop.History{agentloop.UserMessage("find s3cr3t")}
	last, err := drain(t, agent.Stream(context.Background(), history, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range h.spans.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "s3cr3t") {
				t.Errorf("span %q: %s holds the secret: %s", s.Name(), kv.Key, kv.Value.Emit())
			}
		}
	}
	if got := last.(agentloop.Final).History[0].Text(); got != "find s3cr3t" {
		t.Errorf("redaction changed the run's history: %q", got)
	}

	chats := h.ended("chat")
	wantJSON := func(span interface{ Name() string }, key string, got, want string) {
		t.Helper()
		if g, w := mustJSON(t, got), mustJSON(t, want); !reflect.DeepEqual(g, w) {
			t.Errorf("%s %s =\n%s\nwant\n%s", span.Name(), key, got, want)
		}
	}
	get := func(i int, key string) string {
		t.Helper()
		v, ok := attr(chats[i], key)
		if !ok {
			t.Fatalf("chat %d has no %s", i, key)
		}
		return v.AsString()
	}
	wantJSON(chats[0], "system", get(0, "gen_ai.system_instructions"), `[{"type":"text","content":"Keep [redacted] safe."}]`)
	wantJSON(chats[0], "input", get(0, "gen_ai.input.messages"), `[{"role":"user","parts":[{"type":"text","content":"find [redacted]"}]}]`)
	wantJSON(chats[0], "output", get(0, "gen_ai.output.messages"), `[{"role":"assistant","finish_reason":"tool_call","parts":[
		{"type":"reasoning","content":"Look it up."},
		{"type":"tool_call","id":"c1","name":"lookup","arguments":{"q":"[redacted]"}}]}]`)
	wantJSON(chats[1], "input", get(1, "gen_ai.input.messages"), `[
		{"role":"user","parts":[{"type":"text","content":"find [redacted]"}]},
		{"role":"assistant","parts":[{"type":"reasoning","content":"Look it up."},
			{"type":"tool_call","id":"c1","name":"lookup","arguments":{"q":"[redacted]"}}]},
		{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"{\"hit\":\"[redacted]\"}"}]}]`)
	wantJSON(chats[1], "output", get(1, "gen_ai.output.messages"),
		`[{"role":"assistant","finish_reason":"stop","parts":[{"type":"text","content":"Found [redacted]."}]}]`)

	tool := h.one("execute_tool lookup")
	args, _ := attr(tool, "gen_ai.tool.call.arguments")
	wantJSON(tool, "arguments", args.AsString(), `{"q":"[redacted]"}`)
	res, _ := attr(tool, "gen_ai.tool.call.result")
	wantJSON(tool, "result", res.AsString(), `{"hit":"[redacted]"}`)

	root := h.one("invoke_agent")
	in, _ := attr(root, "gen_ai.input.messages")
	wantJSON(root, "input", in.AsString(), `[{"role":"user","parts":[{"type":"text","content":"find [redacted]"}]}]`)
	out, _ := attr(root, "gen_ai.output.messages")
	wantJSON(root, "output", out.AsString(), `[{"role":"assistant","finish_reason":"stop","parts":[{"type":"text","content":"Found [redacted]."}]}]`)
}

func TestContentOfFilesApprovalsAndInvalidArguments(t *testing.T) {
	h := newHarness(t, telemetry.Options{RecordContent: true})
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}})
	agent := &agentloop.Agent{Model: model, Hooks: h.hooks}
	history := agentloop.History{
		{Role: agentloop.RoleUser, Parts: []agentloop.Part{
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", URL: "https://example.test/a.png"}},
			{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "audio/wav", Data: []byte("RIFF")}},
		}},
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "rm", Args: json.RawMessage(`{"id":`)}},
			{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c1", ID: "ap1"}},
		}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{
			{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c1", ID: "ap1", Approved: false, Reason: "no"}},
			{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Name: "rm", Content: "denied", IsError: true}},
		}},
		agentloop.UserMessage("again"),
	}
	if _, err := drain(t, agent.Stream(context.Background(), history, nil)); err != nil {
		t.Fatal(err)
	}
	in, _ := attr(h.one("chat"), "gen_ai.input.messages")
	want := `[
		{"role":"user","parts":[
			{"type":"uri","mime_type":"image/png","modality":"image","uri":"https://example.test/a.png"},
			{"type":"blob","mime_type":"audio/wav","modality":"audio","content":"UklGRg=="}]},
		{"role":"assistant","parts":[
			{"type":"tool_call","id":"c1","name":"rm","arguments":"{\"id\":"},
			{"type":"approval_request","id":"ap1","tool_call_id":"c1"}]},
		{"role":"tool","parts":[
			{"type":"approval_response","id":"ap1","tool_call_id":"c1","approved":false,"reason":"no"},
			{"type":"tool_call_response","id":"c1","response":"denied"}]},
		{"role":"user","parts":[{"type":"text","content":"again"}]}]`
	if g, w := mustJSON(t, in.AsString()), mustJSON(t, want); !reflect.DeepEqual(g, w) {
		t.Errorf("input messages =\n%s\nwant\n%s", in.AsString(), want)
	}
}

func TestRedactCanLeaveMessagesOut(t *testing.T) {
	dropUsers := func(_ context.Context, m agentloop.Message) agentloop.Message {
		if m.Role == agentloop.RoleUser {
			m.Parts = nil
		}
		return m
	}
	h := newHarness(t, telemetry.Options{RecordContent: true, Redact: dropUsers})
	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("hi")}}), Hooks: h.hooks}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("private")}, nil)); err != nil {
		t.Fatal(err)
	}
	in, _ := attr(h.one("chat"), "gen_ai.input.messages")
	if in.AsString() != "[]" {
		t.Errorf("input messages %s, want [] (the user message left out)", in.AsString())
	}
}

func TestContentIsNotBuiltForSpansThatAreNotSampled(t *testing.T) {
	var calls int
	count := func(_ context.Context, m agentloop.Message) agentloop.Message { calls++; return m }
	h := newHarness(t, telemetry.Options{RecordContent: true, Redact: count}, sdktrace.WithSampler(sdktrace.NeverSample()))
	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("hi")}}), Hooks: h.hooks}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Errorf("Redact was called %d times for spans nobody records", calls)
	}
}
