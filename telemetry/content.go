package telemetry

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentloop/agentloop"
)

// The shapes of gen_ai.input.messages, gen_ai.output.messages and
// gen_ai.system_instructions (see semconv.go for the schema files). Parts
// the conventions do not name (approvals) use their generic part: a "type"
// and any properties.
type (
	chatMessage struct {
		Role         string `json:"role"`
		Parts        []part `json:"parts"`
		FinishReason string `json:"finish_reason,omitempty"`
	}
	part struct {
		Type      string          `json:"type"`
		Content   any             `json:"content,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Response  *string         `json:"response,omitempty"`
		MimeType  string          `json:"mime_type,omitempty"`
		Modality  string          `json:"modality,omitempty"`
		URI       string          `json:"uri,omitempty"`
		// Approval parts.
		ToolCallID string `json:"tool_call_id,omitempty"`
		Approved   *bool  `json:"approved,omitempty"`
		Reason     string `json:"reason,omitempty"`
	}
)

// content turns what a run sends and gets into recorded JSON, through the
// user's redaction hook. It is used only when content recording is on.
type content struct {
	redact func(context.Context, agentloop.Message) agentloop.Message
}

// message returns m as the conventions shape it, after redaction; ok is
// false when redaction left no parts.
func (c content) message(ctx context.Context, m agentloop.Message) (chatMessage, bool) {
	if c.redact != nil {
		m = c.redact(ctx, m.Clone())
	}
	if len(m.Parts) == 0 {
		return chatMessage{}, false
	}
	out := chatMessage{Role: string(m.Role), Parts: make([]part, 0, len(m.Parts))}
	for _, p := range m.Parts {
		out.Parts = append(out.Parts, convertPart(p))
	}
	return out, true
}

// input returns gen_ai.input.messages for the messages of a request.
func (c content) input(ctx context.Context, h agentloop.History) string {
	msgs := make([]chatMessage, 0, len(h))
	for _, m := range h {
		if cm, ok := c.message(ctx, m); ok {
			msgs = append(msgs, cm)
		}
	}
	return marshal(msgs)
}

// output returns gen_ai.output.messages for the one answer of a model call.
func (c content) output(ctx context.Context, m agentloop.Message, finish agentloop.FinishReason) string {
	cm, ok := c.message(ctx, m)
	if !ok {
		cm = chatMessage{Role: string(agentloop.RoleAssistant), Parts: []part{}}
	}
	cm.FinishReason = finishReason(finish)
	return marshal([]chatMessage{cm})
}

// system returns gen_ai.system_instructions, or "" for no system prompt.
func (c content) system(ctx context.Context, system string) string {
	if system == "" {
		return ""
	}
	cm, ok := c.message(ctx, agentloop.SystemMessage(system))
	if !ok {
		return ""
	}
	return marshal(cm.Parts)
}

// toolArgs returns gen_ai.tool.call.arguments: the call's arguments, after
// redaction of the call as an assistant message with one tool-call part.
func (c content) toolArgs(ctx context.Context, call agentloop.ToolCall) (string, bool) {
	m := agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{{Type: agentloop.PartToolCall, ToolCall: &call}}}
	if c.redact != nil {
		m = c.redact(ctx, m.Clone())
	}
	for _, p := range m.Parts {
		if p.Type == agentloop.PartToolCall && p.ToolCall != nil {
			return string(p.ToolCall.Args), true
		}
	}
	return "", false
}

// toolResult returns gen_ai.tool.call.result: the result's content, after
// redaction of the result as a tool message with one result part.
func (c content) toolResult(ctx context.Context, res agentloop.ToolResult) (string, bool) {
	res.Err = nil
	m := agentloop.Message{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartToolResult, ToolResult: &res}}}
	if c.redact != nil {
		m = c.redact(ctx, m.Clone())
	}
	for _, p := range m.Parts {
		if p.Type == agentloop.PartToolResult && p.ToolResult != nil {
			return p.ToolResult.Content, true
		}
	}
	return "", false
}

func convertPart(p agentloop.Part) part {
	switch p.Type {
	case agentloop.PartText:
		return part{Type: "text", Content: p.Text}
	case agentloop.PartReasoning:
		return part{Type: "reasoning", Content: p.Text}
	case agentloop.PartToolCall:
		if p.ToolCall == nil {
			break
		}
		return part{Type: "tool_call", ID: p.ToolCall.ID, Name: p.ToolCall.Name, Arguments: arguments(p.ToolCall.Args)}
	case agentloop.PartToolResult:
		if p.ToolResult == nil {
			break
		}
		resp := p.ToolResult.Content
		return part{Type: "tool_call_response", ID: p.ToolResult.CallID, Response: &resp}
	case agentloop.PartApprovalRequest, agentloop.PartApprovalResponse:
		if p.Approval == nil {
			break
		}
		out := part{ID: p.Approval.ID, ToolCallID: p.Approval.CallID}
		if p.Type == agentloop.PartApprovalRequest {
			out.Type = "approval_request"
		} else {
			approved := p.Approval.Approved
			out.Type, out.Approved, out.Reason = "approval_response", &approved, p.Approval.Reason
		}
		return out
	case agentloop.PartFile:
		if p.File == nil {
			break
		}
		f := p.File
		out := part{MimeType: f.MediaType, Modality: modality(f.MediaType)}
		if f.URL != "" {
			out.Type, out.URI = "uri", f.URL
		} else {
			out.Type, out.Content = "blob", f.Data // []byte marshals as base64
		}
		return out
	}
	return part{Type: string(p.Type)}
}

// arguments returns a call's arguments as a JSON value: the object the
// model wrote, or, when that is not valid JSON, the text as a JSON string.
func arguments(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return nil
	}
	if json.Valid(args) {
		return args
	}
	s, _ := json.Marshal(string(args))
	return s
}

// modality returns the conventions' modality for a media type: image,
// video or audio, else the media type's top-level type.
func modality(mediaType string) string {
	top, _, _ := strings.Cut(mediaType, "/")
	return top
}

// finishReason returns the conventions' spelling of a finish reason.
func finishReason(r agentloop.FinishReason) string {
	if r == agentloop.FinishToolCalls {
		return "tool_call"
	}
	return string(r)
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // only plain values above; cannot happen
		return ""
	}
	return string(b)
}
