package aisdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/agentloop/agentloop"
)

// ChatStore keeps the authoritative history of each chat, by chat id. When
// a [Handler] has one, it runs every request on the stored history and
// takes from the request only what the client may add (see
// [Handler.Store]); after each run it saves the run's history.
//
// Implementations must be safe for concurrent use.
type ChatStore interface {
	// Load returns the stored history of the chat. A chat that was never
	// saved loads as an empty history and a nil error.
	Load(ctx context.Context, chatID string) (agentloop.History, error)
	// Save replaces the stored history of the chat.
	Save(ctx context.Context, chatID string, h agentloop.History) error
}

// MemoryStore is a [ChatStore] in memory. It stores deep copies (through
// the history's JSON form), so callers may keep using what they pass and
// get. It is safe for concurrent use; the zero value is not, use
// [NewMemoryStore].
type MemoryStore struct {
	mu    sync.Mutex
	chats map[string][]byte
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{chats: make(map[string][]byte)}
}

// Load returns a copy of the chat's history (nil for an unknown chat).
func (s *MemoryStore) Load(ctx context.Context, chatID string) (agentloop.History, error) {
	s.mu.Lock()
	data, ok := s.chats[chatID]
	s.mu.Unlock()
	if !ok {
		return nil, nil
	}
	var h agentloop.History
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("aisdk: memory store: chat %q: %w", chatID, err)
	}
	return h, nil
}

// Save stores a copy of h as the chat's history.
func (s *MemoryStore) Save(ctx context.Context, chatID string, h agentloop.History) error {
	data, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("aisdk: memory store: chat %q: %w", chatID, err)
	}
	s.mu.Lock()
	s.chats[chatID] = data
	s.mu.Unlock()
	return nil
}

// ErrConflict is wrapped by the error of [Reconcile] when a request does not
// agree with the stored history: an edited or forged message, a result for
// a server tool, or a result or decision for a call that is not pending.
var ErrConflict = errors.New("the request does not match the stored chat")

// Reconcile checks the messages a client posted against the stored history
// of the chat and returns the history to run: stored, plus what the client
// may add. The client may add a last user message, results for the client
// tool calls that are pending at the end of stored, approval decisions for
// the calls there that await approval, and error results for those (a
// declined call). Everything else it sends must
// agree with stored (tool outputs and arguments are compared as JSON
// values); it may leave out stored content (results it never received, the
// tail of a response it was cut off from, a shortened last text), which is
// then taken from stored. Anything else is an error wrapping [ErrConflict]
// that names the first difference.
//
// posted must come from [ToHistory].
func Reconcile(stored, posted agentloop.History) (agentloop.History, error) {
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
		// message and has as many user messages as the request.
		if k := len(stored); k == 0 || stored[k-1].Role != agentloop.RoleUser || countRole(stored, agentloop.RoleUser) != countRole(posted, agentloop.RoleUser) {
			newUser = &last
			posted = posted[:n-1]
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
				return nil, fmt.Errorf("%w: a result for tool call %q (%s), which awaits approval: only the server runs it", ErrConflict, c.ID, c.Name)
			}
			results = append(results, *f.result)
		case f.kind == factApproval && isPending && needsApproval[c.ID] && !decided[c.ID]:
			approvals = append(approvals, *f.approval)
		default:
			kept = append(kept, f)
		}
	}

	sf := messageFacts(ToHistoryOf(stored))
	tail := len(sf)
	for i := len(sf) - 1; i >= 0; i-- {
		if sf[i].kind == factUser {
			break
		}
		tail = i
	}
	i := 0
	for _, f := range kept {
		for {
			if i >= len(sf) {
				return nil, fmt.Errorf("%w: %s is not in the stored chat", ErrConflict, f.describe())
			}
			s := sf[i]
			if s.kind == f.kind && s.id == f.id && (s.value == f.value || (i >= tail && f.kind == factText && strings.HasPrefix(s.value, f.value))) {
				i++
				break
			}
			if s.kind == factResult || s.kind == factApproval || i >= tail {
				i++ // the client may lack these
				continue
			}
			return nil, fmt.Errorf("%w: %s differs from the stored chat (stored: %s)", ErrConflict, f.describe(), s.describe())
		}
	}
	for ; i < len(sf); i++ {
		if s := sf[i]; s.kind != factResult && s.kind != factApproval && i < tail {
			return nil, fmt.Errorf("%w: the request leaves out %s of the stored chat", ErrConflict, s.describe())
		}
	}

	out := stored.Clone()
	var err error
	if len(approvals) > 0 {
		if out, err = out.AppendApprovals(approvals...); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConflict, err)
		}
	}
	if len(results) > 0 {
		if out, err = out.AppendResults(results...); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConflict, err)
		}
	}
	if newUser != nil {
		out = append(out, *newUser)
	}
	return out, nil
}

// ForRegenerate returns the part of stored that a regenerate request keeps:
// everything up to and including the stored user message that is the
// posted history's last user message (counted from the start), so the
// answer after it can be produced again. When stored has fewer user
// messages, it is returned unchanged.
func ForRegenerate(stored, posted agentloop.History) agentloop.History {
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

// ToHistoryOf returns h as a client would post it back: FromHistory, then
// ToHistory. It is how [Reconcile] puts the stored history in the same form
// as a posted one.
func ToHistoryOf(h agentloop.History) agentloop.History {
	out, err := ToHistory(FromHistory(h))
	if err != nil {
		return h
	}
	return out
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
