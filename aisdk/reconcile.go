package aisdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop"
)

// ErrChatMismatch is wrapped by the error of [Reconcile] when a request does not
// agree with the stored history: an edited or forged message, a result for
// a server tool, or a result or decision for a call that is not pending.
var ErrChatMismatch = errors.New("aisdk: the request does not match the stored chat")

// Reconcile checks the messages of a request against the stored history
// of its chat and returns the history to run: stored, plus what the client
// may add. It is what a [ChatServer] does with every request.
//
// A "regenerate-message" request first drops the stored answer it
// regenerates (everything after the stored user message that is the
// request's last), and an edit drops the stored messages from the edited
// one on: a last user message named by the request's "messageId" (useChat's
// sendMessage({messageId})), or a new last user message that follows an
// earlier point of the stored chat than its end (assistant-ui's edit, a
// new branch: the stored messages from the user message after that point
// on are dropped; a lone new user message, with nothing before it, edits the
// first message and drops the whole stored chat, unless the body says that
// it holds only the client's last message: see [LastMessageOnly]).
// The client may then add a last user message (with an id that no stored
// user message has), results for the client tool calls that are pending at
// the end of stored, approval decisions for the calls there that await
// approval, and error results for those (a declined call). Everything else
// it sends must be in stored, in the same order (tool outputs and
// arguments are compared as JSON values; system messages are ignored, as
// they are not part of a stored chat). It may lack stored content (results
// and calls it never received, the end of a text it was cut off from,
// messages it dropped), which stays as stored: the stored history is what
// runs. It may also have, at its end, content of the answer to its last
// user message that stored lacks: a turn it saw streaming that its server
// never saved (the server died mid-turn); that content is dropped. A request that holds anything else (an edited or injected message,
// a forged result, changed arguments) gets an error wrapping [ErrChatMismatch]
// that names the first difference; messages that do not convert
// ([ToHistory]) get an error wrapping [ErrBadRequest].
//
// stored is not modified.
func Reconcile(stored agentloop.History, req *ChatRequest) (agentloop.History, error) {
	posted, nested, err := toHistory(withoutSystem(req.Messages))
	if err != nil {
		return nil, err
	}
	if err := posted.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	last := agentloop.Message{}
	if len(posted) > 0 {
		last = posted[len(posted)-1]
	}
	switch {
	case req.Trigger == TriggerRegenerate:
		stored = forRegenerate(stored, posted)
	case req.MessageID != "" && last.Role == agentloop.RoleUser && last.ID == req.MessageID:
		stored = forEdit(stored, req.MessageID)
	case last.Role == agentloop.RoleUser && last.ID != "" && !hasUser(stored, last.ID) && !req.lastMessageOnly():
		stored = forBranch(stored, posted)
	}
	out, err := reconcile(stored, posted)
	if err != nil || nested == nil {
		return out, err
	}
	// Answers to a paused sub-agent's calls: the stored sub-run state is
	// what they answer (a posted state is ignored).
	if out, err = nested.apply(out); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrChatMismatch, err)
	}
	return out, nil
}

// LastMessageOnly is the body field ([ChatRequest.Extra]) with which a
// client that posts only its last message, not the whole conversation,
// says so: "lastMessageOnly": true. Its message then goes at the end of
// the stored chat; without it a lone new user message is the whole
// conversation as the client holds it, an edit of the first message, and
// replaces the stored chat.
const LastMessageOnly = "lastMessageOnly"

// lastMessageOnly reports whether the body says that it holds only the
// client's last message ([LastMessageOnly]).
func (r *ChatRequest) lastMessageOnly() bool {
	v, ok := r.Extra[LastMessageOnly]
	return ok && strings.TrimSpace(string(v)) == "true"
}

// forBranch returns the part of stored that a new user message keeps when
// the client branched off an earlier point of the chat (assistant-ui
// edits a message that way: the edited version is a new message that
// follows what preceded the original). The point is the last posted
// message with an id before the new one; when the stored chat has a user
// message after that message's stored copy (and its tool messages), the
// stored messages from that user message on are dropped. When the new
// message is all that was posted, the point is the chat's start (an edit
// of the first message): nothing of stored is kept. Otherwise stored is
// returned unchanged: the new message goes at the end.
func forBranch(stored, posted agentloop.History) agentloop.History {
	if len(posted) == 1 {
		return stored[:0]
	}
	anchor := ""
	for i := len(posted) - 2; i >= 0 && anchor == ""; i-- {
		anchor = posted[i].ID
	}
	if anchor == "" {
		return stored
	}
	i := len(stored) - 1
	for i >= 0 && stored[i].ID != anchor {
		i--
	}
	if i < 0 {
		return stored
	}
	j := i + 1
	for j < len(stored) && stored[j].Role == agentloop.RoleTool {
		j++
	}
	if j < len(stored) && stored[j].Role == agentloop.RoleUser {
		return stored[:j]
	}
	return stored
}

func hasUser(h agentloop.History, id string) bool {
	for _, m := range h {
		if m.Role == agentloop.RoleUser && m.ID == id {
			return true
		}
	}
	return false
}

// reconcile is Reconcile on the converted posted history.
func reconcile(stored, posted agentloop.History) (agentloop.History, error) {
	pending := map[string]agentloop.ToolCall{}
	for _, c := range stored.Unanswered() {
		pending[c.ID] = c
	}
	needsApproval := map[string]bool{}
	decided := map[string]bool{}
	if i := lastAssistant(stored); i >= 0 {
		for _, p := range stored[i].Parts {
			if p.Type == agentloop.PartApprovalRequest && p.Approval != nil {
				needsApproval[p.Approval.CallID] = true
			}
		}
		for _, m := range stored[i+1:] {
			for _, p := range m.Parts {
				if p.Type == agentloop.PartApprovalResponse && p.Approval != nil {
					decided[p.Approval.CallID] = true
				}
			}
		}
	}

	// The new user message, if the posted history ends with one that is not
	// already the stored history's last message.
	var newUser *agentloop.Message
	if n := len(posted); n > 0 && posted[n-1].Role == agentloop.RoleUser {
		last := posted[n-1]
		// It repeats the stored last message (a retry after a run that
		// produced nothing) when the stored history ends with a user
		// message and has as many user messages as the request, unless
		// both messages have ids and they differ (another client's
		// message, saved in between, whose run has not answered yet).
		k := len(stored)
		if k == 0 || stored[k-1].Role != agentloop.RoleUser || countRole(stored, agentloop.RoleUser) != countRole(posted, agentloop.RoleUser) ||
			(last.ID != "" && stored[k-1].ID != "" && last.ID != stored[k-1].ID) {
			newUser = &last
			posted = posted[:n-1]
		}
	}

	if newUser != nil && newUser.ID != "" {
		for _, m := range stored {
			if m.Role == agentloop.RoleUser && m.ID == newUser.ID {
				return nil, fmt.Errorf("%w: user message %q is already in the stored chat (an edit must name it in \"messageId\")", ErrChatMismatch, newUser.ID)
			}
		}
	}

	// Results and decisions for pending calls are additions.
	var results []agentloop.ToolResult
	var approvals []agentloop.Approval
	pf := messageFacts(posted)
	kept := pf[:0:0]
	for _, f := range pf {
		c, isPending := pending[f.id]
		switch {
		case f.kind == factResult && isPending:
			// An error result for a call that awaits approval declines it
			// (assistant-ui cancels pending calls that way when the user
			// sends a new message); any other result would be forged.
			if needsApproval[c.ID] && !f.result.IsError {
				return nil, fmt.Errorf("%w: a result for tool call %q (%s), which awaits approval: only the server runs it", ErrChatMismatch, c.ID, c.Name)
			}
			results = append(results, *f.result)
		case f.kind == factApproval && isPending && needsApproval[c.ID] && !decided[c.ID]:
			approvals = append(approvals, *f.approval)
		default:
			kept = append(kept, f)
		}
	}

	// Everything else must be in the stored chat, in order. The client may
	// lack stored content: results and calls it never received (a response
	// cut off, or a call still streaming when the run failed), or the end
	// of a text.
	sf := messageFacts(asPosted(stored))
	i := 0
	for k, f := range kept {
		if i == len(sf) && lostTail(posted, sf, kept[k:]) {
			break
		}
		start := i
		for i < len(sf) && !sameFact(sf[i], f) {
			i++
		}
		if i == len(sf) {
			if f.id != "" {
				for _, s := range sf[start:] {
					if s.kind == f.kind && s.id == f.id {
						return nil, fmt.Errorf("%w: %s differs from the stored one", ErrChatMismatch, f.describe())
					}
				}
			}
			return nil, fmt.Errorf("%w: %s is not in the stored chat (edited, forged or out of order)", ErrChatMismatch, f.describe())
		}
		i++
	}

	out := stored.Clone()
	var err error
	if len(approvals) > 0 {
		if out, err = out.AppendApprovals(approvals...); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrChatMismatch, err)
		}
	}
	if len(results) > 0 {
		if out, err = out.AppendResults(results...); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrChatMismatch, err)
		}
	}
	if newUser != nil {
		out = append(out, *newUser)
	}
	return out, nil
}

// lostTail reports whether facts, the posted facts after all of the
// stored chat's, are only what the server made in answer to the last
// posted user message, with ids that stored does not have (results only
// for calls among facts): whole turns that the client saw streaming but
// that were never saved, because their server died before they ended.
// Reconcile drops them (the stored history is what runs) instead of
// refusing the request.
func lostTail(posted agentloop.History, stored, facts []fact) bool {
	lastUser := -1
	for i, m := range posted {
		if m.Role == agentloop.RoleUser {
			lastUser = i
		}
	}
	known := map[string]bool{}
	for _, f := range stored {
		if f.id != "" {
			known[f.id] = true
		}
	}
	calls := map[string]bool{}
	for _, f := range facts {
		if f.msg <= lastUser || known[f.id] {
			return false
		}
		switch f.kind {
		case factText, factReasoning, factFile:
		case factCall:
			calls[f.id] = true
		case factResult:
			if !calls[f.id] {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// forEdit returns the part of stored that an edit of the user message
// messageID keeps: everything before that message. When stored has no
// user message with that id, it is returned unchanged.
func forEdit(stored agentloop.History, messageID string) agentloop.History {
	if messageID == "" {
		return stored
	}
	for i, m := range stored {
		if m.Role == agentloop.RoleUser && m.ID == messageID {
			return stored[:i]
		}
	}
	return stored
}

// forRegenerate returns the part of stored that a regenerate request keeps:
// everything up to and including the stored user message that is the
// posted history's last user message (counted from the start), so the
// answer after it can be produced again. When stored has fewer user
// messages, it is returned unchanged.
func forRegenerate(stored, posted agentloop.History) agentloop.History {
	n := countRole(posted, agentloop.RoleUser)
	if n == 0 {
		return stored
	}
	seen := 0
	for i, m := range stored {
		if m.Role == agentloop.RoleUser {
			seen++
			if seen == n {
				return stored[:i+1]
			}
		}
	}
	return stored
}

// asPosted returns h as a client would post it back: FromHistory, then
// ToHistory. It is how [Reconcile] puts the stored history in the same form
// as a posted one.
func asPosted(h agentloop.History) agentloop.History {
	out, err := ToHistory(FromHistory(h))
	if err != nil {
		return h
	}
	return out
}

// sameFact reports whether a posted fact p agrees with a stored fact s: the
// same value, or a prefix of a stored text (a response the client was cut
// off from), or an error result for a call the stored chat has an error
// result for (the texts differ: the client shows its own reason).
func sameFact(s, p fact) bool {
	if s.kind != p.kind || s.id != p.id {
		return false
	}
	switch {
	case s.value == p.value:
		return true
	case p.kind == factText:
		return strings.HasPrefix(s.value, p.value)
	case p.kind == factResult:
		return s.result.IsError && p.result.IsError
	}
	return false
}

func lastAssistant(h agentloop.History) int {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == agentloop.RoleAssistant {
			return i
		}
	}
	return -1
}

type factKind uint8

const (
	factSystem factKind = iota + 1
	factUser
	factText
	factReasoning
	factFile
	factCall
	factResult
	factApproval
)

// fact is one comparable piece of a history.
type fact struct {
	kind     factKind
	id       string
	value    string
	msg      int
	result   *agentloop.ToolResult
	approval *agentloop.Approval
}

func (f fact) describe() string {
	what := map[factKind]string{
		factSystem: "a system message", factUser: "a user message", factText: "an assistant text",
		factReasoning: "an assistant reasoning", factFile: "a file", factCall: "tool call",
		factResult: "the result of tool call", factApproval: "the approval decision of tool call",
	}[f.kind]
	if f.id != "" {
		what += " " + strconv.Quote(f.id)
	}
	return fmt.Sprintf("%s (message %d)", what, f.msg)
}

func messageFacts(h agentloop.History) []fact {
	var out []fact
	for i, m := range h {
		switch m.Role {
		case agentloop.RoleSystem:
			out = append(out, fact{kind: factSystem, value: m.Text(), msg: i})
		case agentloop.RoleUser:
			var b strings.Builder
			for _, p := range m.Parts {
				switch p.Type {
				case agentloop.PartText:
					b.WriteString("text\x00" + p.Text + "\x00")
				case agentloop.PartFile:
					if p.File != nil {
						b.WriteString("file\x00" + filePart(p.File).URL + "\x00")
					}
				}
			}
			out = append(out, fact{kind: factUser, value: b.String(), msg: i})
		default:
			for _, p := range m.Parts {
				switch p.Type {
				case agentloop.PartText:
					out = append(out, fact{kind: factText, value: p.Text, msg: i})
				case agentloop.PartReasoning:
					out = append(out, fact{kind: factReasoning, value: p.Text + "\x00" + p.Signature + "\x00" + p.Redacted, msg: i})
				case agentloop.PartFile:
					if p.File != nil {
						out = append(out, fact{kind: factFile, value: filePart(p.File).URL, msg: i})
					}
				case agentloop.PartToolCall:
					if c := p.ToolCall; c != nil {
						out = append(out, fact{kind: factCall, id: c.ID, value: c.Name + "\x00" + canonicalJSON(string(c.Args)), msg: i})
					}
				case agentloop.PartToolResult:
					if r := p.ToolResult; r != nil {
						out = append(out, fact{kind: factResult, id: r.CallID, value: strconv.FormatBool(r.IsError) + "\x00" + canonicalJSON(r.Content), msg: i, result: r})
					}
				case agentloop.PartApprovalResponse:
					if a := p.Approval; a != nil {
						out = append(out, fact{kind: factApproval, id: a.CallID, value: strconv.FormatBool(a.Approved) + "\x00" + a.Reason, msg: i, approval: a})
					}
				}
			}
		}
	}
	return out
}

func countRole(h agentloop.History, role agentloop.Role) int {
	n := 0
	for _, m := range h {
		if m.Role == role {
			n++
		}
	}
	return n
}

// canonicalJSON returns s in a form that compares equal for equal JSON
// values (a JSON string as its text, objects with sorted keys); text that is
// not JSON is returned unchanged.
func canonicalJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	if str, ok := v.(string); ok {
		return str
	}
	b, err := json.Marshal(v) // map keys come out sorted
	if err != nil {
		return s
	}
	return string(b)
}
