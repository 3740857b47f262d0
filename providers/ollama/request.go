package ollama

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/ollama/ollama/api"
)

// chatRequest builds the /api/chat request for req. It does not modify req.
func (m *Model) chatRequest(req *agentloop.Request) (*api.ChatRequest, error) {
	msgs, err := messages(req.System, req.Messages)
	if err != nil {
		return nil, err
	}
	tools, err := toolsFor(req.Tools)
	if err != nil {
		return nil, err
	}
	var format json.RawMessage
	if rf := req.Settings.ResponseFormat; rf != nil {
		if len(bytes.TrimSpace(rf.Schema)) == 0 {
			return nil, errors.New("ollama: Settings.ResponseFormat has no Schema")
		}
		format = rf.Schema
	}
	stream := true
	cr := &api.ChatRequest{
		Format:    format,
		Model:     m.cfg.Model,
		Messages:  msgs,
		Stream:    &stream,
		Tools:     tools,
		Options:   m.options(req.Settings),
		Think:     m.think,
		KeepAlive: m.keepAlive,
	}
	return cr, nil
}

// options merges, in increasing precedence: Config.Options, the Config
// fields, and the request's settings. The result is a new map.
func (m *Model) options(s agentloop.Settings) map[string]any {
	opts := make(map[string]any, len(m.cfg.Options)+4)
	maps.Copy(opts, m.cfg.Options)
	if m.cfg.Temperature != nil {
		opts["temperature"] = *m.cfg.Temperature
	}
	if m.cfg.NumCtx > 0 {
		opts["num_ctx"] = m.cfg.NumCtx
	}
	if s.MaxTokens > 0 {
		opts["num_predict"] = s.MaxTokens
	}
	if s.Temperature != nil {
		opts["temperature"] = *s.Temperature
	}
	if s.TopP != nil {
		opts["top_p"] = *s.TopP
	}
	if s.Seed != nil {
		opts["seed"] = *s.Seed
	}
	if len(s.Stop) > 0 {
		opts["stop"] = s.Stop
	}
	return opts
}

// messages maps the system prompt and the history to Ollama messages:
// reasoning goes back in "thinking", tool calls with their ids, names and
// arguments, each tool result as its own "tool" message with tool_call_id
// and tool_name, file parts as images. Approval parts are not sent.
func messages(system string, h agentloop.History) ([]api.Message, error) {
	out := make([]api.Message, 0, len(h)+1)
	if system != "" {
		out = append(out, api.Message{Role: "system", Content: system})
	}
	for i, msg := range h {
		switch msg.Role {
		case agentloop.RoleSystem, agentloop.RoleUser:
			am := api.Message{Role: string(msg.Role), Content: msg.Text()}
			for j, p := range msg.Parts {
				if p.Type != agentloop.PartFile || p.File == nil {
					continue
				}
				img, err := imageData(p.File, i, j)
				if err != nil {
					return nil, err
				}
				am.Images = append(am.Images, img)
			}
			out = append(out, am)
		case agentloop.RoleAssistant:
			am := api.Message{Role: "assistant"}
			var text, thinking strings.Builder
			for j, p := range msg.Parts {
				switch p.Type {
				case agentloop.PartFile:
					if f := p.File; f != nil {
						return nil, &agentloop.FileError{Provider: "ollama", Message: i, Part: j, MediaType: f.MediaType, Filename: f.Filename,
							Reason: "Ollama takes images in user and system messages only, not in assistant messages"}
					}
				case agentloop.PartText:
					text.WriteString(p.Text)
				case agentloop.PartReasoning:
					thinking.WriteString(p.Text)
				case agentloop.PartToolCall:
					if p.ToolCall == nil {
						continue
					}
					am.ToolCalls = append(am.ToolCalls, api.ToolCall{
						ID: p.ToolCall.ID,
						Function: api.ToolCallFunction{
							Index:     len(am.ToolCalls),
							Name:      p.ToolCall.Name,
							Arguments: arguments(p.ToolCall.Args),
						},
					})
				}
			}
			am.Content, am.Thinking = text.String(), thinking.String()
			out = append(out, am)
		case agentloop.RoleTool:
			for _, p := range msg.Parts {
				if p.Type != agentloop.PartToolResult || p.ToolResult == nil {
					continue
				}
				r := p.ToolResult
				out = append(out, api.Message{Role: "tool", Content: r.Content, ToolName: r.Name, ToolCallID: r.CallID})
			}
		default:
			return nil, fmt.Errorf("ollama: message %d has unknown role %q", i, msg.Role)
		}
	}
	return out, nil
}

// arguments decodes a call's arguments for sending back. Arguments that are
// not a JSON object (a call the loop refused, made by another provider) go
// back as {}: Ollama's message format has no place for anything else, and the
// call's error result already tells the model what was wrong.
func arguments(raw json.RawMessage) api.ToolCallFunctionArguments {
	args := api.NewToolCallFunctionArguments()
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return args
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return api.NewToolCallFunctionArguments()
	}
	return args
}

// imageData returns the bytes of an image part: its Data, or the content of
// a data: URL. Ollama takes images only, as bytes: anything else is a
// [*agentloop.FileError].
func imageData(f *agentloop.File, msg, part int) (api.ImageData, error) {
	fail := func(reason string) error {
		return &agentloop.FileError{Provider: "ollama", Message: msg, Part: part, MediaType: f.MediaType, Filename: f.Filename, Reason: reason}
	}
	if !strings.HasPrefix(f.MediaType, "image/") {
		return nil, fail("Ollama takes images only")
	}
	data, ok, err := f.Inline()
	switch {
	case err != nil:
		return nil, fail(err.Error())
	case !ok:
		return nil, fail("Ollama cannot fetch a URL; give the image's bytes (Data or a data: URL)")
	case len(data) == 0:
		return nil, fail("the image is empty")
	}
	return data, nil
}

// toolsFor maps tool definitions to Ollama's tool type. The schema must be
// a JSON object schema; the JSON Schema keywords Ollama's type has no field
// for (additionalProperties, minimum, format, …) are left out, as the
// Ollama server would drop them too.
func toolsFor(defs []agentloop.ToolDef) (api.Tools, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	tools := make(api.Tools, 0, len(defs))
	for _, d := range defs {
		params, err := parameters(d.Schema)
		if err != nil {
			return nil, fmt.Errorf("ollama: tool %q: %w", d.Name, err)
		}
		tools = append(tools, api.Tool{
			Type: "function",
			Function: api.ToolFunction{
				Name:        d.Name,
				Description: d.Description,
				Parameters:  params,
			},
		})
	}
	return tools, nil
}

func parameters(schema json.RawMessage) (api.ToolFunctionParameters, error) {
	var p api.ToolFunctionParameters
	if len(bytes.TrimSpace(schema)) > 0 {
		if err := json.Unmarshal(schema, &p); err != nil {
			return p, fmt.Errorf("its schema does not fit Ollama's tool parameters: %w", err)
		}
	}
	switch p.Type {
	case "":
		p.Type = "object"
	case "object":
	default:
		return p, fmt.Errorf("its schema has type %q; tool arguments must be an object", p.Type)
	}
	if p.Properties == nil {
		p.Properties = api.NewToolPropertiesMap()
	}
	return p, nil
}
