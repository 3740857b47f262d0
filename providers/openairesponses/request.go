package openairesponses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

type request struct {
	Model           string      `json:"model"`
	Instructions    string      `json:"instructions,omitempty"`
	Input           []any       `json:"input"`
	Tools           []tool      `json:"tools,omitempty"`
	Stream          bool        `json:"stream"`
	Store           bool        `json:"store"`
	Include         []string    `json:"include,omitempty"`
	MaxOutputTokens int         `json:"max_output_tokens,omitempty"`
	Temperature     *float64    `json:"temperature,omitempty"`
	TopP            *float64    `json:"top_p,omitempty"`
	Reasoning       *reasoning  `json:"reasoning,omitempty"`
	Text            *textConfig `json:"text,omitempty"`
	PromptCacheKey  string      `json:"prompt_cache_key,omitempty"`
}

type reasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

type textConfig struct {
	Format textFormat `json:"format"`
}

type textFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict"`
}

type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type message struct {
	Type    string `json:"type"` // message
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type textContent struct {
	Type string `json:"type"` // input_text or output_text
	Text string `json:"text"`
}

type imageContent struct {
	Type     string `json:"type"` // input_image
	ImageURL string `json:"image_url"`
}

type fileContent struct {
	Type     string `json:"type"` // input_file
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data"`
}

type reasoningItem struct {
	Type             string        `json:"type"` // reasoning
	ID               string        `json:"id"`
	Summary          []summaryText `json:"summary"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
}

type summaryText struct {
	Type string `json:"type"` // summary_text
	Text string `json:"text"`
}

type functionCall struct {
	Type      string `json:"type"` // function_call
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionCallOutput struct {
	Type   string `json:"type"` // function_call_output
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// requestBody maps req to a Responses request body.
func (m *Model) requestBody(req *agentloop.Request) ([]byte, error) {
	s := req.Settings
	if len(s.Stop) > 0 {
		return nil, errors.New("openai: the Responses API has no stop sequences; leave Settings.Stop empty")
	}
	out := request{
		Model:           m.cfg.Model,
		Instructions:    req.System,
		Stream:          true,
		Store:           m.cfg.Store,
		MaxOutputTokens: s.MaxTokens,
		Temperature:     s.Temperature,
		TopP:            s.TopP,
		PromptCacheKey:  m.cfg.PromptCacheKey,
	}
	if !m.cfg.Store {
		out.Include = []string{"reasoning.encrypted_content"}
	}
	if m.cfg.ReasoningEffort != "" || m.cfg.ReasoningSummary != "" {
		out.Reasoning = &reasoning{Effort: m.cfg.ReasoningEffort, Summary: m.cfg.ReasoningSummary}
	}
	if rf := s.ResponseFormat; rf != nil {
		if len(bytes.TrimSpace(rf.Schema)) == 0 {
			return nil, errors.New("openai: Settings.ResponseFormat has no Schema")
		}
		out.Text = &textConfig{Format: textFormat{Type: "json_schema", Name: rf.FormatName(), Description: rf.Description, Schema: rf.Schema, Strict: rf.Strict}}
	}
	input, err := inputItems(req.Messages)
	if err != nil {
		return nil, err
	}
	out.Input = input
	for _, t := range req.Tools {
		schema := t.Schema
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = emptyObjectSchema
		}
		out.Tools = append(out.Tools, tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("openai: encoding the request: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// inputItems maps the history to input items, keeping the order of each
// message's parts.
func inputItems(h agentloop.History) ([]any, error) {
	items := make([]any, 0, len(h))
	for i, msg := range h {
		switch msg.Role {
		case agentloop.RoleSystem:
			if err := noFiles(i, msg); err != nil {
				return nil, err
			}
			if t := msg.Text(); t != "" {
				items = append(items, message{Type: "message", Role: "system", Content: []any{textContent{Type: "input_text", Text: t}}})
			}
		case agentloop.RoleUser:
			content, err := userContent(msg, i)
			if err != nil {
				return nil, err
			}
			if len(content) > 0 {
				items = append(items, message{Type: "message", Role: "user", Content: content})
			}
		case agentloop.RoleAssistant:
			if err := noFiles(i, msg); err != nil {
				return nil, err
			}
			items = appendAssistant(items, msg)
		case agentloop.RoleTool:
			if err := noFiles(i, msg); err != nil {
				return nil, err
			}
			for _, p := range msg.Parts {
				if p.Type != agentloop.PartToolResult || p.ToolResult == nil {
					continue // approvals are not sent to the model
				}
				items = append(items, functionCallOutput{Type: "function_call_output", CallID: p.ToolResult.CallID, Output: p.ToolResult.Content})
			}
		default:
			return nil, fmt.Errorf("openai: message %d has unknown role %q", i, msg.Role)
		}
	}
	return items, nil
}

// appendAssistant adds an assistant message's parts: reasoning items, text
// (consecutive text parts in one output_text message) and function calls,
// in order.
func appendAssistant(items []any, msg agentloop.Message) []any {
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			items = append(items, message{Type: "message", Role: "assistant", Content: []any{textContent{Type: "output_text", Text: text.String()}}})
			text.Reset()
		}
	}
	for _, p := range msg.Parts {
		switch p.Type {
		case agentloop.PartText:
			text.WriteString(p.Text)
		case agentloop.PartReasoning:
			if !strings.HasPrefix(p.Signature, "rs_") {
				continue // not a Responses reasoning item: the API could not use it
			}
			flush()
			it := reasoningItem{Type: "reasoning", ID: p.Signature, Summary: []summaryText{}, EncryptedContent: p.Redacted}
			if p.Text != "" {
				it.Summary = append(it.Summary, summaryText{Type: "summary_text", Text: p.Text})
			}
			items = append(items, it)
		case agentloop.PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			flush()
			args := string(bytes.TrimSpace(p.ToolCall.Args))
			if args == "" || args == "null" {
				args = "{}"
			}
			items = append(items, functionCall{Type: "function_call", CallID: p.ToolCall.ID, Name: p.ToolCall.Name, Arguments: args})
		}
	}
	flush()
	return items
}

// noFiles refuses a file in a message whose role the API takes no files in
// (system, assistant, tool).
func noFiles(i int, msg agentloop.Message) error {
	return httpx.NoFiles("openai", "the Responses API takes files", i, msg)
}

// userContent maps a user message's parts to input content.
func userContent(msg agentloop.Message, i int) ([]any, error) {
	var content []any
	for j, p := range msg.Parts {
		switch p.Type {
		case agentloop.PartText:
			if p.Text != "" {
				content = append(content, textContent{Type: "input_text", Text: p.Text})
			}
		case agentloop.PartFile:
			if p.File == nil {
				return nil, errors.New("file part without a file")
			}
			c, err := fileOf(p.File, i, j)
			if err != nil {
				return nil, err
			}
			content = append(content, c)
		}
	}
	return content, nil
}

func fileOf(f *agentloop.File, msg, part int) (any, error) {
	fail := func(reason string) error {
		return &agentloop.FileError{Provider: "openai", Message: msg, Part: part, MediaType: f.MediaType, Filename: f.Filename, Reason: reason}
	}
	if _, _, err := f.Inline(); err != nil {
		return nil, fail(err.Error())
	}
	data := f.DataURL() // "" for a file located by another URL
	switch {
	case strings.HasPrefix(f.MediaType, "image/"):
		url := data
		if url == "" {
			url = f.URL
		}
		return imageContent{Type: "input_image", ImageURL: url}, nil
	case f.MediaType == "application/pdf" && data != "":
		return fileContent{Type: "input_file", Filename: f.Filename, FileData: data}, nil
	case f.MediaType == "application/pdf":
		return nil, fail("the Responses API takes a PDF as data only, not by URL")
	}
	return nil, fail("the Responses API takes images and PDFs only")
}
