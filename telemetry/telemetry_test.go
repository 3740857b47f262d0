package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"maps"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/syncbuf"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/telemetry"
)

var gpt = agentloop.ModelInfo{Provider: "openai", Model: "gpt-test"}

// concurrentTools returns two tools, a and b, that each return only once
// both are running: a run can finish only if it runs them concurrently.
func concurrentTools(t *testing.T) []*agentloop.Tool {
	t.Helper()
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	fn := func(ctx context.Context, _ json.RawMessage) (string, error) {
		arrived.Done()
		select {
		case <-both:
			return `"ok"`, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	var tools []*agentloop.Tool
	for _, name := range []string{"a", "b"} {
		tool, err := agentloop.NewRawTool(name, "tool "+name, nil, fn)
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	return tools
}

func TestRunWithTwoConcurrentToolsNestsEverySpanUnderTheRunSpan(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	temp, topP := 0.2, 0.9
	model := describedModel{simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Checking."), simtest.Call("call_a", "a", map[string]any{}),
			simtest.Call("call_b", "b", map[string]any{}), simtest.Usage(10, 5)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Both ok."), simtest.Usage(30, 4)}},
	), gpt}
	agent := &agentloop.Agent{Model: model, Name: "helper", Tools: concurrentTools(t), Hooks: h.hooks,
		Settings: agentloop.Settings{MaxTokens: 100, Temperature: &temp, TopP: &topP}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a deadlock fails, not hangs
	defer cancel()
	last, err := drain(t, agent.Stream(ctx, agentloop.History{agentloop.UserMessage("go")}, &agentloop.RunOptions{ConversationID: "conv-1"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := last.(agentloop.Final); !ok {
		t.Fatalf("last item %T, want Final", last)
	}

	root := h.one("invoke_agent helper")
	if root.Parent().IsValid() {
		t.Errorf("invoke_agent has a parent %v; want a root span", root.Parent())
	}
	if root.SpanKind() != trace.SpanKindInternal {
		t.Errorf("invoke_agent kind %v, want internal", root.SpanKind())
	}
	wantAttrs(t, root, map[string]any{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test",
		"gen_ai.agent.name": "helper", "gen_ai.conversation.id": "conv-1",
		"gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 9, "agentloop.run.turns": 2,
	})
	wantNoAttrs(t, root, "error.type", "agentloop.run.paused", "agentloop.run.resumed")
	if root.Status().Code != codes.Unset {
		t.Errorf("invoke_agent status %v, want unset", root.Status())
	}

	chats := h.ended("chat gpt-test")
	if len(chats) != 2 {
		t.Fatalf("%d chat spans, want 2: %v", len(chats), h.names())
	}
	for i, c := range chats {
		wantChild(t, root, c)
		if c.SpanKind() != trace.SpanKindClient {
			t.Errorf("chat kind %v, want client", c.SpanKind())
		}
		wantAttrs(t, c, map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test",
			"gen_ai.conversation.id": "conv-1", "gen_ai.request.stream": true,
			"gen_ai.request.max_tokens": 100, "gen_ai.request.temperature": 0.2, "gen_ai.request.top_p": 0.9,
		})
		if v, ok := attr(c, "gen_ai.response.time_to_first_chunk"); !ok || v.AsFloat64() <= 0 ||
			v.AsFloat64() > c.EndTime().Sub(c.StartTime()).Seconds() {
			t.Errorf("chat %d: time_to_first_chunk = %v (set: %v); want within the span's %v", i, v.AsFloat64(), ok, c.EndTime().Sub(c.StartTime()))
		}
	}
	wantAttrs(t, chats[0], map[string]any{"gen_ai.response.finish_reasons": []string{"tool_call"},
		"gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5})
	wantAttrs(t, chats[1], map[string]any{"gen_ai.response.finish_reasons": []string{"stop"},
		"gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 4})

	a, b := h.one("execute_tool a"), h.one("execute_tool b")
	wantChild(t, root, a)
	wantChild(t, root, b)
	wantAttrs(t, a, map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "a",
		"gen_ai.tool.call.id": "call_a", "gen_ai.tool.description": "tool a"})
	wantAttrs(t, b, map[string]any{"gen_ai.tool.name": "b", "gen_ai.tool.call.id": "call_b", "gen_ai.tool.description": "tool b"})
	if !a.StartTime().Before(b.EndTime()) || !b.StartTime().Before(a.EndTime()) {
		t.Errorf("tool spans do not overlap: a %v–%v, b %v–%v", a.StartTime(), a.EndTime(), b.StartTime(), b.EndTime())
	}
	if a.SpanKind() != trace.SpanKindInternal {
		t.Errorf("execute_tool kind %v, want internal", a.SpanKind())
	}
	// The tools ran between the two model calls.
	if a.StartTime().Before(chats[0].EndTime()) || chats[1].StartTime().Before(b.EndTime()) {
		t.Errorf("tool spans are not between the chat spans")
	}
}

func TestContentIsNotRecordedByDefault(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("c1", "a", map[string]any{"secret": "s3cr3t"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("the answer")}},
	)
	tool, err := agentloop.NewRawTool("a", "", nil, func(context.Context, json.RawMessage) (string, error) { return "tool output", nil })
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentloop.Agent{Model: model, System: "be brief", Tools: []*agentloop.Tool{tool}, Hooks: h.hooks}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hello")}, nil)); err != nil {
		t.Fatal(err)
	}
	if n := len(h.spans.Ended()); n != 4 {
		t.Fatalf("%d spans, want 4: %v", n, h.names())
	}
	for _, s := range h.spans.Ended() {
		wantNoAttrs(t, s, "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
			"gen_ai.tool.call.arguments", "gen_ai.tool.call.result")
		for _, kv := range s.Attributes() {
			for _, secret := range []string{"s3cr3t", "hello", "be brief", "tool output", "the answer"} {
				if v := kv.Value.Emit(); v != "" && strings.Contains(v, secret) {
					t.Errorf("span %q: %s holds %q", s.Name(), kv.Key, secret)
				}
			}
		}
	}
}

func TestModelWithoutModelInfoIsNamedByItsPackage(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("hi")}}), Hooks: h.hooks}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hi")}, nil)); err != nil {
		t.Fatal(err)
	}
	root, chat := h.one("invoke_agent"), h.one("chat")
	wantAttrs(t, root, map[string]any{"gen_ai.provider.name": "simtest"})
	wantAttrs(t, chat, map[string]any{"gen_ai.provider.name": "simtest"})
	wantNoAttrs(t, chat, "gen_ai.request.model", "gen_ai.conversation.id", "gen_ai.agent.name")
	wantNoAttrs(t, root, "gen_ai.request.model", "gen_ai.conversation.id", "gen_ai.agent.name")
}

func TestPausedRunEndsItsSpanAsPausedAndTheResumedRunLinksToIt(t *testing.T) {
	h := newHarness(t, telemetry.Options{Pauses: memstore.New(memstore.Options{})})
	pick, err := agentloop.NewClientTool("pick", "the user picks", nil)
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_pick", "pick", map[string]any{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("You picked blue.")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{pick}, Hooks: h.hooks}
	conv := &agentloop.RunOptions{ConversationID: "conv-7"}

	last, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("pick one")}, conv))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := last.(agentloop.Pending)
	if !ok {
		t.Fatalf("last item %T, want Pending", last)
	}
	paused := h.one("invoke_agent")
	wantAttrs(t, paused, map[string]any{"agentloop.run.paused": true, "agentloop.run.pending.tool_call.ids": []string{"call_pick"},
		"agentloop.run.pending.client_tool_calls": 1, "agentloop.run.pending.approvals": 0})
	if paused.Status().Code != codes.Unset {
		t.Errorf("paused run status %v, want unset (a pause is not an error)", paused.Status())
	}
	if len(h.ended("execute_tool pick")) != 0 {
		t.Errorf("a client tool got an execute_tool span on the server")
	}

	resumed, err := p.History.AppendResults(agentloop.ToolResult{CallID: "call_pick", Content: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, agent.Stream(context.Background(), resumed, conv)); err != nil {
		t.Fatal(err)
	}
	runs := h.ended("invoke_agent")
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	second := runs[1]
	wantAttrs(t, second, map[string]any{"agentloop.run.resumed": true})
	wantNoAttrs(t, second, "agentloop.run.paused")
	links := second.Links()
	if len(links) != 1 || links[0].SpanContext.SpanID() != paused.SpanContext().SpanID() ||
		links[0].SpanContext.TraceID() != paused.SpanContext().TraceID() {
		t.Fatalf("resumed run links %+v, want one link to the paused run's span %s", links, paused.SpanContext().SpanID())
	}
	if len(links[0].Attributes) != 1 || links[0].Attributes[0].Key != "agentloop.link.paused_run" {
		t.Errorf("link attributes %v, want agentloop.link.paused_run", links[0].Attributes)
	}
}

func TestResumedRunOfAnotherConversationDoesNotLink(t *testing.T) {
	h := newHarness(t, telemetry.Options{Pauses: memstore.New(memstore.Options{})})
	pick, err := agentloop.NewClientTool("pick", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentloop.Agent{Model: simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		if len(req.Messages.Unanswered()) == 0 && req.Messages[len(req.Messages)-1].Role == agentloop.RoleUser {
			return []simtest.Step{simtest.Call("call_1", "pick", map[string]any{})}, nil
		}
		return []simtest.Step{simtest.Text("done")}, nil
	}), Tools: []*agentloop.Tool{pick}, Hooks: h.hooks}
	last, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, &agentloop.RunOptions{ConversationID: "one"}))
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := last.(agentloop.Pending).History.AppendResults(agentloop.ToolResult{CallID: "call_1", Content: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, agent.Stream(context.Background(), resumed, &agentloop.RunOptions{ConversationID: "two"})); err != nil {
		t.Fatal(err)
	}
	runs := h.ended("invoke_agent")
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	if links := runs[1].Links(); len(links) != 0 {
		t.Errorf("a run of conversation two links to %v, a paused run of conversation one", links)
	}
}

// failingDocs is a store that fails every call, like a database that is
// down; load tells whether reads fail too.
type failingDocs struct{ load bool }

func (f failingDocs) GetDoc(context.Context, string, string) (*store.Doc, error) {
	if f.load {
		return nil, errors.New("db down")
	}
	return nil, store.ErrNotFound
}

func (failingDocs) PutDoc(context.Context, *store.Doc) error { return errors.New("db down") }

func (failingDocs) DeleteDoc(context.Context, string, string, int64) error {
	return errors.New("db down")
}

func TestPausesSharedByTwoHooksLinkAcrossThem(t *testing.T) {
	// Two NewHooks stand for two processes sharing one store.
	shared := memstore.New(memstore.Options{})
	t.Cleanup(func() { _ = shared.Close() })
	open := func() store.Docs { return shared }
	first, second := newHarness(t, telemetry.Options{Pauses: open()}), newHarness(t, telemetry.Options{Pauses: open()})
	approve, err := agentloop.NewRawTool("delete", "Deletes a record.", nil, func(context.Context, json.RawMessage) (string, error) { return "deleted", nil })
	if err != nil {
		t.Fatal(err)
	}
	approve.NeedsApproval = true
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_del", "delete", map[string]any{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Deleted.")}},
	)
	agentA := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{approve}, Hooks: first.hooks}
	agentB := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{approve}, Hooks: second.hooks}
	conv := &agentloop.RunOptions{ConversationID: "c"}
	last, err := drain(t, agentA.Stream(context.Background(), agentloop.History{agentloop.UserMessage("delete it")}, conv))
	if err != nil {
		t.Fatal(err)
	}
	p := last.(agentloop.Pending)
	paused := first.one("invoke_agent")
	wantAttrs(t, paused, map[string]any{"agentloop.run.paused": true, "agentloop.run.pending.approvals": 1})
	resumed, err := p.History.AppendApprovals(agentloop.Approval{CallID: "call_del", Approved: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, agentB.Stream(context.Background(), resumed, conv)); err != nil {
		t.Fatal(err)
	}
	run := second.one("invoke_agent")
	if links := run.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != paused.SpanContext().SpanID() {
		t.Errorf("resumed run links %v, want the paused run %s", links, paused.SpanContext().SpanID())
	}
	// The approved call runs before the resumed run's first model call.
	tool := second.one("execute_tool delete")
	wantChild(t, run, tool)
	wantAttrs(t, tool, map[string]any{"gen_ai.tool.call.id": "call_del", "gen_ai.tool.description": "Deletes a record."})
}

func TestPausesErrorsAreLoggedAndCostOnlyTheLink(t *testing.T) {
	logs := &syncbuf.Buffer{}
	h := newHarness(t, telemetry.Options{Pauses: failingDocs{load: true}, Logger: newTextLogger(logs)})
	pick, err := agentloop.NewClientTool("pick", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_p", "pick", map[string]any{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{pick}, Hooks: h.hooks}
	last, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil))
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := last.(agentloop.Pending).History.AppendResults(agentloop.ToolResult{CallID: "call_p", Content: "y"})
	if err != nil {
		t.Fatal(err)
	}
	final, err := drain(t, agent.Stream(context.Background(), resumed, nil))
	if err != nil {
		t.Fatalf("failing Pauses failed the run: %v", err)
	}
	if _, ok := final.(agentloop.Final); !ok {
		t.Fatalf("last item %T, want Final", final)
	}
	out := logs.String()
	for _, want := range []string{"could not save", "could not load", "db down", "calls=[call_p]"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestPausesErrorsGoToTheAgentsLoggerWithoutOneOfTheirOwn(t *testing.T) {
	logs := &syncbuf.Buffer{}
	h := newHarness(t, telemetry.Options{Pauses: failingDocs{}})
	pick, err := agentloop.NewClientTool("pick", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Call("call_p", "pick", map[string]any{})}}),
		Tools: []*agentloop.Tool{pick}, Hooks: h.hooks, Logger: newTextLogger(logs)}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "could not save") {
		t.Errorf("the agent's log lacks the store error:\n%s", logs.String())
	}
}

func TestCancelledRunMarksTheRunAndTheCutToolAsCancelled(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	started := make(chan struct{})
	wait, err := agentloop.NewRawTool("wait", "", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Call("call_w", "wait", map[string]any{})}})
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{wait}, Hooks: h.hooks}
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { <-started; cancel(agentloop.Cancel("the user pressed stop")) }()
	_, err = drain(t, agent.Stream(ctx, agentloop.History{agentloop.UserMessage("wait")}, nil))
	if !errors.Is(err, agentloop.ErrCancelled) {
		t.Fatalf("run error %v, want a cancel", err)
	}
	root, tool := h.one("invoke_agent"), h.one("execute_tool wait")
	wantChild(t, root, tool)
	for _, s := range []struct {
		name string
		code codes.Code
		desc string
	}{{root.Name(), root.Status().Code, root.Status().Description}, {tool.Name(), tool.Status().Code, tool.Status().Description}} {
		if s.code != codes.Error || !strings.Contains(s.desc, "the user pressed stop") {
			t.Errorf("%s status %v %q, want an error naming the reason", s.name, s.code, s.desc)
		}
	}
	wantAttrs(t, root, map[string]any{"error.type": "cancelled"})
	wantAttrs(t, tool, map[string]any{"error.type": "cancelled"})
	wantAttrs(t, h.one("chat"), map[string]any{"gen_ai.response.finish_reasons": []string{"tool_call"}})
}

func TestCancelDuringTheModelCallMarksTheChatSpanAsCancelled(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Let me"), simtest.Hang()}}), Hooks: h.hooks}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var err error
	for item, e := range agent.Stream(ctx, agentloop.History{agentloop.UserMessage("x")}, nil) {
		if _, ok := item.(agentloop.TextDelta); ok {
			cancel(agentloop.Cancel("stop")) // the model hangs after its first words
		}
		err = e
	}
	if !errors.Is(err, agentloop.ErrCancelled) {
		t.Fatalf("run error %v, want a cancel", err)
	}
	chat := h.one("chat")
	wantChild(t, h.one("invoke_agent"), chat)
	if chat.Status().Code != codes.Error {
		t.Errorf("chat status %v, want error", chat.Status())
	}
	wantAttrs(t, chat, map[string]any{"error.type": "cancelled", "gen_ai.response.finish_reasons": []string{"error"}})
	wantAttrs(t, h.one("invoke_agent"), map[string]any{"error.type": "cancelled"})
}

func TestModelErrorFailsTheChatAndRunSpansWithTheProviderCode(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	model := describedModel{agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			yield(nil, &providers.APIError{Provider: "openai", StatusCode: 429, Message: "slow down"})
		}
	}), gpt}
	agent := &agentloop.Agent{Model: model, Hooks: h.hooks}
	_, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil))
	if !errors.Is(err, providers.ErrRateLimited) {
		t.Fatalf("run error %v, want the rate limit", err)
	}
	chat, root := h.one("chat gpt-test"), h.one("invoke_agent")
	for _, s := range []struct {
		name   string
		status codes.Code
		desc   string
	}{{chat.Name(), chat.Status().Code, chat.Status().Description}, {root.Name(), root.Status().Code, root.Status().Description}} {
		if s.status != codes.Error || !strings.Contains(s.desc, "slow down") {
			t.Errorf("%s status %v %q, want an error with the provider's message", s.name, s.status, s.desc)
		}
	}
	wantAttrs(t, chat, map[string]any{"error.type": "429", "gen_ai.response.finish_reasons": []string{"error"}})
	wantAttrs(t, root, map[string]any{"error.type": "429"})
}

func TestToolPanicFailsItsSpanWithTheStackAndTheRunGoesOn(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	boom, err := agentloop.NewRawTool("boom", "", nil, func(context.Context, json.RawMessage) (string, error) {
		panic("kaboom")
	})
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_b", "boom", map[string]any{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("The tool crashed.")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{boom}, Hooks: h.hooks}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	tool := h.one("execute_tool boom")
	if tool.Status().Code != codes.Error || !strings.Contains(tool.Status().Description, "kaboom") {
		t.Errorf("tool status %v, want an error naming the panic", tool.Status())
	}
	wantAttrs(t, tool, map[string]any{"error.type": "panic"})
	var stack string
	for _, e := range tool.Events() {
		if e.Name == "exception" {
			for _, kv := range e.Attributes {
				if kv.Key == "exception.stacktrace" {
					stack = kv.Value.AsString()
				}
			}
		}
	}
	if !strings.Contains(stack, "telemetry_test.TestToolPanicFailsItsSpanWithTheStackAndTheRunGoesOn") {
		t.Errorf("exception event's stack does not show the panicking tool:\n%s", stack)
	}
	root := h.one("invoke_agent")
	if root.Status().Code != codes.Unset {
		t.Errorf("the run's status %v; a tool error is a result, the run succeeded", root.Status())
	}
}

func TestToolErrorsAreClassified(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, telemetry.Options{})
		failing, err := agentloop.NewRawTool("failing", "", nil, func(context.Context, json.RawMessage) (string, error) {
			return "", errors.New("disk full")
		})
		require.NoError(t, err)
		slow, err := agentloop.NewRawTool("slow", "", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		})
		require.NoError(t, err)
		slow.Timeout = time.Minute // the call times out on the bubble's fake clock
		typed, err := agentloop.NewTool("typed", "", func(context.Context, struct {
			N int `json:"n"`
		}) (int, error) {
			return 1, nil
		})
		require.NoError(t, err)
		model := simtest.NewModel(
			simtest.Turn{Reply: []simtest.Step{
				simtest.Call("c1", "failing", map[string]any{}),
				simtest.Call("c2", "slow", map[string]any{}),
				simtest.Call("c3", "nope", map[string]any{}),
				simtest.Call("c4", "typed", map[string]any{"n": "not a number"}),
			}},
			simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
		)
		agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{failing, slow, typed}, Hooks: h.hooks}
		_, err = drain(t, agent.Stream(t.Context(), agentloop.History{agentloop.UserMessage("x")}, nil))
		require.NoError(t, err)
		for name, want := range map[string]string{
			"execute_tool failing": "_OTHER", "execute_tool slow": "timeout",
			"execute_tool nope": "unknown_tool", "execute_tool typed": "invalid_arguments",
		} {
			s := h.one(name)
			if s.Status().Code != codes.Error {
				t.Errorf("%s: status %v, want error", name, s.Status())
			}
			wantAttrs(t, s, map[string]any{"error.type": want})
		}
	})
}

func TestAToolWhoseBeforeToolCallAnEarlierHookSkippedStillGetsASpan(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	cached := &agentloop.Hooks{BeforeToolCall: func(_ context.Context, call *agentloop.ToolCall) (*agentloop.ToolResult, error) {
		return &agentloop.ToolResult{Content: "from cache"}, nil
	}}
	tool, err := agentloop.NewRawTool("a", "", nil, func(context.Context, json.RawMessage) (string, error) {
		t.Error("the tool ran; the cache hook should have answered")
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("c1", "a", map[string]any{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}, Hooks: agentloop.ComposeHooks(cached, h.hooks)}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	span := h.one("execute_tool a")
	wantChild(t, h.one("invoke_agent"), span)
	wantAttrs(t, span, map[string]any{"gen_ai.tool.call.id": "c1"})
}

func TestConsumerThatStopsRangingEndsEverySpan(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	agent := &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("one two three")}}), Hooks: h.hooks}
	for item := range agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil) {
		if _, ok := item.(agentloop.TextDelta); ok {
			break
		}
	}
	root := h.one("invoke_agent")
	wantAttrs(t, root, map[string]any{"error.type": "stopped"})
	wantChild(t, root, h.one("chat"))
}

func TestWrapModelGivesTheModelTheChatSpan(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	var seen []trace.SpanContext
	inner := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("hi")}})
	spy := describedModel{agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		seen = append(seen, trace.SpanContextFromContext(ctx))
		return inner.Stream(ctx, req)
	}), gpt}
	wrapped := telemetry.WrapModel(spy)
	if info := wrapped.(agentloop.ModelDescriber).ModelInfo(); info != gpt {
		t.Errorf("wrapped ModelInfo %+v, want the model's %+v", info, gpt)
	}
	agent := &agentloop.Agent{Model: wrapped, Hooks: h.hooks}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	chat := h.one("chat gpt-test")
	if len(seen) != 1 || seen[0].SpanID() != chat.SpanContext().SpanID() {
		t.Errorf("the model saw span %v, want the chat span %s", seen, chat.SpanContext().SpanID())
	}

	// Without the hooks, the model gets the caller's context as it is.
	seen = nil
	inner = simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("hi")}})
	ctx, span := h.tracerProvider().Tracer("app").Start(context.Background(), "app")
	defer span.End()
	bare := &agentloop.Agent{Model: wrapped}
	if _, err := drain(t, bare.Stream(ctx, agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].SpanID() != span.SpanContext().SpanID() {
		t.Errorf("without hooks the model saw %v, want the caller's span", seen)
	}
}

// What a tool does nests under its execute_tool span: the tool's func gets
// the span in its context, also when calls run concurrently.
func TestToolFuncGetsItsExecuteToolSpan(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	var mu sync.Mutex
	seen := map[string]trace.SpanID{}
	tool, err := agentloop.NewRawTool("lookup", "", nil, func(ctx context.Context, args json.RawMessage) (string, error) {
		mu.Lock()
		seen[string(args)] = trace.SpanContextFromContext(ctx).SpanID()
		mu.Unlock()
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("c1", "lookup", `{"q":1}`), simtest.Call("c2", "lookup", `{"q":2}`)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("done")}})
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}, Hooks: h.hooks}
	if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("x")}, nil)); err != nil {
		t.Fatal(err)
	}
	for args, id := range map[string]string{`{"q":1}`: "c1", `{"q":2}`: "c2"} {
		var span trace.SpanID
		for _, s := range h.ended("execute_tool lookup") {
			for _, a := range s.Attributes() {
				if a.Key == "gen_ai.tool.call.id" && a.Value.AsString() == id {
					span = s.SpanContext().SpanID()
				}
			}
		}
		if !span.IsValid() || seen[args] != span {
			t.Errorf("call %s: the tool saw span %s, want its execute_tool span %s", id, seen[args], span)
		}
	}
}

func TestCacheAndReasoningTokensAreOnTheChatAndRunSpansOnlyWhenReported(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	usages := []agentloop.Usage{
		{Input: 2000, Output: 50, CacheRead: 1500, CacheWrite: 400, Reasoning: 20},
		{Input: 10, Output: 5},
	}
	calls := 0 // the runs are one after the other
	model := describedModel{agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		u := usages[calls]
		calls++
		return func(yield func(agentloop.Chunk, error) bool) {
			_ = yield(agentloop.TextDelta{Text: "ok"}, nil) && yield(u, nil)
		}
	}), agentloop.ModelInfo{Provider: "anthropic", Model: "claude-test"}}
	agent := &agentloop.Agent{Model: model, Name: "cached", Hooks: h.hooks}
	for range usages {
		if _, err := drain(t, agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("go")}, nil)); err != nil {
			t.Fatal(err)
		}
	}
	chats := h.ended("chat claude-test")
	if len(chats) != 2 {
		t.Fatalf("%d chat spans, want 2: %v", len(chats), h.names())
	}
	want := map[string]any{"gen_ai.usage.input_tokens": 2000, "gen_ai.usage.output_tokens": 50,
		"gen_ai.usage.cache_read.input_tokens": 1500, "gen_ai.usage.cache_creation.input_tokens": 400,
		"gen_ai.usage.reasoning.output_tokens": 20}
	wantAttrs(t, chats[0], want)
	wantAttrs(t, h.ended("invoke_agent cached")[0], want)
	for _, s := range []sdktrace.ReadOnlySpan{chats[1], h.ended("invoke_agent cached")[1]} {
		wantAttrs(t, s, map[string]any{"gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5})
		wantNoAttrs(t, s, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.reasoning.output_tokens")
	}
}

// design.md §16, §3.10: a sub-agent's run ([agentloop.AgentTool]) traced
// with the same hooks is an invoke_agent span, named after the sub-agent
// and carrying gen_ai.agent.name, under the execute_tool span of the call
// that ran it; its chat spans nest under it. The sub-run's items that
// reach the calling run as Nested items get no span of their own.
func TestSubAgentsRunNestsUnderItsCallsExecuteToolSpan(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	researcher := &agentloop.Agent{Name: "researcher", Model: describedModel{simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Sunny in Berlin."), simtest.Usage(7, 3)}},
	), gpt}}
	tool, err := agentloop.AgentTool(researcher, agentloop.AgentToolOptions{RunOptions: &agentloop.RunOptions{Hooks: h.hooks}})
	if err != nil {
		t.Fatal(err)
	}
	lead := &agentloop.Agent{Name: "lead", Hooks: h.hooks, Tools: []*agentloop.Tool{tool}, Model: describedModel{simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_r", "researcher", map[string]string{"task": "Weather in Berlin?"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("It is sunny.")}},
	), gpt}}
	nested := 0
	for it, err := range lead.Stream(context.Background(), agentloop.History{agentloop.UserMessage("Weather?")}, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := it.(*agentloop.Nested); ok {
			nested++
		}
	}
	if nested == 0 {
		t.Fatal("no Nested items")
	}

	root := h.one("invoke_agent lead")
	call := h.one("execute_tool researcher")
	sub := h.one("invoke_agent researcher")
	wantChild(t, root, call)
	wantChild(t, call, sub)
	wantAttrs(t, sub, map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher",
		"gen_ai.usage.input_tokens": 7, "gen_ai.usage.output_tokens": 3, "agentloop.run.turns": 1})
	wantAttrs(t, call, map[string]any{"gen_ai.tool.name": "researcher", "gen_ai.tool.call.id": "call_r"})
	var under = map[trace.SpanID]int{}
	for _, c := range h.ended("chat gpt-test") {
		under[c.Parent().SpanID()]++
	}
	if want := (map[trace.SpanID]int{root.SpanContext().SpanID(): 2, sub.SpanContext().SpanID(): 1}); !maps.Equal(under, want) {
		t.Errorf("chat spans per parent %v, want 2 under the lead's run and 1 under the sub-run's %v", under, want)
	}
	// 2 runs, 3 model calls, 1 tool call: the Nested items added nothing.
	if got := len(h.spans.Ended()); got != 6 {
		t.Errorf("%d spans ended, want 6: %v", got, h.names())
	}
}
