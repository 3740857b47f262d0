package aisdk

import "encoding/json"

// Chunk is one event of a UI message stream (ui-message-stream.md §2.1).
// Every chunk type of AI SDK 7 has a struct in this package (this file);
// json.Marshal of any of them gives the wire JSON, with the "type" key
// first, optional fields absent (never null), and the "input", "output" and
// "data" keys always present (null when the Go value is nil). [ParseChunk]
// reads one back.
//
// The set is closed: every chunk is one of this package's types.
type Chunk interface {
	chunkType() string
}

// ChunkType returns the wire "type" of c: "text-delta", "data-weather", …
func ChunkType(c Chunk) string { return c.chunkType() }

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

// FinishChunk ("finish") ends a response. FinishReason is "" to leave it
// out.
type FinishChunk struct {
	FinishReason    FinishReason    `json:"finishReason,omitempty"`
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

// FinishReason is the protocol's reason for the end of a response, as a
// [FinishChunk] carries it. It is spelled with hyphens ("tool-calls"), unlike
// [agentloop.FinishReason] ("tool_calls"); the [Mapper] converts.
type FinishReason string

// The finish reasons of AI SDK 7. The client rejects any other value.
const (
	FinishReasonStop          FinishReason = "stop"
	FinishReasonLength        FinishReason = "length"
	FinishReasonContentFilter FinishReason = "content-filter"
	FinishReasonToolCalls     FinishReason = "tool-calls"
	FinishReasonError         FinishReason = "error"
	FinishReasonInterrupted   FinishReason = "interrupted"
	FinishReasonOther         FinishReason = "other"
)

func (r FinishReason) valid() bool {
	switch r {
	case FinishReasonStop, FinishReasonLength, FinishReasonContentFilter, FinishReasonToolCalls,
		FinishReasonError, FinishReasonInterrupted, FinishReasonOther:
		return true
	}
	return false
}

func (StartChunk) chunkType() string { return "start" }

func (StartStepChunk) chunkType() string { return "start-step" }

func (FinishStepChunk) chunkType() string { return "finish-step" }

func (ResetStepChunk) chunkType() string { return "reset-step" }

func (TextStartChunk) chunkType() string { return "text-start" }

func (TextDeltaChunk) chunkType() string { return "text-delta" }

func (TextEndChunk) chunkType() string { return "text-end" }

func (ReasoningStartChunk) chunkType() string { return "reasoning-start" }

func (ReasoningDeltaChunk) chunkType() string { return "reasoning-delta" }

func (ReasoningEndChunk) chunkType() string { return "reasoning-end" }

func (ErrorChunk) chunkType() string { return "error" }

func (ToolInputStartChunk) chunkType() string { return "tool-input-start" }

func (ToolInputDeltaChunk) chunkType() string { return "tool-input-delta" }

func (ToolInputAvailableChunk) chunkType() string { return "tool-input-available" }

func (ToolInputErrorChunk) chunkType() string { return "tool-input-error" }

func (ToolApprovalRequestChunk) chunkType() string { return "tool-approval-request" }

func (ToolApprovalResponseChunk) chunkType() string { return "tool-approval-response" }

func (ToolOutputAvailableChunk) chunkType() string { return "tool-output-available" }

func (ToolOutputErrorChunk) chunkType() string { return "tool-output-error" }

func (ToolOutputDeniedChunk) chunkType() string { return "tool-output-denied" }

func (SourceURLChunk) chunkType() string { return "source-url" }

func (SourceDocumentChunk) chunkType() string { return "source-document" }

func (FileChunk) chunkType() string { return "file" }

func (ReasoningFileChunk) chunkType() string { return "reasoning-file" }

func (CustomChunk) chunkType() string { return "custom" }

func (SteeringMessageChunk) chunkType() string { return "steering-message" }

func (c DataChunk) chunkType() string { return "data-" + c.Name }

func (FinishChunk) chunkType() string { return "finish" }

func (AbortChunk) chunkType() string { return "abort" }

func (MessageMetadataChunk) chunkType() string { return "message-metadata" }
