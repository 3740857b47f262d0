package aisdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

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
//	  progress (preliminary tool-output-available) and results of the
//	  turn's server tools, finish-step
//	finish (finishReason), or on failure: finish-step, error
//
// Calls to client tools are announced with tool-input-available (without
// providerExecuted and without dynamic) once the run pauses for them, and
// a call the loop rejects ([agentloop.ToolCallReady.Err]: a tool that was
// not offered, arguments that fail a client tool's schema), or one left
// behind by a failed run, gets a tool-input-error instead: the front end
// never runs it. A client call of an earlier response that the run still
// waits for (a client tool the user has just approved) is announced again,
// since that is what makes the client run it. A tool's progress
// ([agentloop.ToolProgress]) is sent as preliminary output, which the
// client shows until the final output replaces it.
//
// A sub-agent's work ([*agentloop.Nested] items of an [agentloop.AgentTool]
// call) goes out as a "data-subagent" data part per sub-run ([SubagentView],
// replaced as the sub-run goes on), and the agent that speaks in a run with
// handoffs ([agentloop.TurnStart.Agent]) as message metadata
// {"agent": name}. A sub-agent's streamed text is held back and sent as one
// update per [Mapper.Flush] (or with the next other item).
//
// A Mapper of your own signs nothing; the [Handler] signs what the server
// decided in its stateless mode (see the package documentation), and
// checks it when the client posts it back.
//
// [Mapper.Map] hands out the chunks; [Mapper.Write] writes them to a
// [Writer] as they are made, the same bytes, without boxing text deltas.
//
// A Mapper is used by one goroutine for one response; the zero value is not
// usable, call [NewMapper].
type Mapper struct {
	// ErrorText turns a run's error into the text of the error chunk. Nil
	// means err.Error(). Set it to hide internal details from clients.
	ErrorText func(error) string

	messageID string
	scratch   []Chunk // Write's chunks, reused
	started   bool
	done      bool
	stepOpen  bool
	textID    string
	reasonID  string
	nextID    int
	finish    agentloop.FinishReason

	deltaCalls map[int]string                // this turn: delta index → call id, for started inputs
	deferred   map[string]agentloop.ToolCall // client and rejected calls not yet announced
	order      []string                      // their ids, in call order
	handedOver map[string]bool               // call ids whose tool-input-available was sent

	// Signing (the Handler's stateless mode); sign is nil otherwise.
	sign      *signer
	calls     map[string]agentloop.ToolCall // every call a result may answer, by id
	signed    map[string]signedCall         // calls as signed, by id, so each is canonicalized once
	text      textMAC                       // the open text part's signature, streaming
	reasoning strings.Builder               // the open reasoning part, likewise
	sigReuse  *reusedSig                    // set when each chunk is written before the next is made (the Handler)

	// Sub-agents' runs (nested.go) and the agent that speaks.
	subagents     map[string]*subagent // by part id
	lastTags      *agentloop.SubAgent  // the tags of the last Nested item, and its view
	lastSub       *subagent
	subagentOrder []*subagent
	held          []*subagent // views changed by deltas, not sent yet
	agent         string
	history       agentloop.History // the history the run goes on from: paused sub-runs' states
}

// NewMapper returns a Mapper for a response that builds the assistant
// message messageID ("" leaves the id to the client).
func NewMapper(messageID string) *Mapper {
	return &Mapper{
		messageID:  messageID,
		deltaCalls: make(map[int]string),
		deferred:   make(map[string]agentloop.ToolCall),
		handedOver: make(map[string]bool),
		calls:      make(map[string]agentloop.ToolCall),
	}
}

// signWith makes the Mapper sign what the server decides (see sign.go);
// resumed are the calls of earlier responses that this run may answer.
func (m *Mapper) signWith(s *signer, resumed []agentloop.ToolCall) {
	m.sign = s
	for _, c := range resumed {
		m.calls[c.ID] = c
	}
}

// ResumeFrom tells the Mapper the history the run starts from, so that the
// view of a paused sub-agent that resumes ([SubagentView]) goes on from
// the sub-run's state instead of starting empty. Without it, a resumed
// sub-run's view shows only what it does in this response.
func (m *Mapper) ResumeFrom(h agentloop.History) { m.history = h }

// Done reports whether the response is complete: a finish or error chunk
// was produced. Chunks mapped after that are dropped.
func (m *Mapper) Done() bool { return m.done }

// Map appends to dst the chunks for one (item, err) pair of the run, in the
// order the client must see them, and returns the extended slice. The first
// call also produces the start chunk. A non-nil err produces the error
// chunk (after closing open text and reasoning parts and the step) and
// ends the response.
func (m *Mapper) Map(dst []Chunk, item agentloop.Item, err error) []Chunk {
	if m.done {
		return dst
	}
	m.sigReuse.reset()
	dst = m.start(dst)
	if len(m.held) > 0 {
		if _, nested := item.(*agentloop.Nested); !nested || err != nil {
			dst = m.Flush(dst)
		}
	}
	if err != nil {
		return m.fail(dst, err)
	}
	switch it := item.(type) {
	case *agentloop.Nested:
		if it != nil && it.SubAgent != nil { // never nil from the loop
			dst = m.nestedItem(dst, it)
		}
	case agentloop.TurnStart:
		dst = m.closeBlocks(dst)
		dst = m.closeStep(dst)
		clear(m.deltaCalls)
		m.stepOpen = true
		dst = append(dst, StartStepChunk{})
		dst = m.agentMetadata(dst, it.Agent)
	case agentloop.TextDelta:
		dst = m.textDelta(dst, it.Text)
	case agentloop.ReasoningDelta:
		dst = m.reasoningDelta(dst, it.Text)
	case agentloop.ReasoningEnd:
		dst = m.reasoningEnd(dst, it.Signature, it.Redacted)
	case agentloop.ToolCallDelta:
		dst = m.toolCallDelta(dst, it)
	case agentloop.ToolCallReady:
		dst = m.closeBlocks(dst)
		m.calls[it.Call.ID] = it.Call
		if it.Err != nil || (it.RunsOnClient && !it.NeedsApproval) {
			// Rejected calls are answered as invalid once their result
			// comes; client calls are handed over when the run pauses.
			m.deferred[it.Call.ID] = it.Call
			m.order = append(m.order, it.Call.ID)
			break
		}
		dst = m.handOver(dst, it.Call, it.RunsOnClient)
	case agentloop.TurnEnd:
		dst = m.closeBlocks(dst)
		m.finish = it.FinishReason
		for _, p := range it.Message.Parts {
			if p.Type == agentloop.PartApprovalRequest && p.Approval != nil {
				c := ToolApprovalRequestChunk{ApprovalID: p.Approval.ID, ToolCallID: p.Approval.CallID}
				if m.sign != nil {
					c.Signature = m.sign.approval(m.messageID, c.ToolCallID, c.ApprovalID)
				}
				dst = append(dst, c)
			}
		}
		if it.Err != nil {
			dst = m.closeStep(dst) // the run's error follows
		}
	case agentloop.ToolProgress:
		dst = m.closeBlocks(dst)
		yes := true
		dst = append(dst, ToolOutputAvailableChunk{ToolCallID: it.CallID, Output: outputJSON(it.Content), Preliminary: &yes})
	case agentloop.ToolResultReady:
		dst = m.closeBlocks(dst)
		dst = m.result(dst, it)
		dst = m.endSubagents(dst, it.Result.CallID, it.Result.IsError)
	case agentloop.Pending:
		dst = m.closeBlocks(dst)
		own, subClient, subApprove := splitPending(it)
		for _, c := range own {
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
			dst = m.handOver(dst, call, true)
		}
		dst = m.subrunStep(dst, it.History, subClient, subApprove)
		dst = m.closeStep(dst)
		m.done = true
		dst = append(dst, FinishChunk{FinishReason: FinishReasonToolCalls})
	case agentloop.Final:
		dst = m.closeBlocks(dst)
		dst = m.closeStep(dst)
		m.done = true
		dst = append(dst, FinishChunk{FinishReason: finishReasonOf(m.finish)})
	}
	return dst
}

// Write maps one (item, err) pair as [Mapper.Map] does and writes its
// chunks to w, as [Writer.WriteChunk] writes each; it writes the same
// bytes. It is the cheaper way for a run written straight to a Writer: a
// text delta that continues the open text part, most of a stream, is
// encoded into w's buffer without making a Chunk, and the chunks of other
// items go through a slice the Mapper reuses. It returns the first
// error of w; the Mapper's state moves on regardless, as with Map. Like
// the Writer, it buffers: call [Writer.Flush] when the client should see
// what was written.
func (m *Mapper) Write(w *Writer, item agentloop.Item, err error) error {
	if d, ok := item.(agentloop.TextDelta); ok && err == nil {
		if id, ok := m.continueText(d.Text); ok {
			_, valid, err := w.textDeltaEvent(id, d.Text)
			m.signText(d.Text, valid) // written or not, as Map would
			if err != nil {
				return err
			}
			return w.spill()
		}
	}
	m.scratch = m.Map(m.scratch[:0], item, err)
	defer clear(m.scratch) // let the chunks go
	for _, c := range m.scratch {
		if err := w.WriteChunk(c); err != nil {
			return err
		}
	}
	return nil
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

func (m *Mapper) start(dst []Chunk) []Chunk {
	if m.started {
		return dst
	}
	m.started = true
	return append(dst, StartChunk{MessageID: m.messageID})
}

func (m *Mapper) textDelta(dst []Chunk, text string) []Chunk {
	if text == "" {
		return dst
	}
	if m.textID == "" {
		dst = m.closeBlocks(dst)
		m.textID = m.newID("text-")
		dst = append(dst, TextStartChunk{ID: m.textID})
	}
	m.signText(text, false)
	return append(dst, TextDeltaChunk{ID: m.textID, Delta: text})
}

// signText adds a delta of the open text part to its signature, when
// signing; valid says the delta is known to be valid UTF-8 (textMAC.write).
func (m *Mapper) signText(delta string, valid bool) {
	if m.sign == nil {
		return
	}
	if m.text.st == nil {
		m.text = m.sign.streamText(m.messageID)
	}
	if delta != "" {
		m.text.write(delta, valid)
	}
}

func (m *Mapper) reasoningDelta(dst []Chunk, text string) []Chunk {
	if text == "" {
		return dst
	}
	if m.reasonID == "" {
		dst = m.closeBlocks(dst)
		m.reasonID = m.newID("reasoning-")
		dst = append(dst, ReasoningStartChunk{ID: m.reasonID})
	}
	if m.sign != nil {
		m.reasoning.WriteString(wireText(text))
	}
	return append(dst, ReasoningDeltaChunk{ID: m.reasonID, Delta: text})
}

// reasoningEnd closes the open reasoning part with the block's provider
// signature or redacted content; a block that has only those opens one.
func (m *Mapper) reasoningEnd(dst []Chunk, signature, redacted string) []Chunk {
	dst = m.closeText(dst)
	if m.reasonID == "" {
		if signature == "" && redacted == "" {
			return dst
		}
		m.reasonID = m.newID("reasoning-")
		dst = append(dst, ReasoningStartChunk{ID: m.reasonID})
	}
	return m.closeReasoning(dst, signature, redacted)
}

func (m *Mapper) toolCallDelta(dst []Chunk, d agentloop.ToolCallDelta) []Chunk {
	dst = m.closeBlocks(dst)
	id, ok := m.deltaCalls[d.Index]
	if !ok {
		if d.ID == "" || d.Name == "" {
			return dst // not announceable yet; tool-input-available will create the part
		}
		id = d.ID
		m.deltaCalls[d.Index] = id
		dst = append(dst, ToolInputStartChunk{ToolCallID: id, ToolName: d.Name})
	}
	if d.Args != "" {
		dst = append(dst, ToolInputDeltaChunk{ToolCallID: id, InputTextDelta: d.Args})
	}
	return dst
}

// handOver announces a call whose input is complete: the client runs it
// when client is set and it needs no approval.
func (m *Mapper) handOver(dst []Chunk, c agentloop.ToolCall, client bool) []Chunk {
	m.handedOver[c.ID] = true
	ch := ToolInputAvailableChunk{ToolCallID: c.ID, ToolName: c.Name, Input: inputJSON(c.Args)}
	if m.sign != nil {
		owner := ownerServer
		if client {
			owner = ownerClient
		}
		info := m.signedCall(c, ch.Input)
		ch.ProviderMetadata = m.sigMetadataOf(func(dst []byte) []byte { return m.sign.appendCall(dst, m.messageID, info, owner) })
	}
	return append(dst, ch)
}

// result maps a tool result: a rejected call's error as an invalid call,
// else the output, error or denial.
func (m *Mapper) result(dst []Chunk, it agentloop.ToolResultReady) []Chunk {
	r := it.Result
	if call, ok := m.deferred[r.CallID]; ok {
		delete(m.deferred, r.CallID)
		return append(dst, m.inputError(call, r.Content))
	}
	switch {
	case it.Denied:
		return append(dst, ToolOutputDeniedChunk{ToolCallID: r.CallID})
	case r.IsError:
		c := ToolOutputErrorChunk{ToolCallID: r.CallID, ErrorText: r.Content}
		c.ProviderMetadata = m.resultSig(r.CallID, StateOutputError, r.Content)
		return append(dst, c)
	default:
		c := ToolOutputAvailableChunk{ToolCallID: r.CallID, Output: outputJSON(r.Content)}
		if call, ok := m.calls[r.CallID]; ok && m.sign != nil {
			info := m.signedCall(call, nil)
			c.ProviderMetadata = m.sigMetadataOf(func(dst []byte) []byte { return m.sign.appendOutput(dst, m.messageID, info, c.Output) })
		}
		return append(dst, c)
	}
}

// inputError answers a call that the front end must not run.
func (m *Mapper) inputError(call agentloop.ToolCall, text string) ToolInputErrorChunk {
	c := ToolInputErrorChunk{ToolCallID: call.ID, ToolName: call.Name, Input: inputJSON(call.Args), ErrorText: text}
	if m.sign != nil {
		c.ProviderMetadata = m.sigMetadata(m.sign.result(m.messageID, m.signedCall(call, c.Input), StateOutputError, text))
	}
	return c
}

// resultSig returns the providerMetadata that signs a result of the call
// id, or nil when not signing (or the call is unknown, which leaves the
// result unsigned, and so refused when posted back).
func (m *Mapper) resultSig(id string, state PartState, value string) ProviderMetadata {
	if m.sign == nil {
		return nil
	}
	call, ok := m.calls[id]
	if !ok {
		return nil
	}
	return m.sigMetadata(m.sign.result(m.messageID, m.signedCall(call, nil), state, value))
}

// signedCall is a call as signed, with its canonical input.
type signedCall struct {
	args json.RawMessage // the arguments it was made from
	info callInfo
}

// signedCall returns c as signed (its canonical input), computed once per call: input,
// when not nil, is inputJSON(c.Args), already made for the chunk.
func (m *Mapper) signedCall(c agentloop.ToolCall, input json.RawMessage) callInfo {
	if sc, ok := m.signed[c.ID]; ok && sc.info.name == c.Name && bytes.Equal(sc.args, c.Args) {
		return sc.info
	}
	if input == nil {
		input = inputJSON(c.Args)
	}
	info := callInfo{id: c.ID, name: c.Name, input: canonicalValue(input)}
	if m.signed == nil {
		switch r := m.sigReuse; {
		case r == nil:
			m.signed = make(map[string]signedCall)
		case r.calls == nil:
			r.calls = make(map[string]signedCall)
			fallthrough
		default:
			m.signed = r.calls
		}
	}
	m.signed[c.ID] = signedCall{args: c.Args, info: info}
	return info
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
	// Client and rejected calls the run never answered will not run: say
	// so, so the front end neither runs them nor shows them as pending.
	for _, id := range m.order {
		if call, ok := m.deferred[id]; ok {
			delete(m.deferred, id)
			dst = append(dst, m.inputError(call, "not run: "+text))
		}
	}
	dst = m.closeStep(dst)
	m.done = true
	return append(dst, ErrorChunk{ErrorText: text})
}

// abort ends the response of a run that was stopped on purpose (a stop
// request, or a newer request for the chat): open parts and the step are
// closed, calls handed to nobody are marked not run, and an abort chunk
// with the reason ends it, as the AI SDK's own servers end an aborted
// stream (the client stays without an error).
func (m *Mapper) abort(dst []Chunk, reason string) []Chunk {
	if m.done {
		return dst
	}
	m.sigReuse.reset()
	dst = m.start(dst)
	dst = m.closeBlocks(dst)
	for _, id := range m.order {
		if call, ok := m.deferred[id]; ok {
			delete(m.deferred, id)
			dst = append(dst, m.inputError(call, "not run: the answer was stopped"))
		}
	}
	dst = m.closeStep(dst)
	m.done = true
	return append(dst, AbortChunk{Reason: reason})
}

func (m *Mapper) newID(prefix string) string {
	m.nextID++
	return prefix + strconv.Itoa(m.nextID)
}

func (m *Mapper) closeText(dst []Chunk) []Chunk {
	if m.textID == "" {
		return dst
	}
	c := TextEndChunk{ID: m.textID}
	if m.sign != nil {
		m.signText("", false) // starts the signature if no delta did
		c.ProviderMetadata = m.sigMetadataOf(func(dst []byte) []byte { return m.sign.appendEndText(dst, m.text) })
		m.text = textMAC{}
	}
	m.textID = ""
	return append(dst, c)
}

func (m *Mapper) closeReasoning(dst []Chunk, signature, redacted string) []Chunk {
	c := ReasoningEndChunk{ID: m.reasonID, ProviderMetadata: reasoningMetadata(signature, redacted)}
	if m.sign != nil {
		c.ProviderMetadata = withSig(c.ProviderMetadata, m.sign.reasoning(m.messageID, m.reasoning.String(), signature, redacted))
		m.reasoning.Reset()
	}
	m.reasonID = ""
	return append(dst, c)
}

func (m *Mapper) closeBlocks(dst []Chunk) []Chunk {
	dst = m.closeText(dst)
	if m.reasonID != "" {
		dst = m.closeReasoning(dst, "", "")
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

// finishReasonOf maps the loop's finish reason to the protocol's.
func finishReasonOf(r agentloop.FinishReason) FinishReason {
	switch r {
	case agentloop.FinishStop, "":
		return FinishReasonStop
	case agentloop.FinishLength:
		return FinishReasonLength
	case agentloop.FinishToolCalls:
		return FinishReasonToolCalls
	case agentloop.FinishContentFilter:
		return FinishReasonContentFilter
	case agentloop.FinishError:
		return FinishReasonError
	}
	return FinishReasonOther
}

// metadataKey is the providerMetadata key under which reasoning signatures,
// redacted reasoning and this package's signatures travel to the client
// and back.
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

// continueText reports whether a text delta goes into the text part
// already open, where it needs no chunk but its text-delta, and returns
// that part's id; it reports false when the delta needs more (Map then
// makes its chunks). It lets the Handler write the chunk that makes up
// most of a stream without boxing it into a Chunk. The caller writes the
// delta's event, then signs the delta (signText), as Map would have: the
// escaping tells whether the delta is valid UTF-8, which the signature
// then need not check again.
func (m *Mapper) continueText(text string) (id string, ok bool) {
	if m.done || m.textID == "" || text == "" {
		return "", false
	}
	return m.textID, true
}
