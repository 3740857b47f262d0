package agentloop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Role is who wrote a [Message].
type Role string

// The roles a [Message] may have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool messages carry tool results and approval decisions. They
	// answer the tool calls of the assistant message before them.
	RoleTool Role = "tool"
)

// PartType says which fields of a [Part] are in use.
type PartType string

// The kinds of [Part].
const (
	PartText             PartType = "text"             // Text
	PartReasoning        PartType = "reasoning"        // Text, Signature, Redacted
	PartToolCall         PartType = "toolCall"         // ToolCall
	PartToolResult       PartType = "toolResult"       // ToolResult
	PartApprovalRequest  PartType = "approvalRequest"  // Approval (CallID, ID)
	PartApprovalResponse PartType = "approvalResponse" // Approval (CallID, ID, Approved, Reason)
	PartFile             PartType = "file"             // File
	// PartSubRun is the state of a paused sub-agent run ([AgentTool]), in
	// a tool message.
	PartSubRun PartType = "subRun" // SubRun
)

// Message is one entry of a transcript. Its parts keep the order in which
// they were produced.
type Message struct {
	// ID is optional. Front ends that name their messages (the AI SDK's
	// UIMessage ids) keep it here so that a stored history maps back to them.
	ID string `json:"id,omitempty"`
	// Role says who wrote the message.
	Role Role `json:"role"`
	// Agent names the agent that wrote an assistant message, in runs of
	// agents with [Agent.Handoffs]; "" otherwise.
	Agent string `json:"agent,omitempty"`
	// Parts are the message's contents in order. A tool message answers the
	// calls of the assistant message before it.
	Parts []Part `json:"parts"`
}

// Part is one piece of a [Message]. Type says which of the other fields are
// meaningful; the others are zero.
type Part struct {
	// Type says which of the other fields are in use.
	Type PartType `json:"type"`
	// Text is the text of a text part, or the visible text of a reasoning part.
	Text string `json:"text,omitempty"`
	// Signature is a reasoning part's provider signature (Anthropic's
	// thinking signature). Providers must send it back unchanged.
	Signature string `json:"signature,omitempty"`
	// Redacted is a reasoning part's opaque, provider-encrypted content
	// (Anthropic's redacted_thinking data). Providers must send it back unchanged.
	Redacted string `json:"redacted,omitempty"`
	// ToolCall is set, non-nil, in a PartToolCall part.
	ToolCall *ToolCall `json:"toolCall,omitempty"`
	// ToolResult is set, non-nil, in a PartToolResult part.
	ToolResult *ToolResult `json:"toolResult,omitempty"`
	// Approval is set, non-nil, in approval request and response parts.
	Approval *Approval `json:"approval,omitempty"`
	// File is set, non-nil, in a PartFile part.
	File *File `json:"file,omitempty"`
	// SubRun is set, non-nil, in a PartSubRun part.
	SubRun *SubRun `json:"subRun,omitempty"`
}

// ToolCall is a request by the model to run a tool. As a [Chunk] it is the
// complete call: a [Model] yields it once its arguments are whole.
type ToolCall struct {
	// ID is unique within a history; results name their call by it. The
	// loop owns ids: it keeps the provider's id unless that id is empty or
	// already used in the history, and otherwise makes up a fresh one (the
	// same on every item and in the history).
	ID string
	// Name is the name of the tool called (possibly one that does not exist).
	Name string
	// Args is the JSON object of arguments as the model wrote it. It may be
	// invalid JSON: the loop answers that with an error result, and the
	// history's JSON keeps such text as it is (see [History.MarshalJSON]).
	Args json.RawMessage
}

// ToolResult is the answer to one [ToolCall].
type ToolResult struct {
	// CallID is the ID of the [ToolCall] this result answers.
	CallID string `json:"callId"`
	// Name is the name of the tool that was called.
	Name string `json:"name"`
	// Content is what the model sees: the tool's output (JSON or text), or
	// an error message the model can act on.
	Content string `json:"content"`
	// IsError marks Content as an error message rather than output.
	IsError bool `json:"isError,omitempty"`
	// Err is the Go error behind an error result, for hooks and logs: the
	// tool's own error, a [*ToolPanicError], or an error matching
	// [ErrUnknownTool], [ErrInvalidArgs], [ErrToolTimeout], [ErrDenied],
	// [ErrCancelled] or [ErrNotRun]. The model sees only Content. Err is
	// nil for results that are not errors, for results the caller appended
	// (client tools), and after a JSON round trip: it is not serialized.
	Err error `json:"-"`
}

// Approval is a request for approval of a tool call (in an assistant message)
// or the decision on it (in a tool message).
type Approval struct {
	// CallID is the ID of the [ToolCall] awaiting, or given, the decision.
	CallID string `json:"callId"`
	// ID names the approval request; front ends echo it back with the decision.
	ID string `json:"id,omitempty"`
	// Approved is the decision; false in a request, where it means nothing.
	Approved bool `json:"approved,omitempty"`
	// Reason optionally explains a decision; a denied call's result quotes it
	// to the model.
	Reason string `json:"reason,omitempty"`
}

// File is a file or image attached to a user message, by URL (which may be a
// data: URL) or by content.
type File struct {
	// MediaType is the IANA media type, such as "image/png".
	MediaType string `json:"mediaType"`
	// Filename is the file's name, if known.
	Filename string `json:"filename,omitempty"`
	// URL locates the content (http(s) or data:); "" when Data holds it.
	URL string `json:"url,omitempty"`
	// Data is the content itself (base64 in JSON); nil when URL locates it.
	Data []byte `json:"data,omitempty"`
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Type: PartText, Text: text} }

// UserMessage returns a user message holding one text part.
func UserMessage(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{TextPart(text)}}
}

// SystemMessage returns a system message holding one text part.
func SystemMessage(text string) Message {
	return Message{Role: RoleSystem, Parts: []Part{TextPart(text)}}
}

// Text returns the concatenation of the message's text parts.
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the message's tool calls in order.
func (m Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, p := range m.Parts {
		if p.Type == PartToolCall && p.ToolCall != nil {
			calls = append(calls, *p.ToolCall)
		}
	}
	return calls
}

// History is a transcript: the messages of a conversation, oldest first.
// It is a plain slice; a nil History is empty. Methods never modify the
// receiver's elements; the Append methods return a new History that may
// share the receiver's backing array only up to its length.
//
// History marshals to versioned JSON ({"version":2,"messages":[…]}) and
// unmarshals from it, rejecting unknown versions, so a stored transcript can
// be resumed later; see [History.MarshalJSON] for the format.
type History []Message

// LastAssistantText returns the text of the last assistant message, or "".
func (h History) LastAssistantText() string {
	if i := h.lastAssistant(); i >= 0 {
		return h[i].Text()
	}
	return ""
}

func (h History) lastAssistant() int {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == RoleAssistant {
			return i
		}
	}
	return -1
}

// Unanswered returns the tool calls of the last assistant message that no
// later tool message answers with a result, in call order. These are the
// calls a paused run waits for.
func (h History) Unanswered() []ToolCall {
	i := h.lastAssistant()
	if i < 0 {
		return nil
	}
	answered := make(map[string]bool)
	for _, m := range h[i+1:] {
		for _, p := range m.Parts {
			if p.Type == PartToolResult && p.ToolResult != nil {
				answered[p.ToolResult.CallID] = true
			}
		}
	}
	var out []ToolCall
	for _, c := range h[i].ToolCalls() {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// AppendResults returns the history with one tool message holding the given
// results appended. Each result must answer a call returned by
// [History.Unanswered], or a pending call of a paused sub-run (an id
// "<callID>/<id>" from a [Pending], see [AgentTool]: the message then holds
// the sub-run's new state); an empty Name is filled from the call. A result
// for any other call id is an error that names the id (wrapping
// [ErrInvalidHistory]), and then nothing is appended.
func (h History) AppendResults(results ...ToolResult) (History, error) {
	calls := indexCalls(h.Unanswered())
	parts := make([]Part, 0, len(results))
	var nested subAnswers
	for _, r := range results {
		c, ok := calls[r.CallID]
		if !ok {
			if sr, rest, ok := splitNested(h, calls, r.CallID); ok {
				r.CallID = rest
				nested.add(sr).results = append(nested.add(sr).results, r)
				continue
			}
			return h, fmt.Errorf("%w: result for tool call %q, which is not an unanswered call of the last assistant message", ErrInvalidHistory, r.CallID)
		}
		if r.Name == "" {
			r.Name = c.Name
		}
		parts = append(parts, Part{Type: PartToolResult, ToolResult: &r})
	}
	parts, err := nested.appendTo(parts)
	if err != nil {
		return h, err
	}
	if len(parts) == 0 {
		return h, nil
	}
	return append(h[:len(h):len(h)], Message{Role: RoleTool, Parts: parts}), nil
}

// AppendApprovals returns the history with one tool message holding the given
// approval decisions appended. Each decision must name a call returned by
// [History.Unanswered], or a pending call of a paused sub-run (as for
// [History.AppendResults]); otherwise the error names the id (wrapping
// [ErrInvalidHistory]) and nothing is appended.
func (h History) AppendApprovals(decisions ...Approval) (History, error) {
	calls := indexCalls(h.Unanswered())
	parts := make([]Part, 0, len(decisions))
	var nested subAnswers
	for _, d := range decisions {
		if _, ok := calls[d.CallID]; !ok {
			if sr, rest, ok := splitNested(h, calls, d.CallID); ok {
				d.CallID = rest
				if d.ID == "approval_"+sr.CallID+"/"+rest {
					d.ID = "approval_" + rest
				}
				nested.add(sr).approvals = append(nested.add(sr).approvals, d)
				continue
			}
			return h, fmt.Errorf("%w: approval for tool call %q, which is not an unanswered call of the last assistant message", ErrInvalidHistory, d.CallID)
		}
		parts = append(parts, Part{Type: PartApprovalResponse, Approval: &d})
	}
	parts, err := nested.appendTo(parts)
	if err != nil {
		return h, err
	}
	if len(parts) == 0 {
		return h, nil
	}
	return append(h[:len(h):len(h)], Message{Role: RoleTool, Parts: parts}), nil
}

// subAnswers collects the answers to paused sub-runs' calls, by sub-run,
// in the order first named.
type subAnswers []*subAnswer

type subAnswer struct {
	run       *SubRun
	results   []ToolResult
	approvals []Approval
}

func (s *subAnswers) add(sr *SubRun) *subAnswer {
	for _, a := range *s {
		if a.run == sr {
			return a
		}
	}
	a := &subAnswer{run: sr}
	*s = append(*s, a)
	return a
}

// appendTo appends each sub-run's new state, with its answers, to parts.
func (s subAnswers) appendTo(parts []Part) ([]Part, error) {
	for _, a := range s {
		h := a.run.History
		var err error
		if len(a.results) > 0 {
			if h, err = h.AppendResults(a.results...); err != nil {
				return nil, fmt.Errorf("sub-run of call %q: %w", a.run.CallID, err)
			}
		}
		if len(a.approvals) > 0 {
			if h, err = h.AppendApprovals(a.approvals...); err != nil {
				return nil, fmt.Errorf("sub-run of call %q: %w", a.run.CallID, err)
			}
		}
		parts = append(parts, Part{Type: PartSubRun, SubRun: &SubRun{CallID: a.run.CallID, Agent: a.run.Agent, History: h}})
	}
	return parts, nil
}

func indexCalls(calls []ToolCall) map[string]ToolCall {
	m := make(map[string]ToolCall, len(calls))
	for _, c := range calls {
		m[c.ID] = c
	}
	return m
}

// Validate reports the first structural problem of the history: a tool
// result or approval decision for a call id that no earlier assistant
// message made, or two calls with the same id. The error names the id and
// wraps [ErrInvalidHistory].
func (h History) Validate() error {
	made := make(map[string]bool)
	for i, m := range h {
		for _, p := range m.Parts {
			switch p.Type {
			case PartToolCall:
				if p.ToolCall == nil {
					return fmt.Errorf("%w: message %d: tool_call part without a call", ErrInvalidHistory, i)
				}
				if made[p.ToolCall.ID] {
					return fmt.Errorf("%w: message %d: tool call id %q is used twice", ErrInvalidHistory, i, p.ToolCall.ID)
				}
				made[p.ToolCall.ID] = true
			case PartToolResult:
				if p.ToolResult == nil {
					return fmt.Errorf("%w: message %d: tool_result part without a result", ErrInvalidHistory, i)
				}
				if !made[p.ToolResult.CallID] {
					return fmt.Errorf("%w: message %d: result for tool call %q, which the history never made", ErrInvalidHistory, i, p.ToolResult.CallID)
				}
			case PartApprovalResponse, PartApprovalRequest:
				if p.Approval == nil {
					return fmt.Errorf("%w: message %d: %s part without an approval", ErrInvalidHistory, i, p.Type)
				}
				if !made[p.Approval.CallID] {
					return fmt.Errorf("%w: message %d: approval for tool call %q, which the history never made", ErrInvalidHistory, i, p.Approval.CallID)
				}
			case PartSubRun:
				if p.SubRun == nil {
					return fmt.Errorf("%w: message %d: subRun part without a sub-run", ErrInvalidHistory, i)
				}
				if !made[p.SubRun.CallID] {
					return fmt.Errorf("%w: message %d: sub-run of tool call %q, which the history never made", ErrInvalidHistory, i, p.SubRun.CallID)
				}
				if err := p.SubRun.History.Validate(); err != nil {
					return fmt.Errorf("message %d: sub-run of tool call %q: %w", i, p.SubRun.CallID, err)
				}
			}
		}
	}
	return nil
}

// Clone returns a deep copy of the history: nothing it holds, down to the
// bytes of arguments and files, is shared with h, so either may be changed
// without touching the other. A nil History clones to nil.
func (h History) Clone() History {
	if h == nil {
		return nil
	}
	out := make(History, len(h))
	for i, m := range h {
		out[i] = m.Clone()
	}
	return out
}

// Clone returns a deep copy of the message: its parts and everything they
// point to are not shared with m.
func (m Message) Clone() Message {
	if m.Parts == nil {
		return m
	}
	parts := make([]Part, len(m.Parts))
	for i, p := range m.Parts {
		if p.ToolCall != nil {
			c := *p.ToolCall
			c.Args = bytes.Clone(c.Args)
			p.ToolCall = &c
		}
		if p.ToolResult != nil {
			r := *p.ToolResult
			p.ToolResult = &r
		}
		if p.Approval != nil {
			a := *p.Approval
			p.Approval = &a
		}
		if p.File != nil {
			f := *p.File
			f.Data = bytes.Clone(f.Data)
			p.File = &f
		}
		if p.SubRun != nil {
			sr := *p.SubRun
			sr.History = sr.History.Clone()
			p.SubRun = &sr
		}
		parts[i] = p
	}
	m.Parts = parts
	return m
}

// equal reports whether m and o hold the same values, down to the bytes
// (ToolResult.Err aside).
func (m Message) equal(o Message) bool {
	if m.ID != o.ID || m.Role != o.Role || m.Agent != o.Agent || len(m.Parts) != len(o.Parts) {
		return false
	}
	for i := range m.Parts {
		if !m.Parts[i].equal(o.Parts[i]) {
			return false
		}
	}
	return true
}

func (p Part) equal(o Part) bool {
	if p.Type != o.Type || p.Text != o.Text || p.Signature != o.Signature || p.Redacted != o.Redacted {
		return false
	}
	switch {
	case (p.ToolCall == nil) != (o.ToolCall == nil), (p.ToolResult == nil) != (o.ToolResult == nil),
		(p.Approval == nil) != (o.Approval == nil), (p.File == nil) != (o.File == nil),
		(p.SubRun == nil) != (o.SubRun == nil):
		return false
	case p.ToolCall != nil && (p.ToolCall.ID != o.ToolCall.ID || p.ToolCall.Name != o.ToolCall.Name ||
		!bytes.Equal(p.ToolCall.Args, o.ToolCall.Args)):
		return false
	case p.ToolResult != nil && (p.ToolResult.CallID != o.ToolResult.CallID || p.ToolResult.Name != o.ToolResult.Name ||
		p.ToolResult.Content != o.ToolResult.Content || p.ToolResult.IsError != o.ToolResult.IsError):
		return false // Err is left out: it is not sent, and may not be comparable
	case p.Approval != nil && *p.Approval != *o.Approval:
		return false
	case p.File != nil && (p.File.MediaType != o.File.MediaType || p.File.Filename != o.File.Filename ||
		p.File.URL != o.File.URL || !bytes.Equal(p.File.Data, o.File.Data)):
		return false
	case p.SubRun != nil && !p.SubRun.equal(o.SubRun):
		return false
	}
	return true
}

func (s *SubRun) equal(o *SubRun) bool {
	if s.CallID != o.CallID || s.Agent != o.Agent || len(s.History) != len(o.History) {
		return false
	}
	for i := range s.History {
		if !s.History[i].equal(o.History[i]) {
			return false
		}
	}
	return true
}

// approvalsAfterLastAssistant returns the approval decisions that follow the
// last assistant message, by call id.
func approvalsAfterLastAssistant(h History) map[string]Approval {
	i := h.lastAssistant()
	if i < 0 {
		return nil
	}
	out := make(map[string]Approval)
	for _, m := range h[i+1:] {
		for _, p := range m.Parts {
			if p.Type == PartApprovalResponse && p.Approval != nil {
				out[p.Approval.CallID] = *p.Approval
			}
		}
	}
	return out
}

// answerDangling returns h with an error result for every tool call that a
// later user or assistant message left behind unanswered (a user who sent a
// new message instead of answering a client tool), so that every call the
// model sees has a result. Calls that only tool messages follow are left
// alone: the run resumes them. h itself is not modified.
func answerDangling(h History) History {
	var out History
	for i := 0; i < len(h); i++ {
		out = append(out, h[i])
		calls := h[i].ToolCalls()
		if h[i].Role != RoleAssistant || len(calls) == 0 {
			continue
		}
		j := i + 1
		answered := make(map[string]bool)
		for ; j < len(h) && h[j].Role == RoleTool; j++ {
			for _, p := range h[j].Parts {
				if p.Type == PartToolResult && p.ToolResult != nil {
					answered[p.ToolResult.CallID] = true
				}
			}
		}
		if j == len(h) {
			continue // the end of the history: pending, not dangling
		}
		var parts []Part
		for _, c := range calls {
			if !answered[c.ID] {
				parts = append(parts, Part{Type: PartToolResult, ToolResult: &ToolResult{
					CallID: c.ID, Name: c.Name, IsError: true, Err: ErrNotRun,
					Content: "no result: the conversation went on before this call was answered",
				}})
			}
		}
		if parts == nil {
			continue
		}
		out = append(out, h[i+1:j]...)
		out = append(out, Message{Role: RoleTool, Parts: parts})
		i = j - 1
	}
	return out
}

// callIDs returns the set of tool-call ids the history uses.
func callIDs(h History) map[string]bool {
	ids := make(map[string]bool)
	for _, m := range h {
		for _, p := range m.Parts {
			if p.Type == PartToolCall && p.ToolCall != nil {
				ids[p.ToolCall.ID] = true
			}
		}
	}
	return ids
}
