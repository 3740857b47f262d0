package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

type messagesRequest struct {
	Model         string         `json:"model"`
	MaxTokens     int            `json:"max_tokens"`
	System        any            `json:"system,omitempty"` // a string, or []textBlock with a breakpoint
	Messages      []apiMessage   `json:"messages"`
	Tools         []apiTool      `json:"tools,omitempty"`
	Stream        bool           `json:"stream"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	StopSequences []string       `json:"stop_sequences,omitempty"`
	Thinking      *thinkingParam `json:"thinking,omitempty"`
	OutputConfig  *outputConfig  `json:"output_config,omitempty"`
}

type outputConfig struct {
	Format *outputFormat `json:"format,omitempty"`
}

type outputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

type thinkingParam struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type apiMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type textBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

// cacheControl marks a prompt-cache breakpoint: the API caches the request
// up to and including the block that carries it.
type cacheControl struct {
	Type string `json:"type"` // ephemeral
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type thinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type redactedBlock struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type         string        `json:"type"`
	ToolUseID    string        `json:"tool_use_id"`
	Content      string        `json:"content"`
	IsError      bool          `json:"is_error,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type mediaBlock struct {
	Type         string        `json:"type"` // image or document
	Source       mediaSource   `json:"source"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type mediaSource struct {
	Type      string `json:"type"` // base64 or url
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type apiTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

func (m *Model) requestBody(req *agentloop.Request) ([]byte, error) {
	out := messagesRequest{
		Model:         m.cfg.Model,
		MaxTokens:     req.Settings.MaxTokens,
		Stream:        true,
		Temperature:   req.Settings.Temperature,
		TopP:          req.Settings.TopP,
		StopSequences: req.Settings.Stop,
	}
	if out.MaxTokens <= 0 {
		out.MaxTokens = m.cfg.MaxTokens
	}
	if out.MaxTokens <= 0 {
		out.MaxTokens = DefaultMaxTokens
	}
	if b := m.cfg.ThinkingBudget; b > 0 {
		out.Thinking = &thinkingParam{Type: "enabled", BudgetTokens: b}
		if out.MaxTokens <= b {
			out.MaxTokens = b + DefaultMaxTokens // the API wants max_tokens > budget
		}
	}
	if rf := req.Settings.ResponseFormat; rf != nil {
		if len(bytes.TrimSpace(rf.Schema)) == 0 {
			return nil, errors.New("anthropic: Settings.ResponseFormat has no Schema")
		}
		out.OutputConfig = &outputConfig{Format: &outputFormat{Type: "json_schema", Schema: rf.Schema}}
	}
	var system []string
	if req.System != "" {
		system = append(system, req.System)
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case agentloop.RoleSystem:
			if err := noFiles(i, msg); err != nil {
				return nil, err
			}
			if t := msg.Text(); t != "" {
				system = append(system, t)
			}
		case agentloop.RoleUser:
			blocks, err := userBlocks(msg, i)
			if err != nil {
				return nil, err
			}
			out.Messages = appendMessage(out.Messages, "user", blocks)
		case agentloop.RoleAssistant:
			if err := noFiles(i, msg); err != nil {
				return nil, err
			}
			out.Messages = appendMessage(out.Messages, "assistant", assistantBlocks(msg))
		case agentloop.RoleTool:
			if err := noFiles(i, msg); err != nil {
				return nil, err
			}
			var blocks []any
			for _, p := range msg.Parts {
				if p.Type != agentloop.PartToolResult || p.ToolResult == nil {
					continue // approvals are not sent to the model
				}
				r := p.ToolResult
				blocks = append(blocks, toolResultBlock{Type: "tool_result", ToolUseID: r.CallID, Content: r.Content, IsError: r.IsError})
			}
			out.Messages = appendMessage(out.Messages, "user", blocks)
		default:
			return nil, fmt.Errorf("anthropic: message %d has unknown role %q", i, msg.Role)
		}
	}
	if sys := strings.Join(system, "\n\n"); sys != "" {
		out.System = sys
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = emptyObjectSchema
		}
		out.Tools = append(out.Tools, apiTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if m.cfg.CachePrompts {
		setBreakpoints(&out)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("anthropic: encoding the request: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendMessage adds blocks as a message of role, merged into the previous
// message when it has the same role (the API wants turns to alternate, and
// all tool results in the one user message after the tool calls).
func appendMessage(msgs []apiMessage, role string, blocks []any) []apiMessage {
	if len(blocks) == 0 {
		return msgs
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == role {
		msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
		return msgs
	}
	return append(msgs, apiMessage{Role: role, Content: blocks})
}

// assistantBlocks puts reasoning first (unchanged, with its signature), then
// text and tool_use in order. Reasoning with neither signature nor redacted
// data (from another provider, or cut off) is left out: the API rejects it.
func assistantBlocks(msg agentloop.Message) []any {
	var reasoning, rest []any
	for _, p := range msg.Parts {
		switch p.Type {
		case agentloop.PartReasoning:
			switch {
			case p.Redacted != "":
				reasoning = append(reasoning, redactedBlock{Type: "redacted_thinking", Data: p.Redacted})
			case p.Signature != "":
				reasoning = append(reasoning, thinkingBlock{Type: "thinking", Thinking: p.Text, Signature: p.Signature})
			}
		case agentloop.PartText:
			if p.Text != "" {
				rest = append(rest, textBlock{Type: "text", Text: p.Text})
			}
		case agentloop.PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			input := bytes.TrimSpace(p.ToolCall.Args)
			if len(input) == 0 || string(input) == "null" || !json.Valid(input) {
				input = []byte("{}") // a cut-off call still needs an object
			}
			rest = append(rest, toolUseBlock{Type: "tool_use", ID: p.ToolCall.ID, Name: p.ToolCall.Name, Input: input})
		}
	}
	return append(reasoning, rest...)
}

// noFiles refuses a file in a message whose role the API takes no files in
// (system, assistant, tool).
func noFiles(i int, msg agentloop.Message) error {
	return httpx.NoFiles("anthropic", "Anthropic takes files", i, msg)
}

func userBlocks(msg agentloop.Message, i int) ([]any, error) {
	var blocks []any
	for j, p := range msg.Parts {
		switch p.Type {
		case agentloop.PartText:
			if p.Text != "" {
				blocks = append(blocks, textBlock{Type: "text", Text: p.Text})
			}
		case agentloop.PartFile:
			if p.File == nil {
				return nil, fmt.Errorf("file part without a file")
			}
			b, err := fileBlock(p.File, i, j)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		}
	}
	return blocks, nil
}

// fileBlock is an image block (JPEG, PNG, GIF, WebP) or a document block
// (PDF), with the content inline or, for an http(s) URL, the URL.
func fileBlock(f *agentloop.File, msg, part int) (any, error) {
	fail := func(reason string) error {
		return &agentloop.FileError{Provider: "anthropic", Message: msg, Part: part, MediaType: f.MediaType, Filename: f.Filename, Reason: reason}
	}
	var kind string
	switch f.MediaType {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		kind = "image"
	case "application/pdf":
		kind = "document"
	default:
		return nil, fail("Anthropic takes JPEG, PNG, GIF and WebP images and PDFs only")
	}
	data, inline, err := f.Inline()
	switch {
	case err != nil:
		return nil, fail(err.Error())
	case !inline && !strings.HasPrefix(f.URL, "https://") && !strings.HasPrefix(f.URL, "http://"):
		return nil, fail("Anthropic takes the content or an http(s) URL")
	case !inline:
		return mediaBlock{Type: kind, Source: mediaSource{Type: "url", URL: f.URL}}, nil
	}
	return mediaBlock{Type: kind, Source: mediaSource{Type: "base64", MediaType: f.MediaType, Data: base64.StdEncoding.EncodeToString(data)}}, nil
}

// setBreakpoints marks the prompt-cache breakpoints of a request, at most
// four as the API allows, each where the prefix before it stays the same
// from one turn to the next (the API renders tools, then system, then
// messages): the last tool, the system prompt, the last block of the last
// user message (the whole conversation, read back by the next turn), and
// the last block of the user message before it (the previous turn's last
// breakpoint, so this turn reads what that one wrote even when more than the
// API's look-back of blocks came in between). A prefix shorter than the
// model's minimum (1024 tokens or more) is not cached; the API says so only
// through the usage counts.
func setBreakpoints(out *messagesRequest) {
	if n := len(out.Tools); n > 0 {
		out.Tools[n-1].CacheControl = ephemeral
	}
	if sys, ok := out.System.(string); ok {
		out.System = []textBlock{{Type: "text", Text: sys, CacheControl: ephemeral}}
	}
	marked := 0
	for i := len(out.Messages) - 1; i >= 0 && marked < 2; i-- {
		if out.Messages[i].Role == "user" && markLastBlock(out.Messages[i].Content) {
			marked++
		}
	}
}

// markLastBlock puts a breakpoint on the last block of a user message, when
// it is of a kind that can carry one.
func markLastBlock(blocks []any) bool {
	if len(blocks) == 0 {
		return false
	}
	switch b := blocks[len(blocks)-1].(type) {
	case textBlock:
		b.CacheControl = ephemeral
		blocks[len(blocks)-1] = b
	case toolResultBlock:
		b.CacheControl = ephemeral
		blocks[len(blocks)-1] = b
	case mediaBlock:
		b.CacheControl = ephemeral
		blocks[len(blocks)-1] = b
	default:
		return false
	}
	return true
}
