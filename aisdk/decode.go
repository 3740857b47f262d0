package aisdk

import (
	"encoding/json"

	"github.com/agentloop/agentloop/internal/jsonscan"
)

// This file decodes a request body in one pass: every message and part is
// read once, straight into its struct, with no reflection and no
// intermediate maps or raw copies (issue 16: the request path of a long
// chat).
//
// It takes the bodies that clients send. On anything else (a syntax or type
// error, a limit passed, a duplicate key, a key that only matches a field
// case-insensitively, a null where clients send none) it gives up, and the
// body is decoded again with encoding/json (decodeBodyStd, unmarshalStd),
// which either reads it the same way or returns the error that names the
// problem. So it never changes a result, only how fast it comes; the fuzz
// tests check that the two decoders agree.

// bodyDecoder decodes one body; it is used once.
type bodyDecoder struct {
	d     jsonscan.Decoder
	types map[string]string // tool part types, interned
	slab  []UIPart          // zeroed parts not yet handed out (parts)
	slabs int               // the size of the last slab
	depth int               // of the parts array being read: 1 for a message's

	// A body the decoder owns (share) is kept whole, once as bytes and
	// once as a string: a raw value is a slice of the bytes and a string
	// without escapes a substring of the string, instead of a copy each.
	// Otherwise (own is false: UnmarshalJSON) each value is copied.
	own  bool
	body string
}

// maxPartSlab is the most parts a slab holds (32 KB), unless one message
// needs more.
const maxPartSlab = 64

// share makes the decoder read data into values that share its memory:
// the caller hands data over and never changes it. It costs one copy of
// the body (as a string) instead of one allocation per value; the values
// keep the whole body alive, which a request's messages do for its run
// anyway.
func (b *bodyDecoder) share(data []byte) {
	b.own = true
	b.body = string(data)
}

// decodeBodyFast decodes the body, or reports false for decodeBodyStd to
// decode it. The request's raw values are slices of data (share), which
// the caller must not change afterwards.
func decodeBodyFast(data []byte, limits Limits) (*ChatRequest, bool) {
	var b bodyDecoder
	d := &b.d
	d.Reset(data)
	b.share(data)
	if !d.BeginObject() {
		return nil, false
	}
	req := &ChatRequest{}
	var seen uint16
	var msgs bool
	for {
		k, ok := d.Key()
		if !ok {
			break
		}
		bit := uint16(0)
		switch string(k) {
		case "id":
			bit, ok = 1<<0, b.str(&req.ID)
		case "messages":
			bit, msgs = 1<<1, true
			req.Messages, ok = b.messages(limits)
		case "trigger":
			bit, ok = 1<<2, b.str((*string)(&req.Trigger))
		case "messageId":
			bit, ok = 1<<3, b.str(&req.MessageID)
		case "tools":
			bit = 1 << 4
			var raw []byte
			if raw, ok = d.Raw(); ok && string(raw) != "null" {
				var err error
				req.Tools, err = decodeTools(raw)
				ok = err == nil
			}
		case "system":
			bit, ok = 1<<5, b.str(&req.System)
		case "callSettings":
			bit = 1 << 6
			var raw []byte
			if raw, ok = d.Raw(); ok && string(raw) != "null" {
				ok = json.Unmarshal(raw, &req.CallSettings) == nil
			}
		case "config":
			bit, ok = 1<<7, b.raw(&req.Config)
		case "metadata":
			bit, ok = 1<<8, b.raw(&req.Metadata)
		default:
			key := string(k)
			if _, dup := req.Extra[key]; dup {
				return nil, false
			}
			var raw json.RawMessage
			if !b.raw(&raw) {
				return nil, false
			}
			if req.Extra == nil {
				req.Extra = make(map[string]json.RawMessage)
			}
			req.Extra[key] = raw
		}
		if !ok || seen&bit != 0 {
			return nil, false
		}
		seen |= bit
	}
	if d.Err() != nil || !d.Finish() || !msgs || len(req.Messages) == 0 {
		return nil, false
	}
	switch req.Trigger {
	case "", TriggerSubmit, TriggerRegenerate:
	default:
		return nil, false
	}
	return req, true
}

// messages reads the "messages" array, checking each message as
// DecodeRequest does and stopping early past a limit.
func (b *bodyDecoder) messages(limits Limits) ([]UIMessage, bool) {
	d := &b.d
	if !d.BeginArray() {
		return nil, false
	}
	var msgs []UIMessage
	parts := 0
	for d.More() {
		if limits.MaxMessages > 0 && len(msgs) >= limits.MaxMessages {
			return nil, false
		}
		var m UIMessage
		if !b.message(&m) || checkMessage(len(msgs), &m) != nil {
			return nil, false
		}
		parts += len(m.Parts)
		if limits.MaxParts > 0 && parts > limits.MaxParts {
			return nil, false
		}
		msgs = append(msgs, m)
	}
	return msgs, d.Err() == nil
}

// uiMessageKeys are the JSON keys of UIMessage's fields.
var uiMessageKeys = []string{"id", "role", "metadata", "parts"}

func (b *bodyDecoder) message(m *UIMessage) bool {
	d := &b.d
	if !d.BeginObject() {
		return false
	}
	var seen uint8
	for {
		k, ok := d.Key()
		if !ok {
			return d.Err() == nil
		}
		bit := uint8(0)
		switch string(k) {
		case "id":
			bit, ok = 1<<0, b.str(&m.ID)
		case "role":
			bit, ok = 1<<1, b.role(&m.Role)
		case "metadata":
			bit, ok = 1<<2, b.raw(&m.Metadata)
		case "parts":
			bit, ok = 1<<3, b.parts(&m.Parts)
		default:
			// encoding/json ignores other keys, but matches a key to a
			// field case-insensitively.
			ok = !jsonscan.FoldsToAny(k, uiMessageKeys) && d.Skip()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// parts reads an array of parts; null leaves *dst nil.
//
// A message's parts are read in place into a slab shared by the body's
// messages, so that a long chat costs a few allocations for its parts
// rather than one per message, and the array is read once: the parts go
// into the rest of the slab, and when it runs out those read so far move
// to a new one. Only the first message's parts are counted first, to size
// the first slab, so that a short body allocates little. Each slice's
// capacity is its length, so that an append to it never reaches a
// neighbour's parts. The parts of a part (nested) get their own slice.
func (b *bodyDecoder) parts(dst *[]UIPart) bool {
	d := &b.d
	if d.Null() {
		*dst = nil
		return true
	}
	if b.depth > 0 {
		return b.nestedParts(dst)
	}
	if b.slabs == 0 {
		b.slabs = max(d.ArrayLen(), 1)
		b.slab = make([]UIPart, b.slabs)
	}
	if !d.BeginArray() {
		return false
	}
	b.depth++
	parts := b.slab[:0]
	for d.More() {
		if len(parts) == cap(parts) {
			b.slabs = max(min(max(2*b.slabs, 8), maxPartSlab), 2*len(parts))
			b.slab = make([]UIPart, b.slabs)
			parts = b.slab[:copy(b.slab, parts)]
		}
		parts = parts[:len(parts)+1] // zero: new memory
		if !b.part(&parts[len(parts)-1]) {
			return false
		}
	}
	b.depth--
	b.slab = b.slab[len(parts):]
	*dst = parts[:len(parts):len(parts)]
	return d.Err() == nil
}

// nestedParts reads the parts of a part.
func (b *bodyDecoder) nestedParts(dst *[]UIPart) bool {
	d := &b.d
	if !d.BeginArray() {
		return false
	}
	b.depth++
	parts := []UIPart{}
	for d.More() {
		parts = append(parts, UIPart{})
		if !b.part(&parts[len(parts)-1]) {
			return false
		}
	}
	b.depth--
	*dst = parts
	return d.Err() == nil
}

// uiPartKeyList are the keys of uiPartKeys, for the case-insensitive check.
var uiPartKeyList = []string{
	"type", "text", "state", "id", "citations", "kind",
	"sourceId", "url", "title", "mediaType", "filename", "providerReference",
	"toolCallId", "toolName", "input", "output", "errorText", "rawInput",
	"inputEncoding", "providerExecuted", "preliminary", "dynamic", "approval",
	"toolMetadata", "callProviderMetadata", "resultProviderMetadata", "data",
	"parts", "providerMetadata",
}

// part reads one part, as UnmarshalJSON does.
func (b *bodyDecoder) part(p *UIPart) bool {
	d := &b.d
	if !d.BeginObject() {
		return false
	}
	var seen uint32
	for {
		k, ok := d.Key()
		if !ok {
			return d.Err() == nil
		}
		bit := uint32(0)
		switch string(k) {
		case "type":
			bit, ok = 1<<0, b.partType(&p.Type)
		case "text":
			bit, ok = 1<<1, b.str(&p.Text)
		case "state":
			bit, ok = 1<<2, b.state(&p.State)
		case "id":
			bit, ok = 1<<3, b.str(&p.ID)
		case "citations":
			bit, ok = 1<<4, b.raw(&p.Citations)
		case "kind":
			bit, ok = 1<<5, b.str(&p.Kind)
		case "sourceId":
			bit, ok = 1<<6, b.str(&p.SourceID)
		case "url":
			bit, ok = 1<<7, b.str(&p.URL)
		case "title":
			bit, ok = 1<<8, b.str(&p.Title)
		case "mediaType":
			bit, ok = 1<<9, b.str(&p.MediaType)
		case "filename":
			bit, ok = 1<<10, b.str(&p.Filename)
		case "providerReference":
			bit, ok = 1<<11, b.stringMap(&p.ProviderReference)
		case "toolCallId":
			bit, ok = 1<<12, b.str(&p.ToolCallID)
		case "toolName":
			bit, ok = 1<<13, b.str(&p.ToolName)
		case "input":
			bit, ok = 1<<14, b.raw(&p.Input)
		case "output":
			bit, ok = 1<<15, b.raw(&p.Output)
		case "errorText":
			bit, ok = 1<<16, b.str(&p.ErrorText)
		case "rawInput":
			bit, ok = 1<<17, b.raw(&p.RawInput)
		case "inputEncoding":
			bit, ok = 1<<18, b.str(&p.InputEncoding)
		case "providerExecuted":
			bit, ok = 1<<19, b.flag(&p.ProviderExecuted)
		case "preliminary":
			bit, ok = 1<<20, b.flag(&p.Preliminary)
		case "dynamic":
			bit, ok = 1<<21, b.flag(&p.Dynamic)
		case "approval":
			bit, ok = 1<<22, b.approval(&p.Approval)
		case "toolMetadata":
			bit, ok = 1<<23, b.raw(&p.ToolMetadata)
		case "callProviderMetadata":
			bit, ok = 1<<24, b.raw(&p.CallProviderMetadata)
		case "resultProviderMetadata":
			bit, ok = 1<<25, b.raw(&p.ResultProviderMetadata)
		case "data":
			bit, ok = 1<<26, b.raw(&p.Data)
		case "parts":
			bit, ok = 1<<27, b.parts(&p.Parts)
		case "providerMetadata":
			bit, ok = 1<<28, b.raw(&p.ProviderMetadata)
		default:
			key := string(k)
			if jsonscan.FoldsToAny(k, uiPartKeyList) {
				return false
			}
			var raw json.RawMessage
			if !b.raw(&raw) {
				return false
			}
			if p.Extra == nil {
				p.Extra = make(map[string]json.RawMessage)
			}
			p.Extra[key] = raw // the last of duplicate keys, as in a map
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// uiApprovalKeys are the JSON keys of UIApproval's fields.
var uiApprovalKeys = []string{"id", "approved", "reason", "descriptor", "requestReason", "isAutomatic", "signature", "inputSchemaInput"}

// approval reads a part's approval; null leaves *dst nil.
func (b *bodyDecoder) approval(dst **UIApproval) bool {
	d := &b.d
	if d.Null() {
		*dst = nil
		return true
	}
	if !d.BeginObject() {
		return false
	}
	a := &UIApproval{}
	var seen uint8
	for {
		k, ok := d.Key()
		if !ok {
			*dst = a
			return d.Err() == nil
		}
		bit := uint8(0)
		switch string(k) {
		case "id":
			bit, ok = 1<<0, b.str(&a.ID)
		case "approved":
			bit, ok = 1<<1, b.flag(&a.Approved)
		case "reason":
			bit, ok = 1<<2, b.str(&a.Reason)
		case "descriptor":
			bit, ok = 1<<3, b.raw(&a.Descriptor)
		case "requestReason":
			bit, ok = 1<<4, b.str(&a.RequestReason)
		case "isAutomatic":
			bit, ok = 1<<5, b.flag(&a.IsAutomatic)
		case "signature":
			bit, ok = 1<<6, b.str(&a.Signature)
		case "inputSchemaInput":
			bit, ok = 1<<7, b.raw(&a.InputSchemaInput)
		default:
			ok = !jsonscan.FoldsToAny(k, uiApprovalKeys) && d.Skip()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// str reads a string; null leaves *dst as it is, as in encoding/json.
func (b *bodyDecoder) str(dst *string) bool {
	if b.d.Null() {
		return true
	}
	s, at, ok := b.d.TextAt()
	switch {
	case !ok:
	case b.own && at >= 0:
		*dst = b.body[at : at+len(s)]
	default:
		*dst = string(s)
	}
	return ok
}

// raw reads any value as it stands (null included).
func (b *bodyDecoder) raw(dst *json.RawMessage) bool {
	raw, ok := b.d.Raw()
	switch {
	case !ok:
	case b.own:
		*dst = raw[:len(raw):len(raw)]
	default:
		*dst = append(json.RawMessage(nil), raw...)
	}
	return ok
}

// flag reads a boolean; null makes *dst nil.
func (b *bodyDecoder) flag(dst **bool) bool {
	if b.d.Null() {
		*dst = nil
		return true
	}
	v, ok := b.d.Bool()
	if ok {
		*dst = &v
	}
	return ok
}

// stringMap reads an object of strings; null makes *dst nil.
func (b *bodyDecoder) stringMap(dst *map[string]string) bool {
	d := &b.d
	if d.Null() {
		*dst = nil
		return true
	}
	if !d.BeginObject() {
		return false
	}
	m := make(map[string]string)
	for {
		k, ok := d.Key()
		if !ok {
			*dst = m
			return d.Err() == nil
		}
		key := string(k)
		v, ok := d.Text() // a null value is left to encoding/json
		if !ok {
			return false
		}
		m[key] = string(v)
	}
}

// partType reads a part's type, sharing the string of a type seen before.
func (b *bodyDecoder) partType(dst *string) bool {
	if b.d.Null() {
		return true
	}
	s, ok := b.d.Text()
	if !ok {
		return false
	}
	switch string(s) {
	case "text":
		*dst = "text"
	case "reasoning":
		*dst = "reasoning"
	case "step-start":
		*dst = "step-start"
	case "file":
		*dst = "file"
	case "dynamic-tool":
		*dst = "dynamic-tool"
	default:
		t, ok := b.types[string(s)]
		if !ok {
			if b.types == nil {
				b.types = make(map[string]string)
			}
			t = string(s)
			b.types[t] = t
		}
		*dst = t
	}
	return true
}

// role reads a message's role, without allocating for a known one.
func (b *bodyDecoder) role(dst *string) bool {
	if b.d.Null() {
		return true
	}
	s, ok := b.d.Text()
	if !ok {
		return false
	}
	switch string(s) {
	case "user":
		*dst = "user"
	case "assistant":
		*dst = "assistant"
	case "system":
		*dst = "system"
	default:
		*dst = string(s)
	}
	return true
}

// state reads a part's state, without allocating for a known one.
func (b *bodyDecoder) state(dst *PartState) bool {
	if b.d.Null() {
		return true
	}
	s, ok := b.d.Text()
	if !ok {
		return false
	}
	for _, st := range partStates {
		if string(s) == string(st) {
			*dst = st
			return true
		}
	}
	*dst = PartState(s)
	return true
}

var partStates = []PartState{
	StateDone, StateStreaming, StateInputStreaming, StateInputAvailable, StateApprovalRequested,
	StateApprovalResponded, StateOutputAvailable, StateOutputError, StateOutputDenied,
}
