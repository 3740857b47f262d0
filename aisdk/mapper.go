package aisdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/agentloop/agentloop"
)

// Mapper turns the items of one run ([agentloop.Agent.Stream]) into the
// chunks of one UI message stream response, keeping the state the protocol
// needs: which text and reasoning parts are open, which step is open, which
// tool calls were announced.
//
// The response it builds is:
//
//	start (messageId)
//	[results of calls resumed before the first model call]
//	per turn: start-step, text-*/reasoning-*/tool-input-* in the order
//	  produced, tool-approval-request for calls that need approval, the
//	  turn's server tool results, finish-step
//	finish (finishReason), or on failure: error
//
// Calls to client tools are announced with tool-input-available (without
// providerExecuted and without dynamic) once the run pauses for them, so
// that a call the loop rejects (arguments that fail the tool's schema), or
// one left behind by a failed run, gets a tool-input-error instead and the
// front end never runs it. A client call of an earlier response that the
// run still waits for (a client tool the user has just approved) is
// announced again, since that is what makes the client run it.
//
// A Mapper is used by one goroutine for one response; the zero value is not
// usable, call [NewMapper].
type Mapper struct {
	// ErrorText turns a run's error into the text of the error chunk. Nil
	// means err.Error(). Set it to hide internal details from clients.
	ErrorText func(error) string

	messageID string
	started   bool
	done      bool
	stepOpen  bool
	textID    string
	reasonID  string
	nextID    int
	finish    agentloop.FinishReason

	deltaCalls map[int]string                // this turn: delta index → call id, for started inputs
	announced  map[string]bool               // call ids whose tool-input-start was sent
	deferred   map[string]agentloop.ToolCall // client calls not yet announced
	order      []string                      // their ids, in call order
	handedOver map[string]bool               // call ids whose tool-input-available was sent
}

// NewMapper returns a Mapper for a response that builds the assistant
// message messageID ("" leaves the id to the client).
func NewMapper(messageID string) *Mapper {
	return &Mapper{
		messageID:  messageID,
		deltaCalls: make(map[int]string),
		announced:  make(map[string]bool),
		deferred:   make(map[string]agentloop.ToolCall),
		handedOver: make(map[string]bool),
	}
}

// Done reports whether the response is complete: a finish or error chunk
// was produced. Chunks mapped after that are dropped.
func (m *Mapper) Done() bool { return m.done }

// Map appends to dst the chunks for one (item, err) pair of the run, in the
// order the client must see them, and returns the extended slice. The first
// call also produces the start chunk. A non-nil err produces the error
// chunk (after closing open text and reasoning parts) and ends the response.
func (m *Mapper) Map(dst []Chunk, item agentloop.Item, err error) []Chunk {
	if m.done {
		return dst
	}
	dst = m.start(dst)
	if err != nil {
		return m.fail(dst, err)
	}
	switch it := item.(type) {
	case agentloop.TurnStart:
		dst = m.closeBlocks(dst)
		dst = m.closeStep(dst)
		clear(m.deltaCalls)
		m.stepOpen = true
		dst = append(dst, StartStepChunk{})
	case agentloop.TextDelta:
		if it.Text == "" {
			break
		}
		if m.textID == "" {
			dst = m.closeBlocks(dst)
			m.textID = m.newID("text-")
			dst = append(dst, TextStartChunk{ID: m.textID})
		}
		dst = append(dst, TextDeltaChunk{ID: m.textID, Delta: it.Text})
	case agentloop.ReasoningDelta:
		if it.Text == "" {
			break
		}
		if m.reasonID == "" {
			dst = m.closeBlocks(dst)
			m.reasonID = m.newID("reasoning-")
			dst = append(dst, ReasoningStartChunk{ID: m.reasonID})
		}
		dst = append(dst, ReasoningDeltaChunk{ID: m.reasonID, Delta: it.Text})
	case agentloop.ReasoningEnd:
		dst = m.closeText(dst)
		meta := reasoningMetadata(it.Signature, it.Redacted)
		if m.reasonID == "" {
			if meta == nil {
				break
			}
			m.reasonID = m.newID("reasoning-")
			dst = append(dst, ReasoningStartChunk{ID: m.reasonID})
		}
		dst = append(dst, ReasoningEndChunk{ID: m.reasonID, ProviderMetadata: meta})
		m.reasonID = ""
	case agentloop.ToolCallDelta:
		dst = m.closeBlocks(dst)
		id, ok := m.deltaCalls[it.Index]
		if !ok {
			if it.ID == "" || it.Name == "" {
				break // not announceable yet; tool-input-available will create the part
			}
			id = it.ID
			m.deltaCalls[it.Index] = id
			m.announced[id] = true
			dst = append(dst, ToolInputStartChunk{ToolCallID: id, ToolName: it.Name})
		}
		if it.Args != "" {
			dst = append(dst, ToolInputDeltaChunk{ToolCallID: id, InputTextDelta: it.Args})
		}
	case agentloop.ToolCallReady:
		dst = m.closeBlocks(dst)
		if it.Client && !it.NeedsApproval {
			m.deferred[it.Call.ID] = it.Call
			m.order = append(m.order, it.Call.ID)
			break
		}
		m.handedOver[it.Call.ID] = true
		dst = append(dst, ToolInputAvailableChunk{ToolCallID: it.Call.ID, ToolName: it.Call.Name, Input: inputJSON(it.Call.Args)})
	case agentloop.TurnEnd:
		dst = m.closeBlocks(dst)
		m.finish = it.FinishReason
		for _, p := range it.Message.Parts {
			if p.Type == agentloop.PartApprovalRequest && p.Approval != nil {
				dst = append(dst, ToolApprovalRequestChunk{ApprovalID: p.Approval.ID, ToolCallID: p.Approval.CallID})
			}
		}
	case agentloop.ToolResultReady:
		dst = m.closeBlocks(dst)
		r := it.Result
		if call, ok := m.deferred[r.CallID]; ok {
			// A client call the loop answered itself (its arguments failed
			// the schema): an invalid tool call for the client.
			delete(m.deferred, r.CallID)
			dst = append(dst, ToolInputErrorChunk{ToolCallID: r.CallID, ToolName: call.Name, Input: inputJSON(call.Args), ErrorText: r.Content})
			break
		}
		switch {
		case it.Denied:
			dst = append(dst, ToolOutputDeniedChunk{ToolCallID: r.CallID})
		case r.IsError:
			dst = append(dst, ToolOutputErrorChunk{ToolCallID: r.CallID, ErrorText: r.Content})
		default:
			dst = append(dst, ToolOutputAvailableChunk{ToolCallID: r.CallID, Output: OutputJSON(r.Content)})
		}
	case agentloop.Pending:
		dst = m.closeBlocks(dst)
		for _, c := range it.ClientCalls {
			call, ok := m.deferred[c.ID]
			if ok {
				delete(m.deferred, c.ID)
			} else if m.handedOver[c.ID] {
				continue
			} else {
				// A call made in an earlier response: a client tool the user
				// has just approved, or a call the client posted back
				// unanswered. Hand it over (again), or the client never
				// runs it.
				call = c
			}
			m.handedOver[c.ID] = true
			dst = append(dst, ToolInputAvailableChunk{ToolCallID: call.ID, ToolName: call.Name, Input: inputJSON(call.Args)})
		}
		dst = m.closeStep(dst)
		m.done = true
		dst = append(dst, FinishChunk{FinishReason: FinishToolCalls})
	case agentloop.Final:
		dst = m.closeBlocks(dst)
		dst = m.closeStep(dst)
		m.done = true
		dst = append(dst, FinishChunk{FinishReason: FinishReasonOf(m.finish)})
	}
	return dst
}

// End appends what the response still needs once the run's sequence has
// ended: nothing after a finish or error chunk; otherwise (a run that ended
// without a final item) an error chunk.
func (m *Mapper) End(dst []Chunk) []Chunk {
	if m.done {
		return dst
	}
	return m.Map(dst, nil, errors.New("aisdk: the run ended without a final item"))
}

// Fail appends the error chunk for err (after the start chunk if none was
// produced yet) and ends the response. It does nothing once Done.
func (m *Mapper) Fail(dst []Chunk, err error) []Chunk {
	return m.Map(dst, nil, err)
}

func (m *Mapper) start(dst []Chunk) []Chunk {
	if m.started {
		return dst
	}
	m.started = true
	return append(dst, StartChunk{MessageID: m.messageID})
}

func (m *Mapper) fail(dst []Chunk, err error) []Chunk {
	dst = m.closeBlocks(dst)
	text := ""
	if m.ErrorText != nil {
		text = m.ErrorText(err)
	} else {
		text = err.Error()
	}
	if text == "" {
		text = "error"
	}
	// Client calls the run never got to hand over will not run: say so,
	// so the front end neither runs them nor shows them as pending.
	for _, id := range m.order {
		if call, ok := m.deferred[id]; ok {
			delete(m.deferred, id)
			dst = append(dst, ToolInputErrorChunk{ToolCallID: id, ToolName: call.Name, Input: inputJSON(call.Args), ErrorText: "not run: " + text})
		}
	}
	m.done = true
	return append(dst, ErrorChunk{ErrorText: text})
}

func (m *Mapper) newID(prefix string) string {
	m.nextID++
	return prefix + strconv.Itoa(m.nextID)
}

func (m *Mapper) closeText(dst []Chunk) []Chunk {
	if m.textID != "" {
		dst = append(dst, TextEndChunk{ID: m.textID})
		m.textID = ""
	}
	return dst
}

func (m *Mapper) closeBlocks(dst []Chunk) []Chunk {
	dst = m.closeText(dst)
	if m.reasonID != "" {
		dst = append(dst, ReasoningEndChunk{ID: m.reasonID})
		m.reasonID = ""
	}
	return dst
}

func (m *Mapper) closeStep(dst []Chunk) []Chunk {
	if m.stepOpen {
		dst = append(dst, FinishStepChunk{})
		m.stepOpen = false
	}
	return dst
}

// FinishReasonOf maps the loop's finish reason to the protocol's.
func FinishReasonOf(r agentloop.FinishReason) string {
	switch r {
	case agentloop.FinishStop, "":
		return FinishStop
	case agentloop.FinishLength:
		return FinishLength
	case agentloop.FinishToolCalls:
		return FinishToolCalls
	case agentloop.FinishContentFilter:
		return FinishContentFilter
	case agentloop.FinishError:
		return FinishError
	}
	return FinishOther
}

// OutputJSON returns the "output" value for a tool result's content: the
// content itself when it is valid JSON, else the content as a JSON string.
func OutputJSON(content string) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(content)); err == nil {
		return buf.Bytes()
	}
	b, _ := json.Marshal(content)
	return b
}

// inputJSON returns a call's arguments as the "input" value: the arguments
// when they are valid JSON ({} when empty), else the raw text as a string.
func inputJSON(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage(`{}`)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err == nil {
		return buf.Bytes()
	}
	b, _ := json.Marshal(string(args))
	return b
}

// metadataKey is the providerMetadata key under which reasoning signatures
// and redacted reasoning travel to the client and back.
const metadataKey = "agentloop"

func reasoningMetadata(signature, redacted string) ProviderMetadata {
	if signature == "" && redacted == "" {
		return nil
	}
	md := map[string]json.RawMessage{}
	if signature != "" {
		b, _ := json.Marshal(signature)
		md["signature"] = b
	}
	if redacted != "" {
		b, _ := json.Marshal(redacted)
		md["redacted"] = b
	}
	return ProviderMetadata{metadataKey: md}
}
