package aisdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Chunk is one event of a UI message stream (ui-message-stream.md §2.1).
// Every chunk type of AI SDK 7 has a struct in this package; all of them
// marshal to the wire JSON with their "type" key first, optional fields
// absent (never null), and the "input", "output" and "data" keys always
// present (null when the Go value is nil).
type Chunk interface {
	// ChunkType returns the wire "type" of the chunk, e.g. "text-delta".
	ChunkType() string
}

// ProviderMetadata is the two-level providerMetadata object of the protocol:
// provider name → key → any JSON value.
type ProviderMetadata map[string]map[string]json.RawMessage

// StartChunk ("start") opens a response. MessageID, when set, names the
// assistant message the response builds (a continuation repeats the posted
// assistant message's id).
type StartChunk struct {
	MessageID       string          `json:"messageId,omitempty"`
	MessageMetadata json.RawMessage `json:"messageMetadata,omitempty"`
}

// StartStepChunk ("start-step") opens a step: one model call.
type StartStepChunk struct{}

// FinishStepChunk ("finish-step") closes a step.
type FinishStepChunk struct{}

// ResetStepChunk ("reset-step") drops every part after the last step start.
type ResetStepChunk struct{}

// TextStartChunk ("text-start") opens a text part.
type TextStartChunk struct {
	ID               string           `json:"id"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// TextDeltaChunk ("text-delta") appends to the open text part ID.
type TextDeltaChunk struct {
	ID               string           `json:"id"`
	Delta            string           `json:"delta"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// TextEndChunk ("text-end") closes the text part ID.
type TextEndChunk struct {
	ID               string           `json:"id"`
	Citations        json.RawMessage  `json:"citations,omitempty"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// ReasoningStartChunk ("reasoning-start") opens a reasoning part.
type ReasoningStartChunk struct {
	ID               string           `json:"id"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// ReasoningDeltaChunk ("reasoning-delta") appends to the open reasoning part ID.
type ReasoningDeltaChunk struct {
	ID               string           `json:"id"`
	Delta            string           `json:"delta"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// ReasoningEndChunk ("reasoning-end") closes the reasoning part ID. Its
// ProviderMetadata is stored on the part by the client.
type ReasoningEndChunk struct {
	ID               string           `json:"id"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// ErrorChunk ("error") reports a failure. Clients treat it as terminal.
type ErrorChunk struct {
	ErrorText string `json:"errorText"`
}

// ToolInputStartChunk ("tool-input-start") creates a tool part in state
// input-streaming. Leave ProviderExecuted and Dynamic nil for application
// tools: a client tool must carry neither.
type ToolInputStartChunk struct {
	ToolCallID       string                     `json:"toolCallId"`
	ToolName         string                     `json:"toolName"`
	InputEncoding    string                     `json:"inputEncoding,omitempty"`
	ProviderExecuted *bool                      `json:"providerExecuted,omitempty"`
	ProviderMetadata ProviderMetadata           `json:"providerMetadata,omitempty"`
	ToolMetadata     map[string]json.RawMessage `json:"toolMetadata,omitempty"`
	Dynamic          *bool                      `json:"dynamic,omitempty"`
	Title            string                     `json:"title,omitempty"`
}

// ToolInputDeltaChunk ("tool-input-delta") appends argument text to a call
// opened by a [ToolInputStartChunk].
type ToolInputDeltaChunk struct {
	ToolCallID     string `json:"toolCallId"`
	InputTextDelta string `json:"inputTextDelta"`
}

// ToolInputAvailableChunk ("tool-input-available") gives a call's complete
// input. Without ProviderExecuted, the client's onToolCall fires for it.
type ToolInputAvailableChunk struct {
	ToolCallID       string                     `json:"toolCallId"`
	ToolName         string                     `json:"toolName"`
	Input            json.RawMessage            `json:"input"`
	ProviderExecuted *bool                      `json:"providerExecuted,omitempty"`
	ProviderMetadata ProviderMetadata           `json:"providerMetadata,omitempty"`
	ToolMetadata     map[string]json.RawMessage `json:"toolMetadata,omitempty"`
	Dynamic          *bool                      `json:"dynamic,omitempty"`
	Title            string                     `json:"title,omitempty"`
}

// ToolInputErrorChunk ("tool-input-error") reports an invalid tool call.
type ToolInputErrorChunk struct {
	ToolCallID       string                     `json:"toolCallId"`
	ToolName         string                     `json:"toolName"`
	Input            json.RawMessage            `json:"input"`
	ErrorText        string                     `json:"errorText"`
	ProviderExecuted *bool                      `json:"providerExecuted,omitempty"`
	ProviderMetadata ProviderMetadata           `json:"providerMetadata,omitempty"`
	ToolMetadata     map[string]json.RawMessage `json:"toolMetadata,omitempty"`
	Dynamic          *bool                      `json:"dynamic,omitempty"`
	Title            string                     `json:"title,omitempty"`
}

// ToolApprovalRequestChunk ("tool-approval-request") asks the user to
// approve the call ToolCallID; the client answers with ApprovalID.
type ToolApprovalRequestChunk struct {
	ApprovalID         string          `json:"approvalId"`
	ToolCallID         string          `json:"toolCallId"`
	ApprovalDescriptor json.RawMessage `json:"approvalDescriptor,omitempty"`
	InputSchemaInput   json.RawMessage `json:"inputSchemaInput,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	IsAutomatic        *bool           `json:"isAutomatic,omitempty"`
	Signature          string          `json:"signature,omitempty"`
}

// ToolApprovalResponseChunk ("tool-approval-response") records a decision.
type ToolApprovalResponseChunk struct {
	ApprovalID       string           `json:"approvalId"`
	Approved         bool             `json:"approved"`
	Reason           string           `json:"reason,omitempty"`
	ProviderExecuted *bool            `json:"providerExecuted,omitempty"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// ToolOutputAvailableChunk ("tool-output-available") gives a call's output.
// A nil Output is sent as null.
type ToolOutputAvailableChunk struct {
	ToolCallID       string                     `json:"toolCallId"`
	Output           json.RawMessage            `json:"output"`
	ProviderExecuted *bool                      `json:"providerExecuted,omitempty"`
	ProviderMetadata ProviderMetadata           `json:"providerMetadata,omitempty"`
	ToolMetadata     map[string]json.RawMessage `json:"toolMetadata,omitempty"`
	Dynamic          *bool                      `json:"dynamic,omitempty"`
	Preliminary      *bool                      `json:"preliminary,omitempty"`
}

// ToolOutputErrorChunk ("tool-output-error") reports that a call failed.
type ToolOutputErrorChunk struct {
	ToolCallID       string                     `json:"toolCallId"`
	ErrorText        string                     `json:"errorText"`
	ProviderExecuted *bool                      `json:"providerExecuted,omitempty"`
	ProviderMetadata ProviderMetadata           `json:"providerMetadata,omitempty"`
	ToolMetadata     map[string]json.RawMessage `json:"toolMetadata,omitempty"`
	Dynamic          *bool                      `json:"dynamic,omitempty"`
}

// ToolOutputDeniedChunk ("tool-output-denied") reports that a call was
// denied approval and did not run.
type ToolOutputDeniedChunk struct {
	ToolCallID string `json:"toolCallId"`
}

// SourceURLChunk ("source-url") adds a URL source.
type SourceURLChunk struct {
	SourceID         string           `json:"sourceId"`
	URL              string           `json:"url"`
	Title            string           `json:"title,omitempty"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// SourceDocumentChunk ("source-document") adds a document source.
type SourceDocumentChunk struct {
	SourceID         string           `json:"sourceId"`
	MediaType        string           `json:"mediaType"`
	Title            string           `json:"title"`
	Filename         string           `json:"filename,omitempty"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// FileChunk ("file") adds a file part; URL may be a data: URL.
type FileChunk struct {
	URL              string           `json:"url"`
	MediaType        string           `json:"mediaType"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// ReasoningFileChunk ("reasoning-file") adds a reasoning file part.
type ReasoningFileChunk struct {
	URL              string           `json:"url"`
	MediaType        string           `json:"mediaType"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// CustomChunk ("custom") adds a provider-specific part; Kind is
// "provider.type" by convention.
type CustomChunk struct {
	Kind             string           `json:"kind"`
	ProviderMetadata ProviderMetadata `json:"providerMetadata,omitempty"`
}

// SteeringMessageChunk ("steering-message", experimental) adds a steering
// message; Parts are text or file parts.
type SteeringMessageChunk struct {
	ID    string   `json:"id"`
	Parts []UIPart `json:"parts"`
}

// DataChunk ("data-<Name>") carries application data. Data is always sent
// (null when nil). A transient chunk is only passed to the client's onData.
type DataChunk struct {
	Name      string          `json:"-"`
	ID        string          `json:"id,omitempty"`
	Data      json.RawMessage `json:"data"`
	Transient *bool           `json:"transient,omitempty"`
}

// FinishChunk ("finish") ends a response. FinishReason is one of the
// Finish* constants, or "" to leave it out.
type FinishChunk struct {
	FinishReason    string          `json:"finishReason,omitempty"`
	MessageMetadata json.RawMessage `json:"messageMetadata,omitempty"`
}

// AbortChunk ("abort") says the response was aborted.
type AbortChunk struct {
	Reason string `json:"reason,omitempty"`
}

// MessageMetadataChunk ("message-metadata") merges metadata into the message.
// MessageMetadata is always sent (null when nil).
type MessageMetadataChunk struct {
	MessageMetadata json.RawMessage `json:"messageMetadata"`
}

// The finish reasons a [FinishChunk] may carry (AI SDK 7).
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishContentFilter = "content-filter"
	FinishToolCalls     = "tool-calls"
	FinishError         = "error"
	FinishInterrupted   = "interrupted"
	FinishOther         = "other"
)

// ChunkType returns "start".
func (StartChunk) ChunkType() string { return "start" }

// ChunkType returns "start-step".
func (StartStepChunk) ChunkType() string { return "start-step" }

// ChunkType returns "finish-step".
func (FinishStepChunk) ChunkType() string { return "finish-step" }

// ChunkType returns "reset-step".
func (ResetStepChunk) ChunkType() string { return "reset-step" }

// ChunkType returns "text-start".
func (TextStartChunk) ChunkType() string { return "text-start" }

// ChunkType returns "text-delta".
func (TextDeltaChunk) ChunkType() string { return "text-delta" }

// ChunkType returns "text-end".
func (TextEndChunk) ChunkType() string { return "text-end" }

// ChunkType returns "reasoning-start".
func (ReasoningStartChunk) ChunkType() string { return "reasoning-start" }

// ChunkType returns "reasoning-delta".
func (ReasoningDeltaChunk) ChunkType() string { return "reasoning-delta" }

// ChunkType returns "reasoning-end".
func (ReasoningEndChunk) ChunkType() string { return "reasoning-end" }

// ChunkType returns "error".
func (ErrorChunk) ChunkType() string { return "error" }

// ChunkType returns "tool-input-start".
func (ToolInputStartChunk) ChunkType() string { return "tool-input-start" }

// ChunkType returns "tool-input-delta".
func (ToolInputDeltaChunk) ChunkType() string { return "tool-input-delta" }

// ChunkType returns "tool-input-available".
func (ToolInputAvailableChunk) ChunkType() string { return "tool-input-available" }

// ChunkType returns "tool-input-error".
func (ToolInputErrorChunk) ChunkType() string { return "tool-input-error" }

// ChunkType returns "tool-approval-request".
func (ToolApprovalRequestChunk) ChunkType() string { return "tool-approval-request" }

// ChunkType returns "tool-approval-response".
func (ToolApprovalResponseChunk) ChunkType() string { return "tool-approval-response" }

// ChunkType returns "tool-output-available".
func (ToolOutputAvailableChunk) ChunkType() string { return "tool-output-available" }

// ChunkType returns "tool-output-error".
func (ToolOutputErrorChunk) ChunkType() string { return "tool-output-error" }

// ChunkType returns "tool-output-denied".
func (ToolOutputDeniedChunk) ChunkType() string { return "tool-output-denied" }

// ChunkType returns "source-url".
func (SourceURLChunk) ChunkType() string { return "source-url" }

// ChunkType returns "source-document".
func (SourceDocumentChunk) ChunkType() string { return "source-document" }

// ChunkType returns "file".
func (FileChunk) ChunkType() string { return "file" }

// ChunkType returns "reasoning-file".
func (ReasoningFileChunk) ChunkType() string { return "reasoning-file" }

// ChunkType returns "custom".
func (CustomChunk) ChunkType() string { return "custom" }

// ChunkType returns "steering-message".
func (SteeringMessageChunk) ChunkType() string { return "steering-message" }

// ChunkType returns "data-" followed by the chunk's Name.
func (c DataChunk) ChunkType() string { return "data-" + c.Name }

// ChunkType returns "finish".
func (FinishChunk) ChunkType() string { return "finish" }

// ChunkType returns "abort".
func (AbortChunk) ChunkType() string { return "abort" }

// ChunkType returns "message-metadata".
func (MessageMetadataChunk) ChunkType() string { return "message-metadata" }

func validFinishReason(r string) bool {
	switch r {
	case FinishStop, FinishLength, FinishContentFilter, FinishToolCalls, FinishError, FinishInterrupted, FinishOther:
		return true
	}
	return false
}

// MarshalChunk returns the wire JSON of c: its fields with "type" first.
func MarshalChunk(c Chunk) ([]byte, error) {
	if c == nil {
		return nil, errors.New("aisdk: nil chunk")
	}
	var buf bytes.Buffer
	if err := appendChunk(&buf, c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// appendChunk writes the wire JSON of c (without a trailing newline).
func appendChunk(buf *bytes.Buffer, c Chunk) error {
	// Fast paths for the chunks that make up most of a stream.
	switch v := c.(type) {
	case TextDeltaChunk:
		if v.ProviderMetadata == nil {
			buf.WriteString(`{"type":"text-delta","id":`)
			appendString(buf, v.ID)
			buf.WriteString(`,"delta":`)
			appendString(buf, v.Delta)
			buf.WriteByte('}')
			return nil
		}
	case ReasoningDeltaChunk:
		if v.ProviderMetadata == nil {
			buf.WriteString(`{"type":"reasoning-delta","id":`)
			appendString(buf, v.ID)
			buf.WriteString(`,"delta":`)
			appendString(buf, v.Delta)
			buf.WriteByte('}')
			return nil
		}
	case ToolInputDeltaChunk:
		buf.WriteString(`{"type":"tool-input-delta","toolCallId":`)
		appendString(buf, v.ToolCallID)
		buf.WriteString(`,"inputTextDelta":`)
		appendString(buf, v.InputTextDelta)
		buf.WriteByte('}')
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("aisdk: encoding %s chunk: %w", c.ChunkType(), err)
	}
	buf.Write(b)
	return nil
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does; HTML characters are not escaped.
func appendString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				buf.WriteByte('\\')
				buf.WriteByte(c)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			default:
				buf.WriteString(`\u00`)
				buf.WriteByte(hexDigits[c>>4])
				buf.WriteByte(hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf.WriteString(s[start:i])
			buf.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break some JavaScript
		// parsers; encoding/json escapes them too.
		if r == '\u2028' || r == '\u2029' {
			buf.WriteString(s[start:i])
			buf.WriteString(`\u202`)
			buf.WriteByte(hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}

// chunkMarshalers: each chunk type marshals with its type key, so that
// json.Marshal of a chunk (or of a slice of chunks) gives the wire form.

func withType(typ string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(body) + len(typ) + 12)
	buf.WriteString(`{"type":`)
	appendString(&buf, typ)
	if len(body) > 2 {
		buf.WriteByte(',')
		buf.Write(body[1 : len(body)-1])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// ParseChunk decodes one chunk from its wire JSON and checks it the way the
// AI SDK 7 client does: a known type, every required key present ("input",
// "output" and "data" may be null but not absent), and no typed optional
// field set to null. The error names the type and the field.
func ParseChunk(data []byte) (Chunk, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, fmt.Errorf("aisdk: chunk is not a JSON object: %w", err)
	}
	rawType, ok := keys["type"]
	if !ok {
		return nil, errors.New(`aisdk: chunk has no "type"`)
	}
	var typ string
	if err := json.Unmarshal(rawType, &typ); err != nil {
		return nil, fmt.Errorf(`aisdk: chunk "type" is not a string: %w`, err)
	}
	var c Chunk
	switch {
	case strings.HasPrefix(typ, "data-"):
		c = &DataChunk{Name: strings.TrimPrefix(typ, "data-")}
	default:
		newChunk, ok := chunkTypes[typ]
		if !ok {
			return nil, fmt.Errorf("aisdk: unknown chunk type %q", typ)
		}
		c = newChunk()
	}
	spec := chunkFields[typ]
	if strings.HasPrefix(typ, "data-") {
		spec = chunkFields["data-"]
	}
	for _, k := range spec.required {
		if _, ok := keys[k]; !ok {
			return nil, fmt.Errorf("aisdk: %s chunk: missing required field %q", typ, k)
		}
	}
	for k, v := range keys {
		if k == "type" || spec.anyTyped[k] {
			continue
		}
		if string(bytes.TrimSpace(v)) == "null" {
			return nil, fmt.Errorf("aisdk: %s chunk: field %q is null (optional fields must be absent instead)", typ, k)
		}
	}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("aisdk: %s chunk: %w", typ, err)
	}
	if f, ok := c.(*FinishChunk); ok && f.FinishReason != "" && !validFinishReason(f.FinishReason) {
		return nil, fmt.Errorf("aisdk: finish chunk: finishReason %q is not one of stop, length, content-filter, tool-calls, error, interrupted, other", f.FinishReason)
	}
	if _, ok := keys["finishReason"]; ok && typ == "finish" {
		if f := c.(*FinishChunk); f.FinishReason == "" {
			return nil, errors.New(`aisdk: finish chunk: finishReason "" is not a valid reason`)
		}
	}
	return deref(c), nil
}

type fieldSpec struct {
	required []string
	anyTyped map[string]bool // fields typed unknown: null is allowed
}

var (
	anyInput  = map[string]bool{"input": true, "approvalDescriptor": true, "inputSchemaInput": true}
	anyOutput = map[string]bool{"output": true}
)

// chunkFields lists, per chunk type, the required keys and the keys whose
// value may be null (typed unknown in the client's schema).
var chunkFields = map[string]fieldSpec{
	"start":                  {anyTyped: map[string]bool{"messageMetadata": true}},
	"text-start":             {required: []string{"id"}},
	"text-delta":             {required: []string{"id", "delta"}},
	"text-end":               {required: []string{"id"}},
	"reasoning-start":        {required: []string{"id"}},
	"reasoning-delta":        {required: []string{"id", "delta"}},
	"reasoning-end":          {required: []string{"id"}},
	"error":                  {required: []string{"errorText"}},
	"tool-input-start":       {required: []string{"toolCallId", "toolName"}},
	"tool-input-delta":       {required: []string{"toolCallId", "inputTextDelta"}},
	"tool-input-available":   {required: []string{"toolCallId", "toolName", "input"}, anyTyped: anyInput},
	"tool-input-error":       {required: []string{"toolCallId", "toolName", "input", "errorText"}, anyTyped: anyInput},
	"tool-approval-request":  {required: []string{"approvalId", "toolCallId"}, anyTyped: anyInput},
	"tool-approval-response": {required: []string{"approvalId", "approved"}},
	"tool-output-available":  {required: []string{"toolCallId", "output"}, anyTyped: anyOutput},
	"tool-output-error":      {required: []string{"toolCallId", "errorText"}},
	"tool-output-denied":     {required: []string{"toolCallId"}},
	"source-url":             {required: []string{"sourceId", "url"}},
	"source-document":        {required: []string{"sourceId", "mediaType", "title"}},
	"file":                   {required: []string{"url", "mediaType"}},
	"reasoning-file":         {required: []string{"url", "mediaType"}},
	"custom":                 {required: []string{"kind"}},
	"steering-message":       {required: []string{"id", "parts"}},
	"data-":                  {required: []string{"data"}, anyTyped: map[string]bool{"data": true}},
	"finish":                 {anyTyped: map[string]bool{"messageMetadata": true}},
	"message-metadata":       {required: []string{"messageMetadata"}, anyTyped: map[string]bool{"messageMetadata": true}},
}

var chunkTypes = map[string]func() Chunk{
	"start":                  func() Chunk { return &StartChunk{} },
	"start-step":             func() Chunk { return &StartStepChunk{} },
	"finish-step":            func() Chunk { return &FinishStepChunk{} },
	"reset-step":             func() Chunk { return &ResetStepChunk{} },
	"text-start":             func() Chunk { return &TextStartChunk{} },
	"text-delta":             func() Chunk { return &TextDeltaChunk{} },
	"text-end":               func() Chunk { return &TextEndChunk{} },
	"reasoning-start":        func() Chunk { return &ReasoningStartChunk{} },
	"reasoning-delta":        func() Chunk { return &ReasoningDeltaChunk{} },
	"reasoning-end":          func() Chunk { return &ReasoningEndChunk{} },
	"error":                  func() Chunk { return &ErrorChunk{} },
	"tool-input-start":       func() Chunk { return &ToolInputStartChunk{} },
	"tool-input-delta":       func() Chunk { return &ToolInputDeltaChunk{} },
	"tool-input-available":   func() Chunk { return &ToolInputAvailableChunk{} },
	"tool-input-error":       func() Chunk { return &ToolInputErrorChunk{} },
	"tool-approval-request":  func() Chunk { return &ToolApprovalRequestChunk{} },
	"tool-approval-response": func() Chunk { return &ToolApprovalResponseChunk{} },
	"tool-output-available":  func() Chunk { return &ToolOutputAvailableChunk{} },
	"tool-output-error":      func() Chunk { return &ToolOutputErrorChunk{} },
	"tool-output-denied":     func() Chunk { return &ToolOutputDeniedChunk{} },
	"source-url":             func() Chunk { return &SourceURLChunk{} },
	"source-document":        func() Chunk { return &SourceDocumentChunk{} },
	"file":                   func() Chunk { return &FileChunk{} },
	"reasoning-file":         func() Chunk { return &ReasoningFileChunk{} },
	"custom":                 func() Chunk { return &CustomChunk{} },
	"steering-message":       func() Chunk { return &SteeringMessageChunk{} },
	"finish":                 func() Chunk { return &FinishChunk{} },
	"abort":                  func() Chunk { return &AbortChunk{} },
	"message-metadata":       func() Chunk { return &MessageMetadataChunk{} },
}

// deref turns the pointer ParseChunk decoded into back into a value, so
// parsed chunks compare equal to the ones the package emits.
func deref(c Chunk) Chunk {
	switch v := c.(type) {
	case *StartChunk:
		return *v
	case *StartStepChunk:
		return *v
	case *FinishStepChunk:
		return *v
	case *ResetStepChunk:
		return *v
	case *TextStartChunk:
		return *v
	case *TextDeltaChunk:
		return *v
	case *TextEndChunk:
		return *v
	case *ReasoningStartChunk:
		return *v
	case *ReasoningDeltaChunk:
		return *v
	case *ReasoningEndChunk:
		return *v
	case *ErrorChunk:
		return *v
	case *ToolInputStartChunk:
		return *v
	case *ToolInputDeltaChunk:
		return *v
	case *ToolInputAvailableChunk:
		return *v
	case *ToolInputErrorChunk:
		return *v
	case *ToolApprovalRequestChunk:
		return *v
	case *ToolApprovalResponseChunk:
		return *v
	case *ToolOutputAvailableChunk:
		return *v
	case *ToolOutputErrorChunk:
		return *v
	case *ToolOutputDeniedChunk:
		return *v
	case *SourceURLChunk:
		return *v
	case *SourceDocumentChunk:
		return *v
	case *FileChunk:
		return *v
	case *ReasoningFileChunk:
		return *v
	case *CustomChunk:
		return *v
	case *SteeringMessageChunk:
		return *v
	case *DataChunk:
		return *v
	case *FinishChunk:
		return *v
	case *AbortChunk:
		return *v
	case *MessageMetadataChunk:
		return *v
	}
	return c
}

// MarshalJSON methods: every chunk marshals with its "type" key first.

// MarshalJSON encodes the chunk in its wire form.
func (c StartChunk) MarshalJSON() ([]byte, error) {
	type plain StartChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c StartStepChunk) MarshalJSON() ([]byte, error) {
	type plain StartStepChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c FinishStepChunk) MarshalJSON() ([]byte, error) {
	type plain FinishStepChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ResetStepChunk) MarshalJSON() ([]byte, error) {
	type plain ResetStepChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c TextStartChunk) MarshalJSON() ([]byte, error) {
	type plain TextStartChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c TextDeltaChunk) MarshalJSON() ([]byte, error) {
	type plain TextDeltaChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c TextEndChunk) MarshalJSON() ([]byte, error) {
	type plain TextEndChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ReasoningStartChunk) MarshalJSON() ([]byte, error) {
	type plain ReasoningStartChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ReasoningDeltaChunk) MarshalJSON() ([]byte, error) {
	type plain ReasoningDeltaChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ReasoningEndChunk) MarshalJSON() ([]byte, error) {
	type plain ReasoningEndChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ErrorChunk) MarshalJSON() ([]byte, error) {
	type plain ErrorChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolInputStartChunk) MarshalJSON() ([]byte, error) {
	type plain ToolInputStartChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolInputDeltaChunk) MarshalJSON() ([]byte, error) {
	type plain ToolInputDeltaChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolInputAvailableChunk) MarshalJSON() ([]byte, error) {
	type plain ToolInputAvailableChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolInputErrorChunk) MarshalJSON() ([]byte, error) {
	type plain ToolInputErrorChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolApprovalRequestChunk) MarshalJSON() ([]byte, error) {
	type plain ToolApprovalRequestChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolApprovalResponseChunk) MarshalJSON() ([]byte, error) {
	type plain ToolApprovalResponseChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolOutputAvailableChunk) MarshalJSON() ([]byte, error) {
	type plain ToolOutputAvailableChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolOutputErrorChunk) MarshalJSON() ([]byte, error) {
	type plain ToolOutputErrorChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolOutputDeniedChunk) MarshalJSON() ([]byte, error) {
	type plain ToolOutputDeniedChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c SourceURLChunk) MarshalJSON() ([]byte, error) {
	type plain SourceURLChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c SourceDocumentChunk) MarshalJSON() ([]byte, error) {
	type plain SourceDocumentChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c FileChunk) MarshalJSON() ([]byte, error) {
	type plain FileChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ReasoningFileChunk) MarshalJSON() ([]byte, error) {
	type plain ReasoningFileChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c CustomChunk) MarshalJSON() ([]byte, error) {
	type plain CustomChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c SteeringMessageChunk) MarshalJSON() ([]byte, error) {
	type plain SteeringMessageChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c DataChunk) MarshalJSON() ([]byte, error) {
	type plain DataChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c FinishChunk) MarshalJSON() ([]byte, error) {
	type plain FinishChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c AbortChunk) MarshalJSON() ([]byte, error) {
	type plain AbortChunk
	return withType(c.ChunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c MessageMetadataChunk) MarshalJSON() ([]byte, error) {
	type plain MessageMetadataChunk
	return withType(c.ChunkType(), plain(c))
}
