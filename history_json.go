package agentloop

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// HistoryVersion is the version written by [History.MarshalJSON].
const HistoryVersion = 2

type historyJSON struct {
	Version  int       `json:"version"`
	Messages []Message `json:"messages"`
}

// MarshalJSON encodes the history as
//
//	{"version":2,"messages":[{"id":…,"role":…,"parts":[…]},…]}
//
// Every format this SDK persists uses camelCase keys and values ("toolCall",
// "callId", "isError", "mediaType"…). A tool call is
// {"id","name","args"} with the arguments as JSON, or, when the model wrote
// arguments that are not valid JSON, {"id","name","invalidArgs"} with that
// text as a JSON string, so that every history can be stored whatever the
// model wrote. Valid arguments are written compacted: a round trip keeps
// their value, not their spacing. [ToolResult.Err] is not written.
func (h History) MarshalJSON() ([]byte, error) {
	msgs := []Message(h)
	if msgs == nil {
		msgs = []Message{}
	}
	return json.Marshal(historyJSON{Version: HistoryVersion, Messages: msgs})
}

// UnmarshalJSON decodes a history written by [History.MarshalJSON], or by an
// earlier release (version 1, which used snake_case). An unknown version, a
// missing version or a message without a known role is an error wrapping
// [ErrInvalidHistory].
func (h *History) UnmarshalJSON(data []byte) error {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidHistory, err)
	}
	var msgs []Message
	switch {
	case head.Version == nil:
		return fmt.Errorf("%w: no version field", ErrInvalidHistory)
	case *head.Version == HistoryVersion:
		var v historyJSON
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidHistory, err)
		}
		msgs = v.Messages
	case *head.Version == 1:
		var err error
		if msgs, err = decodeHistoryV1(data); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidHistory, err)
		}
	default:
		return fmt.Errorf("%w: version %d is not supported (this build reads versions 1 and %d)", ErrInvalidHistory, *head.Version, HistoryVersion)
	}
	for i, m := range msgs {
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		default:
			return fmt.Errorf("%w: message %d has unknown role %q", ErrInvalidHistory, i, m.Role)
		}
	}
	*h = msgs
	return nil
}

type toolCallJSON struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Args        json.RawMessage `json:"args,omitempty"`
	InvalidArgs *string         `json:"invalidArgs,omitempty"`
}

// MarshalJSON writes the call as {"id","name","args"}, or with
// "invalidArgs" (a JSON string) instead of "args" when Args is not valid
// JSON; see [History.MarshalJSON].
func (c ToolCall) MarshalJSON() ([]byte, error) {
	v := toolCallJSON{ID: c.ID, Name: c.Name}
	switch {
	case len(bytes.TrimSpace(c.Args)) == 0:
	case json.Valid(c.Args):
		v.Args = c.Args
	default:
		s := string(c.Args)
		v.InvalidArgs = &s
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads what [ToolCall.MarshalJSON] writes.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	var v toolCallJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if v.InvalidArgs != nil && v.Args != nil {
		return fmt.Errorf("tool call %q has both args and invalidArgs", v.ID)
	}
	*c = ToolCall{ID: v.ID, Name: v.Name, Args: v.Args}
	if v.InvalidArgs != nil {
		c.Args = json.RawMessage(*v.InvalidArgs)
	}
	return nil
}

// decodeHistoryV1 reads the messages of a version 1 history, whose keys
// and part types were snake_case.
func decodeHistoryV1(data []byte) ([]Message, error) {
	type partV1 struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		Signature string `json:"signature"`
		Redacted  string `json:"redacted"`
		ToolCall  *struct {
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"tool_call"`
		ToolResult *struct {
			CallID  string `json:"call_id"`
			Name    string `json:"name"`
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		} `json:"tool_result"`
		Approval *struct {
			CallID   string `json:"call_id"`
			ID       string `json:"id"`
			Approved bool   `json:"approved"`
			Reason   string `json:"reason"`
		} `json:"approval"`
		File *struct {
			MediaType string `json:"media_type"`
			Filename  string `json:"filename"`
			URL       string `json:"url"`
			Data      []byte `json:"data"`
		} `json:"file"`
	}
	var v struct {
		Messages []struct {
			ID    string   `json:"id"`
			Role  Role     `json:"role"`
			Parts []partV1 `json:"parts"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	types := map[string]PartType{
		"text": PartText, "reasoning": PartReasoning, "tool_call": PartToolCall, "tool_result": PartToolResult,
		"approval_request": PartApprovalRequest, "approval_response": PartApprovalResponse, "file": PartFile,
	}
	msgs := make([]Message, len(v.Messages))
	for i, m := range v.Messages {
		msgs[i] = Message{ID: m.ID, Role: m.Role, Parts: make([]Part, len(m.Parts))}
		for j, p := range m.Parts {
			t, ok := types[p.Type]
			if !ok {
				t = PartType(p.Type)
			}
			q := Part{Type: t, Text: p.Text, Signature: p.Signature, Redacted: p.Redacted}
			if c := p.ToolCall; c != nil {
				q.ToolCall = &ToolCall{ID: c.ID, Name: c.Name, Args: c.Args}
			}
			if r := p.ToolResult; r != nil {
				q.ToolResult = &ToolResult{CallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError}
			}
			if a := p.Approval; a != nil {
				q.Approval = &Approval{CallID: a.CallID, ID: a.ID, Approved: a.Approved, Reason: a.Reason}
			}
			if f := p.File; f != nil {
				q.File = &File{MediaType: f.MediaType, Filename: f.Filename, URL: f.URL, Data: f.Data}
			}
			msgs[i].Parts[j] = q
		}
	}
	return msgs, nil
}
