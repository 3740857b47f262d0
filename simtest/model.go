// Package simtest is a scripted fake LLM for testing agents without a model
// server, in the manner of net/http/httptest for net/http.
//
// A [Model] plays a script of turns: each model call gets the next turn's
// reply, streamed as the chunks a real provider would send (text split into
// words, tool-call arguments split into fragments), after checking the
// turn's expectations on the request. Every request is recorded. Scripts can
// be written in Go ([Text], [Call], …) or loaded from JSON files
// ([ParseScript], [LoadScript]).
//
// A [Recorder] wraps any model and records a session as a script, with
// what the agent sent as each turn's expectation; played back, the script
// needs no server and fails an agent that changed, naming the first
// difference. [Replay] does both for a test: it replays a script file, or
// records it again when SIMTEST_RECORD=1.
package simtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentloop/agentloop"
)

// Step is one element of a scripted reply. Build steps with [Text],
// [Reasoning], [Signature], [Call], [Usage], [UsageOf], [Finish], [Fail],
// [Delay] and [Hang].
type Step struct {
	kind   stepKind
	text   string
	call   agentloop.ToolCall
	usage  agentloop.Usage
	finish agentloop.FinishReason
	delay  time.Duration
}

type stepKind uint8

const (
	stepText stepKind = iota + 1
	stepReasoning
	stepSignature
	stepCall
	stepUsage
	stepFinish
	stepFail
	stepDelay
	stepHang
)

// Text replies with answer text, streamed word by word.
func Text(s string) Step { return Step{kind: stepText, text: s} }

// Reasoning replies with reasoning text, streamed word by word.
func Reasoning(s string) Step { return Step{kind: stepReasoning, text: s} }

// Signature closes the current reasoning block with a provider signature.
func Signature(sig string) Step { return Step{kind: stepSignature, text: sig} }

// Call replies with a tool call. id may be "" (the loop then makes one up).
// args is marshalled to JSON, except a string, []byte or json.RawMessage,
// which is used as the argument text unchanged (so a test can send invalid
// JSON). The arguments are streamed in a few fragments, then the whole call.
func Call(id, name string, args any) Step {
	var raw json.RawMessage
	switch a := args.(type) {
	case nil:
		raw = json.RawMessage(`{}`)
	case string:
		raw = json.RawMessage(a)
	case []byte:
		raw = json.RawMessage(a)
	case json.RawMessage:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			// Stream the error text as arguments; the loop answers it as invalid JSON.
			b = []byte(fmt.Sprintf("unmarshalable arguments: %v", err))
		}
		raw = b
	}
	return Step{kind: stepCall, call: agentloop.ToolCall{ID: id, Name: name, Args: raw}}
}

// Usage reports token usage for the turn.
func Usage(input, output int) Step {
	return Step{kind: stepUsage, usage: agentloop.Usage{Input: input, Output: output}}
}

// UsageOf reports a turn's usage with every count, the cache and reasoning
// counts included.
func UsageOf(u agentloop.Usage) Step { return Step{kind: stepUsage, usage: u} }

// Finish sets the turn's finish reason. Without it, the reason is tool_calls
// when the turn has calls and stop otherwise.
func Finish(r agentloop.FinishReason) Step { return Step{kind: stepFinish, finish: r} }

// Fail makes the stream fail at this point with an error carrying msg.
func Fail(msg string) Step { return Step{kind: stepFail, text: msg} }

// Delay pauses the stream for d (or until the call's context is done).
func Delay(d time.Duration) Step { return Step{kind: stepDelay, delay: d} }

// Hang blocks the stream until the call's context is done, then fails with
// the context's error.
func Hang() Step { return Step{kind: stepHang} }

// Expect states what a turn's request must hold. The zero value checks
// nothing. Its JSON form is a script's "expect" object.
type Expect struct {
	// Tools, when non-nil, is the exact set of tool names offered (order
	// does not matter; an empty non-nil slice means no tools).
	Tools []string `json:"tools,omitzero"`
	// User, when non-empty, must be a substring of the latest user message's text.
	User string `json:"user,omitempty"`
	// ToolResults maps a call id to a substring its result's content must hold.
	ToolResults map[string]string `json:"tool_results,omitempty"`
	// System, when non-empty, must match the request's system prompt
	// (matching as in [Message]).
	System string `json:"system,omitempty"`
	// Messages, when non-nil, must match the request's messages one for
	// one, in order; see [Message]. A [Recorder] writes them.
	Messages []Message `json:"messages,omitzero"`
	// Files, when non-nil, must match the files of the latest user message
	// one for one, in order (an empty non-nil slice means no file); see
	// [ExpectFile]. This is how a script checks that an attachment reached
	// the model.
	Files []ExpectFile `json:"files,omitzero"`
}

// ExpectFile is a file as [Expect.Files] wants it.
type ExpectFile struct {
	// MediaType is the file's media type, exactly, or a "type/*" pattern
	// ("image/*" matches any image).
	MediaType string `json:"media_type"`
	// Filename, when non-empty, is the file's name, exactly.
	Filename string `json:"filename,omitempty"`
}

func (f ExpectFile) matches(got *agentloop.File) bool {
	if top, ok := strings.CutSuffix(f.MediaType, "/*"); ok {
		gotTop, _, _ := strings.Cut(got.MediaType, "/")
		if !strings.EqualFold(top, gotTop) {
			return false
		}
	} else if !strings.EqualFold(f.MediaType, got.MediaType) {
		return false
	}
	return f.Filename == "" || f.Filename == got.Filename
}

func (f ExpectFile) String() string {
	if f.Filename == "" {
		return f.MediaType
	}
	return fmt.Sprintf("%q (%s)", f.Filename, f.MediaType)
}

// Any, within an expected text (a [Message]'s text, a result's content,
// [Expect.System]) matches any run of characters, and as an expected
// argument value (a JSON string) matches any value. Recorded ids,
// timestamps and redacted secrets can be replaced by it so that a replay
// does not depend on them.
const Any = "{{any}}"

// Message is a message as an [Expect] wants it. Texts match exactly, except
// where they hold [Any]. Calls match by name and by arguments compared as
// JSON values (so spacing and key order do not matter); results by tool
// name, content and error flag. Call ids are not compared: providers and
// the loop make them up, so a replay cannot reproduce them. Reasoning,
// files and approvals are not compared.
type Message struct {
	// Role is the message's role.
	Role agentloop.Role `json:"role"`
	// Text is the message's text (its text parts joined).
	Text string `json:"text,omitempty"`
	// Calls are the message's tool calls, in order.
	Calls []MessageCall `json:"calls,omitempty"`
	// Results are the message's tool results, in order.
	Results []MessageResult `json:"results,omitempty"`
}

// MessageCall is a tool call as a [Message] wants it.
type MessageCall struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Args is the call's arguments; nil matches any.
	Args json.RawMessage `json:"args,omitempty"`
}

// MessageResult is a tool result as a [Message] wants it.
type MessageResult struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Content is the result's content.
	Content string `json:"content"`
	// IsError marks an error result.
	IsError bool `json:"error,omitempty"`
}

// Turn is one scripted model call: an optional expectation and a reply.
type Turn struct {
	// Expect is checked against the request before the reply is played; a
	// mismatch fails the model call with an [*ExpectationError].
	Expect Expect
	// Reply is played in order; nil replies with no content (finish stop).
	Reply []Step
	// ReplyFunc, when non-nil, computes the reply from the request instead
	// of Reply. An error fails the model call with it.
	ReplyFunc func(req *agentloop.Request) ([]Step, error)

	prepared []action
}

// action is a prepared step: a chunk to yield, or something to do.
type action struct {
	chunk agentloop.Chunk
	step  *Step // non-nil for fail, delay and hang
}

// ErrScriptExhausted is wrapped by the error of a model call made after the
// script's last turn.
var ErrScriptExhausted = errors.New("simtest: the script has no turn left")

// ExpectationError is the error of a model call whose request did not meet
// its turn's expectation.
type ExpectationError struct {
	// Turn is the 1-based index of the turn in the script.
	Turn int
	// What names the expectation: "tools offered", "latest user text",
	// "latest user files",
	// "tool result for <id>", "system prompt", "message count" or
	// "message N (<role>) <what>", N 1-based.
	What string
	// Want describes what the expectation asked for.
	Want string
	// Got describes what the request held instead.
	Got string
}

// Error returns "simtest: turn N: <what>: want <want>, got <got>".
func (e *ExpectationError) Error() string {
	return fmt.Sprintf("simtest: turn %d: %s: want %s, got %s", e.Turn, e.What, e.Want, e.Got)
}

// ScriptError is the error a [Fail] step makes the stream fail with.
type ScriptError struct {
	// Turn is the 1-based index of the model call that failed.
	Turn int
	// Message is the scripted error message.
	Message string
}

// Error returns "simtest: turn N: scripted error: <message>".
func (e *ScriptError) Error() string {
	return fmt.Sprintf("simtest: turn %d: scripted error: %s", e.Turn, e.Message)
}

// Model is an [agentloop.Model] that plays a script. Each call of Stream
// takes the next turn, in order, whichever run makes it, unless the model
// comes from a [Script] whose TurnsBy is [TurnsByConversation]. It is safe
// for concurrent use.
type Model struct {
	mu       sync.Mutex
	turns    []Turn
	turnsBy  TurnsBy
	played   []bool
	reply    func(*agentloop.Request) ([]Step, error) // after the turns, if set
	next     int
	requests []*agentloop.Request
	open     int
}

// NewModel returns a model that plays turns in order. Replies are prepared
// once, so serving them allocates little.
func NewModel(turns ...Turn) *Model {
	m := &Model{turns: slices.Clone(turns), played: make([]bool, len(turns))}
	for i := range m.turns {
		if m.turns[i].ReplyFunc == nil {
			m.turns[i].prepared = prepare(m.turns[i].Reply)
		}
	}
	return m
}

// NewFuncModel returns a model that computes every reply from its request,
// for any number of calls: a simulator for demos, or a model for
// property-style tests. An error from reply fails that call.
func NewFuncModel(reply func(req *agentloop.Request) ([]Step, error)) *Model {
	return &Model{reply: reply}
}

// Stream plays the call's turn: the next one, or with [TurnsByConversation]
// the one the request's messages pick. See [agentloop.Model].
func (m *Model) Stream(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	return func(yield func(agentloop.Chunk, error) bool) {
		m.mu.Lock()
		n := m.next
		if m.turnsBy == TurnsByConversation {
			n = repliesSinceUser(req.Messages)
		}
		m.next++
		m.requests = append(m.requests, copyRequest(req))
		m.open++
		var turn *Turn
		if n < len(m.turns) {
			turn = &m.turns[n]
			m.played[n] = true
		} else if m.reply != nil {
			turn = &Turn{ReplyFunc: m.reply}
		}
		total := len(m.turns)
		m.mu.Unlock()
		defer func() {
			m.mu.Lock()
			m.open--
			m.mu.Unlock()
		}()

		if turn == nil {
			if m.turnsBy == TurnsByConversation {
				yield(nil, fmt.Errorf("%w: turn %d (%d model replies since the last user message), but the script has %d turns", ErrScriptExhausted, n+1, n, total))
				return
			}
			yield(nil, fmt.Errorf("%w: model call %d, but the script has %d turns", ErrScriptExhausted, n+1, total))
			return
		}
		if err := turn.Expect.check(n+1, req); err != nil {
			yield(nil, err)
			return
		}
		actions := turn.prepared
		if turn.ReplyFunc != nil {
			steps, err := turn.ReplyFunc(req)
			if err != nil {
				yield(nil, fmt.Errorf("simtest: turn %d: reply func: %w", n+1, err))
				return
			}
			actions = prepare(steps)
		}
		for _, a := range actions {
			if a.step == nil {
				if !yield(a.chunk, nil) {
					return
				}
				continue
			}
			switch a.step.kind {
			case stepFail:
				yield(nil, &ScriptError{Turn: n + 1, Message: a.step.text})
				return
			case stepHang:
				<-ctx.Done()
				yield(nil, ctx.Err())
				return
			case stepDelay:
				t := time.NewTimer(a.step.delay)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					yield(nil, ctx.Err())
					return
				}
			}
		}
	}
}

// Requests returns a copy of every request received so far, in order.
func (m *Model) Requests() []*agentloop.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// Calls returns how many model calls were made.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next
}

// Remaining returns how many turns of the script were not played by any
// call (0 for a model made by NewFuncModel).
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, p := range m.played {
		if !p {
			n++
		}
	}
	return n
}

// repliesSinceUser counts the assistant messages after the last user message.
func repliesSinceUser(h agentloop.History) int {
	n := 0
	for i := len(h) - 1; i >= 0 && h[i].Role != agentloop.RoleUser; i-- {
		if h[i].Role == agentloop.RoleAssistant {
			n++
		}
	}
	return n
}

// Open returns how many streams have started and not yet returned. After a
// run ends it is 0: the loop closed every model stream.
func (m *Model) Open() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.open
}

func copyRequest(req *agentloop.Request) *agentloop.Request {
	c := *req
	c.Messages = req.Messages.Clone()
	c.Tools = slices.Clone(req.Tools)
	return &c
}

// prepare turns steps into the chunks a provider would stream.
func prepare(steps []Step) []action {
	var out []action
	calls := 0
	finished := false
	for i := range steps {
		s := &steps[i]
		switch s.kind {
		case stepText:
			for _, w := range words(s.text) {
				out = append(out, action{chunk: agentloop.TextDelta{Text: w}})
			}
		case stepReasoning:
			for _, w := range words(s.text) {
				out = append(out, action{chunk: agentloop.ReasoningDelta{Text: w}})
			}
		case stepSignature:
			out = append(out, action{chunk: agentloop.ReasoningEnd{Signature: s.text}})
		case stepCall:
			for _, frag := range fragments(string(s.call.Args), 3) {
				out = append(out, action{chunk: agentloop.ToolCallDelta{Index: calls, ID: s.call.ID, Name: s.call.Name, Args: frag}})
			}
			out = append(out, action{chunk: s.call})
			calls++
		case stepUsage:
			out = append(out, action{chunk: s.usage})
		case stepFinish:
			out = append(out, action{chunk: agentloop.Finish{Reason: s.finish}})
			finished = true
		case stepFail, stepDelay, stepHang:
			out = append(out, action{step: s})
		}
	}
	if !finished {
		reason := agentloop.FinishStop
		if calls > 0 {
			reason = agentloop.FinishToolCalls
		}
		out = append(out, action{chunk: agentloop.Finish{Reason: reason}})
	}
	return out
}

// words splits s after each space, so the pieces join back to s.
func words(s string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(s, " ")
}

// fragments splits s into at most n pieces on rune boundaries.
func fragments(s string, n int) []string {
	if len(s) <= n {
		return []string{s}
	}
	var out []string
	size := (len(s) + n - 1) / n
	for len(s) > 0 {
		cut := min(size, len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

func (e *Expect) check(turn int, req *agentloop.Request) error {
	if e.Tools != nil {
		want := slices.Clone(e.Tools)
		got := make([]string, len(req.Tools))
		for i, t := range req.Tools {
			got[i] = t.Name
		}
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(want, got) {
			return &ExpectationError{Turn: turn, What: "tools offered", Want: fmt.Sprint(want), Got: fmt.Sprint(got)}
		}
	}
	if e.User != "" {
		got := latestUserText(req.Messages)
		if !strings.Contains(got, e.User) {
			return &ExpectationError{Turn: turn, What: "latest user text", Want: fmt.Sprintf("text containing %q", e.User), Got: fmt.Sprintf("%q", got)}
		}
	}
	if e.Files != nil {
		if err := checkFiles(turn, e.Files, req.Messages); err != nil {
			return err
		}
	}
	if e.System != "" && !matchText(e.System, req.System) {
		return &ExpectationError{Turn: turn, What: "system prompt", Want: fmt.Sprintf("%q", e.System), Got: fmt.Sprintf("%q", req.System)}
	}
	if e.Messages != nil {
		if err := checkMessages(turn, e.Messages, req.Messages); err != nil {
			return err
		}
	}
	if len(e.ToolResults) > 0 {
		results := toolResults(req.Messages)
		ids := make([]string, 0, len(e.ToolResults))
		for id := range e.ToolResults {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			want := e.ToolResults[id]
			got, ok := results[id]
			if !ok {
				return &ExpectationError{Turn: turn, What: "tool result for " + id, Want: fmt.Sprintf("a result containing %q", want), Got: "no result for that call id"}
			}
			if !strings.Contains(got, want) {
				return &ExpectationError{Turn: turn, What: "tool result for " + id, Want: fmt.Sprintf("a result containing %q", want), Got: fmt.Sprintf("%q", got)}
			}
		}
	}
	return nil
}

// checkFiles matches the files of the latest user message.
func checkFiles(turn int, want []ExpectFile, h agentloop.History) error {
	var got []*agentloop.File
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == agentloop.RoleUser {
			for _, p := range h[i].Parts {
				if p.Type == agentloop.PartFile && p.File != nil {
					got = append(got, p.File)
				}
			}
			break
		}
	}
	describe := func(fs []string) string {
		if len(fs) == 0 {
			return "no file"
		}
		return strings.Join(fs, ", ")
	}
	wants := make([]string, len(want))
	for i, f := range want {
		wants[i] = f.String()
	}
	gots := make([]string, len(got))
	for i, f := range got {
		gots[i] = ExpectFile{MediaType: f.MediaType, Filename: f.Filename}.String()
	}
	ok := len(want) == len(got)
	for i := 0; ok && i < len(want); i++ {
		ok = want[i].matches(got[i])
	}
	if !ok {
		return &ExpectationError{Turn: turn, What: "latest user files", Want: describe(wants), Got: describe(gots)}
	}
	return nil
}

func latestUserText(h agentloop.History) string {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == agentloop.RoleUser {
			return h[i].Text()
		}
	}
	return ""
}

func toolResults(h agentloop.History) map[string]string {
	out := make(map[string]string)
	for _, m := range h {
		for _, p := range m.Parts {
			if p.Type == agentloop.PartToolResult && p.ToolResult != nil {
				out[p.ToolResult.CallID] = p.ToolResult.Content
			}
		}
	}
	return out
}
