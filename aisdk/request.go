package aisdk

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ChatRequest is the JSON body that useChat (DefaultChatTransport) and
// assistant-ui (AssistantChatTransport) POST (ui-message-stream.md §3).
type ChatRequest struct {
	// ID is the chat id.
	ID string `json:"id"`
	// Messages is the whole conversation as the client holds it.
	Messages []UIMessage `json:"messages"`
	// Trigger is [TriggerSubmit] (new messages, edits and automatic tool
	// or approval continuations), [TriggerRegenerate], or "" when the
	// client sent none (treated as a submit). [DecodeRequest] refuses any
	// other value.
	Trigger Trigger `json:"trigger,omitempty"`
	// MessageID is the assistant message id on a continuation, the edited
	// message on an edit, or "".
	MessageID string `json:"messageId,omitempty"`
	// Tools are the front end's tools (assistant-ui), by name.
	Tools map[string]ClientToolDef `json:"tools,omitempty"`
	// System is a system prompt sent by the front end (assistant-ui). The
	// [Handler] only uses it when [Handler.AllowClientSystem] is set.
	System string `json:"system,omitempty"`
	// CallSettings are assistant-ui's sampling settings.
	CallSettings *CallSettings `json:"callSettings,omitempty"`
	// Config is assistant-ui's model config ({apiKey?, baseUrl?, modelName?,
	// reasoningEffort?}), kept raw; the Handler ignores it.
	Config json.RawMessage `json:"config,omitempty"`
	// Metadata is assistant-ui's run config, kept raw.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Extra holds every other top-level key (a transport's extra body).
	Extra map[string]json.RawMessage `json:"-"`
}

// Trigger says why the client posted ([ChatRequest.Trigger]).
type Trigger string

// The triggers of AI SDK 7.
const (
	TriggerSubmit     Trigger = "submit-message"
	TriggerRegenerate Trigger = "regenerate-message"
)

// CallSettings are assistant-ui's callSettings. Unset fields are nil.
type CallSettings struct {
	MaxTokens        *int               `json:"maxTokens,omitempty"`
	Temperature      *float64           `json:"temperature,omitempty"`
	TopP             *float64           `json:"topP,omitempty"`
	PresencePenalty  *float64           `json:"presencePenalty,omitempty"`
	FrequencyPenalty *float64           `json:"frequencyPenalty,omitempty"`
	Seed             *int               `json:"seed,omitempty"`
	Headers          map[string]*string `json:"headers,omitempty"`
}

// ClientToolDef is one entry of the body's "tools" (assistant-ui's
// toToolsJSONSchema): a tool that runs in the front end.
type ClientToolDef struct {
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the tool's input (an object schema).
	Parameters      json.RawMessage `json:"parameters"`
	ProviderOptions json.RawMessage `json:"providerOptions,omitempty"`
}

type chatRequestFields ChatRequest

// MarshalJSON encodes the request as a client would send it, with the
// Extra keys at the top level (they never override a field).
func (r ChatRequest) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(chatRequestFields(r))
	if err != nil || len(r.Extra) == 0 {
		return b, err
	}
	return mergeExtra(b, r.Extra, knownBodyKeys)
}

// Limits bound what [DecodeRequest] accepts. Zero fields mean the Default*
// constants; a negative field means no limit.
type Limits struct {
	// MaxBodyBytes bounds the size of the body.
	MaxBodyBytes int64
	// MaxMessages bounds the number of messages.
	MaxMessages int
	// MaxParts bounds the number of parts over all messages.
	MaxParts int
	// MaxFileBytes bounds the size of each file a message carries in a
	// data: URL (its decoded content). Files located by an http(s) URL
	// are not fetched, so not bounded here. A larger file is refused with
	// [ErrFileTooLarge] (413). Every file of the posted messages counts,
	// so in the stateless mode, which posts the whole conversation, the
	// files together must also fit in MaxBodyBytes.
	MaxFileBytes int64
}

// Default limits of [DecodeRequest] and [Handler].
const (
	DefaultMaxBodyBytes = 8 << 20
	DefaultMaxMessages  = 1000
	DefaultMaxParts     = 20000
	// DefaultMaxFileBytes is 5 MiB, the largest image Anthropic's API
	// takes; its base64 data: URL fits in DefaultMaxBodyBytes.
	DefaultMaxFileBytes = 5 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxMessages == 0 {
		l.MaxMessages = DefaultMaxMessages
	}
	if l.MaxParts == 0 {
		l.MaxParts = DefaultMaxParts
	}
	if l.MaxFileBytes == 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	return l
}

// ErrBadRequest is wrapped by every error of [DecodeRequest] and [ToHistory]
// that is the client's fault.
var ErrBadRequest = errors.New("bad chat request")

// ErrTooLarge is wrapped by the error of [DecodeRequest] when the body
// exceeds Limits.MaxBodyBytes. It also wraps [ErrBadRequest].
var ErrTooLarge = fmt.Errorf("%w: body too large", ErrBadRequest)

// ErrFileTooLarge is wrapped by the error of [DecodeRequest] when a file
// part's content exceeds Limits.MaxFileBytes; the error names the message,
// the part, the file and the limit. It also wraps [ErrBadRequest]; the
// handlers answer it with 413.
var ErrFileTooLarge = fmt.Errorf("%w: file too large", ErrBadRequest)

var knownBodyKeys = map[string]bool{
	"id": true, "messages": true, "trigger": true, "messageId": true, "tools": true,
	"system": true, "callSettings": true, "config": true, "metadata": true,
}

// DecodeRequest reads a chat request body within limits and checks its
// shape: a JSON object with a non-empty "messages" array of messages with
// an id-able role ("system", "user" or "assistant") and a "parts" array
// whose entries each have a string "type"; tool parts need a "toolCallId"
// and a "state"; "trigger", when present, is [TriggerSubmit] or
// [TriggerRegenerate]. Every error names the problem and wraps
// [ErrBadRequest] ([ErrTooLarge] for an oversized body, [ErrFileTooLarge]
// for a file part's data: URL over Limits.MaxFileBytes).
func DecodeRequest(r io.Reader, limits Limits) (*ChatRequest, error) {
	size := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok { // bytes.Reader, strings.Reader, bytes.Buffer: in memory already
		size = int64(l.Len())
	}
	return decodeRequest(r, size, size, limits)
}

// decodeRequest is DecodeRequest for a body said to be size bytes long
// (-1: not said), read into a buffer of up to first bytes at first (see
// readAll).
func decodeRequest(r io.Reader, size, first int64, limits Limits) (*ChatRequest, error) {
	limits = limits.withDefaults()
	var data []byte
	var err error
	if limits.MaxBodyBytes > 0 {
		data, err = readAll(io.LimitReader(r, limits.MaxBodyBytes+1), min(size, limits.MaxBodyBytes), first)
		if err == nil && int64(len(data)) > limits.MaxBodyBytes {
			return nil, fmt.Errorf("%w: the limit is %d bytes", ErrTooLarge, limits.MaxBodyBytes)
		}
	} else {
		data, err = readAll(r, size, first)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fmt.Errorf("%w: %v", ErrTooLarge, err)
		}
		return nil, fmt.Errorf("%w: reading the body: %w", ErrBadRequest, err)
	}
	req, ok := decodeBodyFast(data, limits)
	if !ok {
		if req, err = decodeBodyStd(data, limits); err != nil {
			return nil, err
		}
	}
	if err := checkFileSizes(req.Messages, limits.MaxFileBytes); err != nil {
		return nil, err
	}
	return req, nil
}

// checkFileSizes refuses a file part whose data: URL holds more than max
// bytes (max <= 0: no limit). The size is the decoded size of a base64
// payload, the length of any other.
func checkFileSizes(msgs []UIMessage, max int64) error {
	if max <= 0 {
		return nil
	}
	for i := range msgs {
		for j := range msgs[i].Parts {
			p := &msgs[i].Parts[j]
			if p.Type != "file" || len(p.URL) < 5 || !strings.EqualFold(p.URL[:5], "data:") {
				continue
			}
			meta, payload, _ := strings.Cut(p.URL, ",")
			size := int64(len(payload))
			if len(meta) >= 7 && strings.EqualFold(meta[len(meta)-7:], ";base64") {
				size = int64(base64.RawStdEncoding.DecodedLen(len(strings.TrimRight(payload, "="))))
			}
			if size > max {
				return fmt.Errorf("%w: message %d, part %d: file %q (%s) is %d bytes; the limit is %d bytes", ErrFileTooLarge, i, j, p.Filename, p.MediaType, size, max)
			}
		}
	}
	return nil
}

// readAll is io.ReadAll for a body said to be size bytes long (-1: not
// said). The buffer starts at min(size, first) bytes and doubles, up to
// the size said, while the body comes: a body of the size said is read,
// its end included, in one buffer of its size when first >= size, and
// in a few buffers otherwise (io.ReadAll's grow by a quarter, a copy
// each time), while a client that says more than it sends gets a buffer
// at most about twice what it sent.
func readAll(r io.Reader, size, first int64) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, min(size, max(first, 512))+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			next := 2 * int64(cap(b))
			if int64(len(b)) <= size {
				next = min(next, size+1)
			}
			b = append(make([]byte, 0, next), b...)
		}
	}
}

// decodeBodyStd decodes the body with encoding/json: the bodies
// decodeBodyFast gives up on, with the error that names the problem.
func decodeBodyStd(data []byte, limits Limits) (*ChatRequest, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: the body is empty; want a JSON object with \"messages\"", ErrBadRequest)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: the body is not a JSON object: %v", ErrBadRequest, err)
	}
	if top == nil {
		return nil, fmt.Errorf("%w: the body is null; want a JSON object with \"messages\"", ErrBadRequest)
	}
	req := &ChatRequest{}
	var err error
	field := func(name string, v any) error {
		raw, ok := top[name]
		if !ok || string(bytes.TrimSpace(raw)) == "null" {
			return nil
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return fmt.Errorf("%w: field %q: %v", ErrBadRequest, name, describeJSONError(err))
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    any
	}{
		{"id", &req.ID}, {"trigger", &req.Trigger}, {"messageId", &req.MessageID},
		{"system", &req.System}, {"callSettings", &req.CallSettings},
	} {
		if err := field(f.name, f.v); err != nil {
			return nil, err
		}
	}
	switch req.Trigger {
	case "", TriggerSubmit, TriggerRegenerate:
	default:
		return nil, fmt.Errorf("%w: field \"trigger\" is %q; want %q or %q", ErrBadRequest, req.Trigger, TriggerSubmit, TriggerRegenerate)
	}
	if raw, ok := top["config"]; ok {
		req.Config = raw
	}
	if raw, ok := top["metadata"]; ok {
		req.Metadata = raw
	}
	if raw, ok := top["tools"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		if req.Tools, err = decodeTools(raw); err != nil {
			return nil, err
		}
	}
	rawMsgs, ok := top["messages"]
	if !ok {
		return nil, fmt.Errorf("%w: no \"messages\" field", ErrBadRequest)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(rawMsgs, &msgs); err != nil {
		return nil, fmt.Errorf("%w: field \"messages\" must be an array: %v", ErrBadRequest, describeJSONError(err))
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%w: \"messages\" is empty", ErrBadRequest)
	}
	if limits.MaxMessages > 0 && len(msgs) > limits.MaxMessages {
		return nil, fmt.Errorf("%w: %d messages, more than the limit of %d", ErrBadRequest, len(msgs), limits.MaxMessages)
	}
	req.Messages = make([]UIMessage, len(msgs))
	parts := 0
	for i, raw := range msgs {
		m := &req.Messages[i]
		if err := json.Unmarshal(raw, m); err != nil {
			return nil, fmt.Errorf("%w: message %d: %v", ErrBadRequest, i, describeJSONError(err))
		}
		if err := checkMessage(i, m); err != nil {
			return nil, err
		}
		parts += len(m.Parts)
		if limits.MaxParts > 0 && parts > limits.MaxParts {
			return nil, fmt.Errorf("%w: more than %d message parts", ErrBadRequest, limits.MaxParts)
		}
	}
	for k, v := range top {
		if !knownBodyKeys[k] {
			if req.Extra == nil {
				req.Extra = make(map[string]json.RawMessage)
			}
			req.Extra[k] = v
		}
	}
	return req, nil
}

// decodeTools decodes the body's "tools" (not null).
func decodeTools(raw json.RawMessage) (map[string]ClientToolDef, error) {
	var tools map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, fmt.Errorf("%w: field \"tools\" must be an object of tool definitions by name: %v", ErrBadRequest, describeJSONError(err))
	}
	out := make(map[string]ClientToolDef, len(tools))
	for name, t := range tools {
		var def ClientToolDef
		if err := json.Unmarshal(t, &def); err != nil {
			return nil, fmt.Errorf("%w: tool %q: %v", ErrBadRequest, name, describeJSONError(err))
		}
		var params map[string]json.RawMessage
		if err := json.Unmarshal(def.Parameters, &params); err != nil || params == nil {
			return nil, fmt.Errorf("%w: tool %q: \"parameters\" must be a JSON Schema object", ErrBadRequest, name)
		}
		out[name] = def
	}
	return out, nil
}

func checkMessage(i int, m *UIMessage) error {
	switch m.Role {
	case "system", "user", "assistant":
	case "":
		return fmt.Errorf("%w: message %d has no \"role\"", ErrBadRequest, i)
	default:
		return fmt.Errorf("%w: message %d has role %q; want system, user or assistant", ErrBadRequest, i, m.Role)
	}
	if m.Parts == nil {
		return fmt.Errorf("%w: message %d (%s) has no \"parts\" array", ErrBadRequest, i, m.Role)
	}
	for j, p := range m.Parts {
		if p.Type == "" {
			return fmt.Errorf("%w: message %d, part %d has no \"type\"", ErrBadRequest, i, j)
		}
		if p.IsTool() {
			if p.ToolCallID == "" {
				return fmt.Errorf("%w: message %d, part %d (%s) has no \"toolCallId\"", ErrBadRequest, i, j, p.Type)
			}
			if p.ToolNameOf() == "" {
				return fmt.Errorf("%w: message %d, part %d (%s) has no tool name", ErrBadRequest, i, j, p.Type)
			}
			switch p.State {
			case StateInputStreaming, StateInputAvailable, StateApprovalRequested, StateApprovalResponded,
				StateOutputAvailable, StateOutputError, StateOutputDenied:
			case "":
				return fmt.Errorf("%w: message %d, part %d (%s) has no \"state\"", ErrBadRequest, i, j, p.Type)
			default:
				return fmt.Errorf("%w: message %d, part %d (%s) has unknown state %q", ErrBadRequest, i, j, p.Type, p.State)
			}
			if p.State == StateApprovalRequested || p.State == StateApprovalResponded || p.State == StateOutputDenied {
				if p.Approval == nil || p.Approval.ID == "" {
					return fmt.Errorf("%w: message %d, part %d (%s) in state %s has no \"approval\" with an id", ErrBadRequest, i, j, p.Type, p.State)
				}
			}
			if p.State == StateApprovalResponded && p.Approval.Approved == nil {
				return fmt.Errorf("%w: message %d, part %d (%s) in state approval-responded has no \"approval.approved\"", ErrBadRequest, i, j, p.Type)
			}
		}
	}
	return nil
}

// describeJSONError shortens encoding/json's errors for a client.
func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("field %q: got a JSON %s, want %s", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
		}
		return fmt.Sprintf("got a JSON %s, want %s", te.Value, jsonKind(te.Type.Kind().String()))
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "bool":
		return "a boolean"
	case "ptr":
		return "an object"
	}
	return "a number"
}
