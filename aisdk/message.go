package aisdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// This file holds the messages a client posts: UIMessage, its parts, and
// their JSON, which keeps the keys this package does not know.
// UIMessage is the AI SDK's UIMessage.
type UIMessage struct {
	ID string `json:"id"`
	// Role is "system", "user" or "assistant".
	Role     string          `json:"role"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Parts    []UIPart        `json:"parts"`
}

// UIPart is one part of a [UIMessage]: Type says which of the fields are in
// use ("text", "reasoning", "file", "step-start", "tool-<name>",
// "dynamic-tool", "data-<name>", …). Keys this package does not know are kept
// in Extra and written back by MarshalJSON, so a part round-trips.
type UIPart struct {
	Type string `json:"type"`

	// text, reasoning
	Text  string    `json:"text,omitempty"`
	State PartState `json:"state,omitempty"` // also a tool part's state
	// reasoning, steering-message and data parts may carry an id.
	ID        string          `json:"id,omitempty"`
	Citations json.RawMessage `json:"citations,omitempty"`

	// custom
	Kind string `json:"kind,omitempty"`

	// source-url, source-document, file, reasoning-file
	SourceID          string            `json:"sourceId,omitempty"`
	URL               string            `json:"url,omitempty"`
	Title             string            `json:"title,omitempty"` // also tool parts
	MediaType         string            `json:"mediaType,omitempty"`
	Filename          string            `json:"filename,omitempty"`
	ProviderReference map[string]string `json:"providerReference,omitempty"`

	// tool-<name> and dynamic-tool
	ToolCallID             string          `json:"toolCallId,omitempty"`
	ToolName               string          `json:"toolName,omitempty"` // dynamic-tool only
	Input                  json.RawMessage `json:"input,omitempty"`
	Output                 json.RawMessage `json:"output,omitempty"`
	ErrorText              string          `json:"errorText,omitempty"`
	RawInput               json.RawMessage `json:"rawInput,omitempty"`
	InputEncoding          string          `json:"inputEncoding,omitempty"`
	ProviderExecuted       *bool           `json:"providerExecuted,omitempty"`
	Preliminary            *bool           `json:"preliminary,omitempty"`
	Dynamic                *bool           `json:"dynamic,omitempty"`
	Approval               *UIApproval     `json:"approval,omitempty"`
	ToolMetadata           json.RawMessage `json:"toolMetadata,omitempty"`
	CallProviderMetadata   json.RawMessage `json:"callProviderMetadata,omitempty"`
	ResultProviderMetadata json.RawMessage `json:"resultProviderMetadata,omitempty"`

	// data-<name>
	Data json.RawMessage `json:"data,omitempty"`

	// steering-message
	Parts []UIPart `json:"parts,omitempty"`

	ProviderMetadata json.RawMessage `json:"providerMetadata,omitempty"`

	// Extra holds the keys of the part that have no field above.
	Extra map[string]json.RawMessage `json:"-"`
}

// UIApproval is a tool part's approval: the request, and once the user
// answered, the decision (Approved non-nil).
type UIApproval struct {
	ID               string          `json:"id"`
	Approved         *bool           `json:"approved,omitempty"`
	Reason           string          `json:"reason,omitempty"`
	Descriptor       json.RawMessage `json:"descriptor,omitempty"`
	RequestReason    string          `json:"requestReason,omitempty"`
	IsAutomatic      *bool           `json:"isAutomatic,omitempty"`
	Signature        string          `json:"signature,omitempty"`
	InputSchemaInput json.RawMessage `json:"inputSchemaInput,omitempty"`
}

// PartState is the state of a part ([UIPart.State]): a text or reasoning
// part is streaming or done; a tool part goes through the other states
// (ui-message-stream.md §3.3).
type PartState string

// The states of text and reasoning parts.
const (
	StateStreaming PartState = "streaming"
	StateDone      PartState = "done"
)

// The states of tool parts.
const (
	StateInputStreaming    PartState = "input-streaming"
	StateInputAvailable    PartState = "input-available"
	StateApprovalRequested PartState = "approval-requested"
	StateApprovalResponded PartState = "approval-responded"
	StateOutputAvailable   PartState = "output-available"
	StateOutputError       PartState = "output-error"
	StateOutputDenied      PartState = "output-denied"
)

// IsTool reports whether the part is a tool part ("tool-<name>" or
// "dynamic-tool").
func (p UIPart) IsTool() bool {
	return p.Type == "dynamic-tool" || (strings.HasPrefix(p.Type, "tool-") && len(p.Type) > len("tool-"))
}

// ToolNameOf returns the tool name of a tool part: the part type after
// "tool-", or ToolName for a "dynamic-tool" part; "" for other parts.
func (p UIPart) ToolNameOf() string {
	switch {
	case p.Type == "dynamic-tool":
		return p.ToolName
	case p.IsTool():
		return p.Type[len("tool-"):]
	}
	return ""
}

type uiPartFields UIPart

// uiPartKeys are the JSON keys of UIPart's fields.
var uiPartKeys = map[string]bool{
	"type": true, "text": true, "state": true, "id": true, "citations": true, "kind": true,
	"sourceId": true, "url": true, "title": true, "mediaType": true, "filename": true, "providerReference": true,
	"toolCallId": true, "toolName": true, "input": true, "output": true, "errorText": true, "rawInput": true,
	"inputEncoding": true, "providerExecuted": true, "preliminary": true, "dynamic": true, "approval": true,
	"toolMetadata": true, "callProviderMetadata": true, "resultProviderMetadata": true, "data": true,
	"parts": true, "providerMetadata": true,
}

// UnmarshalJSON decodes a part, keeping unknown keys in Extra. A JSON null
// for "input", "output" or "data" is kept as null (it differs from absent).
func (p *UIPart) UnmarshalJSON(data []byte) error {
	var b bodyDecoder
	b.d.Reset(data)
	var q UIPart
	if b.part(&q) && b.d.Finish() {
		*p = q
		return nil
	}
	return p.unmarshalStd(data)
}

// unmarshalStd decodes a part with encoding/json: the parts the one-pass
// decoder (decode.go) gives up on.
func (p *UIPart) unmarshalStd(data []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	var f uiPartFields
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*p = UIPart(f)
	for k, v := range all {
		if !uiPartKeys[k] {
			if p.Extra == nil {
				p.Extra = make(map[string]json.RawMessage)
			}
			p.Extra[k] = v
		}
	}
	return nil
}

// MarshalJSON encodes the part with its Extra keys (which never override a
// field of the struct). A text or reasoning part always has its "text", as
// the AI SDK's message schema requires, even when empty.
func (p UIPart) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(uiPartFields(p))
	if err == nil && p.Text == "" && (p.Type == "text" || p.Type == "reasoning") {
		b = append([]byte(`{"text":"",`), b[1:]...)
	}
	if err != nil || len(p.Extra) == 0 {
		return b, err
	}
	return mergeExtra(b, p.Extra, uiPartKeys)
}

// mergeExtra appends the keys of extra that known does not list to the JSON
// object b, in sorted order.
func mergeExtra(b []byte, extra map[string]json.RawMessage, known map[string]bool) ([]byte, error) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !known[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return b, nil
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1])
	for i, k := range keys {
		v := extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("aisdk: extra key %q is not valid JSON", k)
		}
		if i > 0 || len(b) > 2 {
			buf.WriteByte(',')
		}
		appendString(&buf, k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
