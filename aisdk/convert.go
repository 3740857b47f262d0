package aisdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/jsonscan"
)

// ToHistory rebuilds the loop's history from the messages a client posted,
// by the rules of the AI SDK's convertToModelMessages
// (ui-message-stream.md §6):
//
//   - a system message becomes a system message of its joined text parts;
//   - a user message keeps its text and file parts (other parts are
//     ignored); a message left with no part is dropped; a file part's
//     data: URL is decoded into [agentloop.File.Data], an http(s) URL kept
//     as the file's URL; a file part without a valid media type, with a
//     malformed data: URL or with another URL scheme is an error;
//   - an assistant message is split at every step-start into blocks; each
//     non-empty block becomes an assistant message (text, reasoning with the
//     signature it carried in providerMetadata, files, tool calls, then an
//     approval request for each call that has an approval) followed by a
//     tool message with the block's approval decisions and results;
//     a steering-message part closes the block and becomes a user message;
//   - tool parts: input-streaming is dropped; input-available,
//     approval-requested and output-available with a preliminary output
//     (a response cut off while the tool ran) stay calls without a result
//     (the loop sees them pending at the end of the history, or answers
//     them as dangling);
//     approval-requested parts before the last user message are dropped;
//     approval-responded adds the decision (a denial in an earlier block
//     also gets the denied result); output-available, output-error and
//     output-denied add a result (a string output gives its text, an
//     assistant-ui envelope {"__aui_modelContent":[…],"value":…} the text
//     of its text items, any other output its JSON);
//   - a paused sub-agent's parts ([agentloop.AgentTool]) in the last
//     message: a "data-subrun" part gives the state of the sub-run of an
//     unanswered call ([SubrunState], an [agentloop.PartSubRun] part; a
//     state whose call has its result is ignored), and the parts of that
//     sub-run's calls (ids "<callID>/<id>") give their decisions and
//     client outputs, appended with [agentloop.History.AppendApprovals]
//     and [agentloop.History.AppendResults]; in earlier messages they
//     are ignored;
//   - source, other data-*, custom and reasoning-file parts and unknown
//     part types are ignored.
//
// Messages keep their ids. The result passes [agentloop.History.Validate];
// otherwise the error names the problem and wraps [ErrBadRequest].
func ToHistory(msgs []UIMessage) (agentloop.History, error) {
	h, nested, err := toHistory(msgs)
	if err != nil {
		return nil, err
	}
	if nested != nil {
		if h, err = nested.applyStates(h); err == nil {
			h, err = nested.apply(h)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
	}
	if err := h.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return h, nil
}

// toHistory is ToHistory without the last message's answers to paused
// sub-runs (returned, nil when there are none) and without validating.
func toHistory(msgs []UIMessage) (agentloop.History, *nestedAnswers, error) {
	lastUser := -1
	for i, m := range msgs {
		if m.Role == "user" {
			lastUser = i
		}
	}
	h := make(agentloop.History, 0, len(msgs))
	var nested *nestedAnswers
	var slab partSlab
	for i, m := range msgs {
		switch m.Role {
		case "system":
			var b strings.Builder
			for _, p := range m.Parts {
				if p.Type == "text" {
					b.WriteString(p.Text)
				}
			}
			if b.Len() > 0 {
				msg := agentloop.SystemMessage(b.String())
				msg.ID = m.ID
				h = append(h, msg)
			}
		case "user":
			parts, err := userParts(m.Parts, i, &slab)
			if err != nil {
				return nil, nil, err
			}
			if len(parts) > 0 {
				h = append(h, agentloop.Message{ID: m.ID, Role: agentloop.RoleUser, Parts: parts})
			}
		case "assistant":
			var a nestedAnswers
			taken, err := a.collect(m)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: message %d: %w", ErrBadRequest, i, err)
			}
			last := i == len(msgs)-1
			if taken != nil && last {
				nested = &a
			}
			if h, err = appendAssistant(h, m, i, taken, i < lastUser, last, &slab); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, fmt.Errorf("%w: message %d has role %q; want system, user or assistant", ErrBadRequest, i, m.Role)
		}
	}
	return h, nested, nil
}

// maxHistorySlab is the most parts a partSlab allocates at once (6.5 KB),
// unless one message needs more.
const maxHistorySlab = 64

// partSlab hands out the parts of a history's messages from shared
// slabs, so that a long chat costs a few allocations for its parts rather
// than one or more per message. Slabs grow from the first message's size,
// so a short chat allocates little.
type partSlab struct {
	free []agentloop.Part // not yet handed out
	size int              // of the last slab
}

// take returns an empty slice with room for n parts, whose capacity is n,
// so that an append to it never reaches a neighbour's parts.
func (s *partSlab) take(n int) []agentloop.Part {
	if n > len(s.free) {
		s.size = max(n, min(2*s.size, maxHistorySlab))
		s.free = make([]agentloop.Part, s.size)
	}
	parts := s.free[:0:n]
	s.free = s.free[n:]
	return parts
}

func userParts(ps []UIPart, msg int, slab *partSlab) ([]agentloop.Part, error) {
	var parts []agentloop.Part
	add := func(p agentloop.Part) {
		if parts == nil {
			parts = slab.take(len(ps))
		}
		parts = append(parts, p)
	}
	for j, p := range ps {
		switch p.Type {
		case "text":
			if p.Text != "" {
				add(agentloop.TextPart(p.Text))
			}
		case "file":
			f, err := fileOf(&p, msg, j)
			if err != nil {
				return nil, err
			}
			add(agentloop.Part{Type: agentloop.PartFile, File: f})
		}
	}
	return parts, nil
}

// fileOf turns a file part into the loop's file: the content of a data:
// URL is decoded into Data, any other URL is kept as it is. A part without
// a media type or URL, a malformed media type, a malformed data: URL, or a URL scheme other than
// data, http and https is an error wrapping [ErrBadRequest].
func fileOf(p *UIPart, msg, part int) (*agentloop.File, error) {
	where := func(format string, args ...any) error {
		return fmt.Errorf("%w: message %d, part %d (file %q): %s", ErrBadRequest, msg, part, p.Filename, fmt.Sprintf(format, args...))
	}
	if p.MediaType == "" {
		return nil, where("no \"mediaType\"")
	}
	if _, _, err := mime.ParseMediaType(p.MediaType); err != nil || strings.Contains(p.MediaType, ",") {
		return nil, where("\"mediaType\" %q is not a media type", p.MediaType)
	}
	scheme, _, ok := strings.Cut(p.URL, ":")
	if !ok {
		return nil, where("\"url\" is not a URL; want a data:, http: or https: URL")
	}
	switch strings.ToLower(scheme) {
	case "data":
		_, data, err := agentloop.ParseDataURL(p.URL)
		if err != nil {
			return nil, where("%v", err)
		}
		return &agentloop.File{MediaType: p.MediaType, Filename: p.Filename, Data: data}, nil
	case "http", "https":
		return &agentloop.File{MediaType: p.MediaType, Filename: p.Filename, URL: p.URL}, nil
	}
	return nil, where("URL scheme %q; want data:, http: or https:", scheme)
}

// block is a run of an assistant message's parts between step-start and
// steering-message parts: Parts[start:end], and the steering-message part
// that ends it, if any.
type block struct {
	start, end int
	steering   *UIPart
}

// appendAssistant appends the messages of one assistant UIMessage.
// Parts marked in taken (a paused sub-run's parts, see nestedAnswers) are
// left out; msg is the message's index, for errors.
func appendAssistant(h agentloop.History, m UIMessage, msg int, taken []bool, beforeLastUser, lastMessage bool, slab *partSlab) (agentloop.History, error) {
	var buf [8]block
	blocks := buf[:0]
	start := 0
	for i := range m.Parts {
		switch m.Parts[i].Type {
		case "step-start":
			blocks = append(blocks, block{start: start, end: i})
			start = i + 1
		case "steering-message":
			blocks = append(blocks, block{start: start, end: i, steering: &m.Parts[i]})
			start = i + 1
		}
	}
	blocks = append(blocks, block{start: start, end: len(m.Parts)})
	lastNonEmpty := -1
	for i, b := range blocks {
		if b.end > b.start {
			lastNonEmpty = i
		}
	}
	for bi, b := range blocks {
		n := b.end - b.start
		asst := agentloop.Message{ID: m.ID, Role: agentloop.RoleAssistant}
		tool := agentloop.Message{Role: agentloop.RoleTool}
		var approvals []agentloop.Part
		add := func(msg *agentloop.Message, p agentloop.Part) {
			if msg.Parts == nil {
				msg.Parts = slab.take(n)
			}
			msg.Parts = append(msg.Parts, p)
		}
		finalBlock := lastMessage && bi == lastNonEmpty
		for i := b.start; i < b.end; i++ {
			if taken != nil && taken[i] {
				continue
			}
			p := &m.Parts[i]
			switch {
			case p.Type == "text":
				if p.Text != "" {
					add(&asst, agentloop.TextPart(p.Text))
				}
			case p.Type == "reasoning":
				sig, red := reasoningFromMetadata(p.ProviderMetadata)
				if p.Text != "" || sig != "" || red != "" {
					add(&asst, agentloop.Part{Type: agentloop.PartReasoning, Text: p.Text, Signature: sig, Redacted: red})
				}
			case p.Type == "file":
				f, err := fileOf(p, msg, i)
				if err != nil {
					return nil, err
				}
				add(&asst, agentloop.Part{Type: agentloop.PartFile, File: f})
			case p.IsTool():
				if p.State == StateInputStreaming || p.State == "" {
					continue
				}
				if p.State == StateApprovalRequested && beforeLastUser {
					continue
				}
				call := &agentloop.ToolCall{ID: p.ToolCallID, Name: p.ToolNameOf(), Args: argsFromInput(p.Input)}
				add(&asst, agentloop.Part{Type: agentloop.PartToolCall, ToolCall: call})
				if p.Approval != nil && p.Approval.ID != "" {
					approvals = append(approvals, agentloop.Part{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: call.ID, ID: p.Approval.ID}})
					if p.Approval.Approved != nil {
						add(&tool, agentloop.Part{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{
							CallID: call.ID, ID: p.Approval.ID, Approved: *p.Approval.Approved, Reason: p.Approval.Reason,
						}})
					}
				}
				result := func(content string, isErr bool) {
					add(&tool, agentloop.Part{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{
						CallID: call.ID, Name: call.Name, Content: content, IsError: isErr,
					}})
				}
				switch p.State {
				case StateOutputAvailable:
					if !isTrue(p.Preliminary) {
						result(outputContent(p.Output), false)
					}
				case StateOutputError:
					result(p.ErrorText, true)
				case StateOutputDenied:
					result(deniedContent(p.Approval), true)
				case StateApprovalResponded:
					if !finalBlock && p.Approval != nil && p.Approval.Approved != nil && !*p.Approval.Approved {
						result(deniedContent(p.Approval), true)
					}
				}
			}
		}
		asst.Parts = append(asst.Parts, approvals...)
		if len(asst.Parts) > 0 {
			h = append(h, asst)
			if len(tool.Parts) > 0 {
				h = append(h, tool)
			}
		}
		if b.steering != nil {
			parts, err := userParts(b.steering.Parts, msg, slab)
			if err != nil {
				return nil, err
			}
			if len(parts) > 0 {
				h = append(h, agentloop.Message{ID: b.steering.ID, Role: agentloop.RoleUser, Parts: parts})
			}
		}
	}
	return h, nil
}

// deniedContent is the result content of a denied call: the loop's words
// ([agentloop.DeniedContent]).
func deniedContent(a *UIApproval) string {
	if a == nil {
		return agentloop.DeniedContent("")
	}
	return agentloop.DeniedContent(a.Reason)
}

// argsFromInput returns a call's arguments from a tool part's input: the
// JSON as is, a JSON string's text (arguments that were not valid JSON
// travel as a string), and {} when absent or null.
func argsFromInput(input json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage(`{}`)
	}
	if trimmed[0] == '"' {
		var s string
		if json.Unmarshal(trimmed, &s) == nil {
			return json.RawMessage(s)
		}
	}
	return json.RawMessage(trimmed)
}

// outputContent returns the tool result content for a tool part's output:
// a JSON string gives its text, assistant-ui's envelope
// {"__aui_modelContent":[…],"value":…} gives the text of its text items
// (joined with newlines) or else the content of its value, and any other
// value gives its JSON text. An absent output gives "null".
func outputContent(output json.RawMessage) string {
	trimmed := bytes.TrimSpace(output)
	if len(trimmed) == 0 {
		return "null"
	}
	// One pass reads a string's text, or checks that the value is JSON
	// (an object that encoding/json would not read as the envelope) and
	// whether it is compact already.
	var d jsonscan.Decoder
	d.Reset(trimmed)
	switch trimmed[0] {
	case '"':
		if s, ok := d.Text(); ok && d.Finish() {
			return string(s)
		}
	case '{':
		if mayBeEnvelope(&d) {
			if s, ok := envelopeContent(trimmed); ok {
				return s
			}
			break
		}
		if !d.Spaced() {
			return string(trimmed)
		}
	default:
		if d.Skip() && d.Finish() && !d.Spaced() {
			return string(trimmed)
		}
	}
	if c, ok := jsonscan.AppendCompact(nil, trimmed); ok {
		return string(c)
	}
	return string(trimmed)
}

// mayBeEnvelope reads an object and reports whether it may be
// assistant-ui's envelope: it is not valid JSON, or has a key that
// encoding/json would read as "__aui_modelContent".
func mayBeEnvelope(d *jsonscan.Decoder) bool {
	if !d.BeginObject() {
		return true
	}
	for {
		k, ok := d.Key()
		if !ok {
			return !d.Finish()
		}
		if strings.EqualFold(string(k), "__aui_modelContent") || !d.Skip() {
			return true
		}
	}
}

// envelopeContent returns the content of assistant-ui's envelope
// {"__aui_modelContent":[…],"value":…}: the text of its text items
// (joined with newlines), or else the content of its value.
func envelopeContent(obj []byte) (string, bool) {
	var env struct {
		ModelContent []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"__aui_modelContent"`
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(obj, &env) != nil || env.ModelContent == nil {
		return "", false
	}
	var texts []string
	for _, c := range env.ModelContent {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	if len(texts) > 0 {
		return strings.Join(texts, "\n"), true
	}
	return outputContent(env.Value), true
}

// reasoningFromMetadata returns the provider signature and redacted data
// of a reasoning part: under "agentloop" ("signature", "redacted"), else
// under "anthropic" ("signature", "redactedData"). It reads the metadata
// as encoding/json reads it into a map[string]map[string]json.RawMessage
// (the last of duplicate keys; nothing at all when a provider's value is
// not an object or null, or the text is not JSON) and each value as a
// string ("" when it is not one), in one pass.
func reasoningFromMetadata(md json.RawMessage) (signature, redacted string) {
	if len(md) == 0 {
		return "", ""
	}
	var own, anthropic [2]string // signature, redacted
	var d jsonscan.Decoder
	d.Reset(md)
	if d.Kind() != jsonscan.Object || !d.BeginObject() {
		return "", ""
	}
	for {
		k, ok := d.Key()
		if !ok {
			break
		}
		var dst *[2]string
		var names [2]string
		switch string(k) {
		case metadataKey:
			dst, names = &own, [2]string{"signature", "redacted"}
		case "anthropic":
			dst, names = &anthropic, [2]string{"signature", "redactedData"}
		}
		switch d.Kind() {
		case jsonscan.Null:
			d.Null()
			if dst != nil {
				*dst = [2]string{}
			}
			continue
		case jsonscan.Object:
		default:
			return "", "" // encoding/json fails on the whole
		}
		if dst == nil {
			d.Skip()
			continue
		}
		*dst = [2]string{}
		d.BeginObject()
		for {
			k, ok := d.Key()
			if !ok {
				break
			}
			i := -1
			switch string(k) {
			case names[0]:
				i = 0
			case names[1]:
				i = 1
			}
			switch {
			case i < 0:
				d.Skip()
			case d.Kind() == jsonscan.String:
				v, _ := d.Text()
				dst[i] = string(v)
			default:
				dst[i] = "" // not a string: read as ""
				d.Skip()
			}
		}
	}
	if d.Err() != nil || !d.Finish() {
		return "", ""
	}
	signature, redacted = own[0], own[1]
	if signature == "" {
		signature = anthropic[0]
	}
	if redacted == "" {
		redacted = anthropic[1]
	}
	return signature, redacted
}

// FromHistory renders a history as the UIMessages a client holds after
// receiving it: system and user messages one for one; each run of
// assistant and tool messages as one assistant message, with a step-start
// before the parts of each assistant message and each tool call's state
// taken from the results and approval decisions that follow it
// (output-available, output-error, output-denied, approval-responded,
// approval-requested or input-available). Messages without an id get
// "msg-<index>". Every part is in its final state ("done"). A paused
// sub-agent at the end of h ([agentloop.AgentTool]) shows as the Mapper
// streamed it: a "data-subagent" part with what the sub-run did, then a
// step of the calls it waits for (ids "<callID>/<id>"; approval-requested,
// approval-responded once decided, or input-available for a client tool). An assistant
// message of a run with handoffs has the metadata {"agent": name} of its
// last agent ([agentloop.Message.Agent]), as the Mapper sends it.
func FromHistory(h agentloop.History) []UIMessage {
	var out []UIMessage
	for i := 0; i < len(h); {
		m := h[i]
		switch m.Role {
		case agentloop.RoleSystem, agentloop.RoleUser:
			ui := UIMessage{ID: idOr(m.ID, i), Role: string(m.Role), Parts: []UIPart{}}
			for _, p := range m.Parts {
				switch p.Type {
				case agentloop.PartText:
					ui.Parts = append(ui.Parts, UIPart{Type: "text", Text: p.Text, State: "done"})
				case agentloop.PartFile:
					if p.File != nil {
						ui.Parts = append(ui.Parts, filePart(p.File))
					}
				}
			}
			out = append(out, ui)
			i++
		default:
			j := i
			for j < len(h) && (h[j].Role == agentloop.RoleAssistant || h[j].Role == agentloop.RoleTool) {
				j++
			}
			out = append(out, assistantUI(h[i:j], i, j == len(h)))
			i = j
		}
	}
	return out
}

func idOr(id string, i int) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("msg-%d", i)
}

func filePart(f *agentloop.File) UIPart {
	url := f.URL
	if url == "" {
		url = f.DataURL()
	}
	return UIPart{Type: "file", MediaType: f.MediaType, Filename: f.Filename, URL: url}
}

// assistantUI renders one group of assistant and tool messages.
// The last group of a history also shows its paused sub-runs
// (subrunParts).
func assistantUI(group agentloop.History, index int, last bool) UIMessage {
	results := map[string]agentloop.ToolResult{}
	decisions := map[string]agentloop.Approval{}
	requests := map[string]string{}
	id := ""
	for _, m := range group {
		if m.Role == agentloop.RoleAssistant && id == "" {
			id = m.ID
		}
		for _, p := range m.Parts {
			switch {
			case p.Type == agentloop.PartToolResult && p.ToolResult != nil:
				results[p.ToolResult.CallID] = *p.ToolResult
			case p.Type == agentloop.PartApprovalResponse && p.Approval != nil:
				decisions[p.Approval.CallID] = *p.Approval
			case p.Type == agentloop.PartApprovalRequest && p.Approval != nil:
				requests[p.Approval.CallID] = p.Approval.ID
			}
		}
	}
	ui := UIMessage{ID: idOr(id, index), Role: "assistant", Parts: []UIPart{}}
	agent := ""
	for _, m := range group {
		if m.Role != agentloop.RoleAssistant {
			continue
		}
		if m.Agent != "" {
			agent = m.Agent
		}
		ui.Parts = append(ui.Parts, UIPart{Type: "step-start"})
		for _, p := range m.Parts {
			switch p.Type {
			case agentloop.PartText:
				ui.Parts = append(ui.Parts, UIPart{Type: "text", Text: p.Text, State: "done"})
			case agentloop.PartReasoning:
				part := UIPart{Type: "reasoning", Text: p.Text, State: "done"}
				if md := reasoningMetadata(p.Signature, p.Redacted); md != nil {
					part.ProviderMetadata, _ = json.Marshal(md)
				}
				ui.Parts = append(ui.Parts, part)
			case agentloop.PartFile:
				if p.File != nil {
					ui.Parts = append(ui.Parts, filePart(p.File))
				}
			case agentloop.PartToolCall:
				if p.ToolCall != nil {
					ui.Parts = append(ui.Parts, toolPart(*p.ToolCall, results, decisions, requests))
				}
			}
		}
	}
	if agent != "" {
		ui.Metadata, _ = json.Marshal(map[string]string{"agent": agent})
	}
	if last {
		ui.Parts = appendSubrunParts(ui.Parts, group)
	}
	return ui
}

func toolPart(c agentloop.ToolCall, results map[string]agentloop.ToolResult, decisions map[string]agentloop.Approval, requests map[string]string) UIPart {
	p := UIPart{Type: "tool-" + c.Name, ToolCallID: c.ID, Input: inputJSON(c.Args)}
	res, hasRes := results[c.ID]
	dec, hasDec := decisions[c.ID]
	reqID, hasReq := requests[c.ID]
	if hasReq || hasDec {
		a := &UIApproval{ID: reqID}
		if a.ID == "" {
			a.ID = dec.ID
		}
		if hasDec {
			approved := dec.Approved
			a.Approved = &approved
			a.Reason = dec.Reason
		}
		p.Approval = a
	}
	switch {
	case hasRes && hasDec && !dec.Approved:
		p.State = StateOutputDenied
	case hasRes && res.IsError:
		p.State = StateOutputError
		p.ErrorText = res.Content
	case hasRes:
		p.State = StateOutputAvailable
		p.Output = outputJSON(res.Content)
	case hasDec:
		p.State = StateApprovalResponded
	case hasReq:
		p.State = StateApprovalRequested
	default:
		p.State = StateInputAvailable
	}
	return p
}

func isTrue(b *bool) bool { return b != nil && *b }

// outputJSON returns the "output" value for a tool result's content: the
// content itself when it is a JSON value (compacted), else the content as a
// JSON string.
func outputJSON(content string) json.RawMessage {
	if v, ok := jsonValue([]byte(content)); ok {
		return v
	}
	b, _ := json.Marshal(content)
	return b
}

// inputJSON returns a call's arguments as the "input" value: the arguments
// when they are a JSON value ({} when empty), else the raw text as a JSON
// string.
func inputJSON(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage(`{}`)
	}
	if v, ok := jsonValue(args); ok {
		return v
	}
	b, _ := json.Marshal(string(args))
	return b
}

// jsonValue returns data compacted, when it is one JSON value that a
// client can read back as the same value: valid UTF-8 (which a browser
// would otherwise change) with numbers a float64 holds (JavaScript turns
// 1e400 into null).
func jsonValue(data []byte) (json.RawMessage, bool) {
	if !utf8.Valid(data) {
		return nil, false
	}
	out, ok := jsonscan.AppendCompact(make([]byte, 0, len(data)), data)
	if !ok || !numbersFitFloat64(out) {
		return nil, false
	}
	return out, true
}

// numbersFitFloat64 reports whether every number of the compact JSON
// value v is one a float64 holds, as encoding/json checks when it decodes
// into an any. Only a number with an exponent or of over 300 characters
// can be out of range, so only those are parsed.
func numbersFitFloat64(v []byte) bool {
	inString := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
		case c == '-' || '0' <= c && c <= '9':
			j, exp := i, false
			for ; j < len(v) && strings.IndexByte("+-.eE0123456789", v[j]) >= 0; j++ {
				exp = exp || v[j] == 'e' || v[j] == 'E'
			}
			if exp || j-i > 300 {
				if _, err := strconv.ParseFloat(string(v[i:j]), 64); err != nil {
					return false
				}
			}
			i = j - 1
		}
	}
	return true
}
