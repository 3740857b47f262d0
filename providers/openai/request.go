package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Tools               []chatTool      `json:"tools,omitempty"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	Seed                *int            `json:"seed,omitempty"`
	Stop                []string        `json:"stop,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	PromptCacheKey      string          `json:"prompt_cache_key,omitempty"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content,omitempty"` // string or []contentPart
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
	File     *filePart `json:"file,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type filePart struct {
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// requestBody maps req to a Chat Completions request body.
func (m *Model) requestBody(req *agentloop.Request) ([]byte, error) {
	out := chatRequest{
		Model:           m.cfg.Model,
		Stream:          true,
		StreamOptions:   &streamOptions{IncludeUsage: true},
		Temperature:     req.Settings.Temperature,
		TopP:            req.Settings.TopP,
		Seed:            req.Settings.Seed,
		Stop:            req.Settings.Stop,
		ReasoningEffort: m.cfg.ReasoningEffort,
		PromptCacheKey:  m.cfg.PromptCacheKey,
	}
	if n := req.Settings.MaxTokens; n > 0 {
		if m.maxTokens == "max_tokens" {
			out.MaxTokens = n
		} else {
			out.MaxCompletionTokens = n
		}
	}
	if rf := req.Settings.ResponseFormat; rf != nil {
		if len(bytes.TrimSpace(rf.Schema)) == 0 {
			return nil, errors.New("openai: Settings.ResponseFormat has no Schema")
		}
		out.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{
			Name: rf.FormatName(), Description: rf.Description, Schema: rf.Schema, Strict: rf.Strict,
		}}
	}
	msgs, err := messages(req)
	if err != nil {
		return nil, err
	}
	out.Messages = msgs
	for _, t := range req.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = emptyObjectSchema
		}
		out.Tools = append(out.Tools, chatTool{Type: "function", Function: toolFunction{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	b, err := marshal(out)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding the request: %w", err)
	}
	return b, nil
}

func messages(req *agentloop.Request) ([]chatMessage, error) {
	var out []chatMessage
	if req.System != "" {
		out = append(out, chatMessage{Role: "system", Content: req.System})
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case agentloop.RoleSystem:
			if err := noFiles(i, msg); err != nil {
				return nil, err
			}
			if t := msg.Text(); t != "" {
				out = append(out, chatMessage{Role: "system", Content: t})
			}
		case agentloop.RoleUser:
			c, err := userContent(msg, i)
			if err != nil {
				return nil, err
			}
			if c != nil {
				out = append(out, chatMessage{Role: "user", Content: c})
			}
		case agentloop.RoleAssistant:
			if err := noFiles(i, msg); err != nil {
				return nil, err
			}
			am := chatMessage{Role: "assistant"}
			if t := msg.Text(); t != "" {
				am.Content = t
			}
			for _, c := range msg.ToolCalls() {
				args := string(c.Args)
				if strings.TrimSpace(args) == "" || args == "null" {
					args = "{}"
				}
				am.ToolCalls = append(am.ToolCalls, chatToolCall{ID: c.ID, Type: "function", Function: chatFunction{Name: c.Name, Arguments: args}})
			}
			if am.Content == nil && len(am.ToolCalls) == 0 {
				continue // reasoning only: nothing Chat Completions can take
			}
			out = append(out, am)
		case agentloop.RoleTool:
			if err := noFiles(i, msg); err != nil {
				return nil, err
			}
			for _, p := range msg.Parts {
				if p.Type != agentloop.PartToolResult || p.ToolResult == nil {
					continue // approvals are not sent to the model
				}
				out = append(out, chatMessage{Role: "tool", Content: p.ToolResult.Content, ToolCallID: p.ToolResult.CallID})
			}
		default:
			return nil, fmt.Errorf("openai: message %d has unknown role %q", i, msg.Role)
		}
	}
	return out, nil
}

// noFiles refuses a file in a message whose role the API takes no files in
// (system, assistant, tool).
func noFiles(i int, msg agentloop.Message) error {
	return httpx.NoFiles("openai", "Chat Completions takes files", i, msg)
}

// userContent is a plain string for a text-only message, else content parts;
// nil when there is nothing to send.
func userContent(msg agentloop.Message, i int) (any, error) {
	var parts []contentPart
	textOnly := true
	for j, p := range msg.Parts {
		switch p.Type {
		case agentloop.PartText:
			parts = append(parts, contentPart{Type: "text", Text: p.Text})
		case agentloop.PartFile:
			if p.File == nil {
				return nil, fmt.Errorf("file part without a file")
			}
			textOnly = false
			cp, err := filePartOf(p.File, i, j)
			if err != nil {
				return nil, err
			}
			parts = append(parts, cp)
		}
	}
	switch {
	case len(parts) == 0:
		return nil, nil
	case textOnly && len(parts) == 1:
		return parts[0].Text, nil
	}
	return parts, nil
}

func filePartOf(f *agentloop.File, msg, part int) (contentPart, error) {
	fail := func(reason string) error {
		return &agentloop.FileError{Provider: "openai", Message: msg, Part: part, MediaType: f.MediaType, Filename: f.Filename, Reason: reason}
	}
	if _, _, err := f.Inline(); err != nil {
		return contentPart{}, fail(err.Error())
	}
	data := f.DataURL() // "" for a file located by another URL
	switch {
	case strings.HasPrefix(f.MediaType, "image/"):
		url := data
		if url == "" {
			url = f.URL
		}
		return contentPart{Type: "image_url", ImageURL: &imageURL{URL: url}}, nil
	case f.MediaType == "application/pdf" && data != "":
		return contentPart{Type: "file", File: &filePart{Filename: f.Filename, FileData: data}}, nil
	case f.MediaType == "application/pdf":
		return contentPart{}, fail("Chat Completions takes a PDF as data only, not by URL")
	}
	return contentPart{}, fail("Chat Completions takes images and PDFs only")
}
