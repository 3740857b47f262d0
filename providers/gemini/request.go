package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

// request maps req onto the SDK's contents and config.
func (m *Model) request(req *agentloop.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	off := false
	config := &genai.GenerateContentConfig{
		MaxOutputTokens:       int32(req.Settings.MaxTokens),
		StopSequences:         req.Settings.Stop,
		AutomaticContinuation: &off,
	}
	if t := req.Settings.Temperature; t != nil {
		f := float32(*t)
		config.Temperature = &f
	}
	if p := req.Settings.TopP; p != nil {
		f := float32(*p)
		config.TopP = &f
	}
	if s := req.Settings.Seed; s != nil {
		n := int32(*s)
		config.Seed = &n
	}
	if m.cfg.IncludeThoughts || m.cfg.ThinkingBudget != 0 {
		config.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: m.cfg.IncludeThoughts}
		if b := m.cfg.ThinkingBudget; b != 0 {
			n := int32(b)
			config.ThinkingConfig.ThinkingBudget = &n
		}
	}
	if rf := req.Settings.ResponseFormat; rf != nil {
		if len(bytes.TrimSpace(rf.Schema)) == 0 {
			return nil, nil, errors.New("gemini: Settings.ResponseFormat has no Schema")
		}
		config.ResponseMIMEType = "application/json"
		config.ResponseJsonSchema = rf.Schema
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, len(req.Tools))
		for i, t := range req.Tools {
			decls[i] = &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if len(t.Schema) > 0 {
				decls[i].ParametersJsonSchema = t.Schema
			}
		}
		config.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}

	var system []string
	if req.System != "" {
		system = append(system, req.System)
	}
	var contents []*genai.Content
	for i, msg := range req.Messages {
		switch msg.Role {
		case agentloop.RoleSystem:
			if err := noFiles(i, msg); err != nil {
				return nil, nil, err
			}
			if t := msg.Text(); t != "" {
				system = append(system, t)
			}
		case agentloop.RoleUser:
			parts, err := userParts(msg, i)
			if err != nil {
				return nil, nil, err
			}
			contents = appendContent(contents, genai.RoleUser, parts)
		case agentloop.RoleAssistant:
			if err := noFiles(i, msg); err != nil {
				return nil, nil, err
			}
			contents = appendContent(contents, genai.RoleModel, modelParts(msg))
		case agentloop.RoleTool:
			if err := noFiles(i, msg); err != nil {
				return nil, nil, err
			}
			var parts []*genai.Part
			for _, p := range msg.Parts {
				if p.Type != agentloop.PartToolResult || p.ToolResult == nil {
					continue // approvals are not sent to the model
				}
				r := p.ToolResult
				key := "output"
				if r.IsError {
					key = "error"
				}
				parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
					ID: r.CallID, Name: r.Name, Response: map[string]any{key: r.Content},
				}})
			}
			contents = appendContent(contents, genai.RoleUser, parts)
		default:
			return nil, nil, fmt.Errorf("gemini: message %d has unknown role %q", i, msg.Role)
		}
	}
	if len(system) > 0 {
		config.SystemInstruction = genai.NewContentFromText(strings.Join(system, "\n\n"), genai.RoleUser)
	}
	return contents, config, nil
}

// appendContent adds parts as a content of role, merged into the previous
// one when it has the same role (all function responses of a turn go in one
// content, as the API wants).
func appendContent(contents []*genai.Content, role string, parts []*genai.Part) []*genai.Content {
	if len(parts) == 0 {
		return contents
	}
	if n := len(contents); n > 0 && contents[n-1].Role == role {
		contents[n-1].Parts = append(contents[n-1].Parts, parts...)
		return contents
	}
	return append(contents, &genai.Content{Role: role, Parts: parts})
}

// modelParts maps an assistant message. Reasoning is not sent back (the API
// does not read thoughts), but its signature is: on the part that follows
// it, where the API put it, or on an empty text part of its own when
// nothing follows.
func modelParts(msg agentloop.Message) []*genai.Part {
	var parts []*genai.Part
	var sig []byte
	for _, p := range msg.Parts {
		var part *genai.Part
		switch p.Type {
		case agentloop.PartReasoning:
			if s, err := base64.StdEncoding.DecodeString(p.Signature); err == nil && len(s) > 0 {
				sig = s
			}
			continue
		case agentloop.PartText:
			if p.Text == "" {
				continue
			}
			part = &genai.Part{Text: p.Text}
		case agentloop.PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			args := map[string]any{}
			_ = json.Unmarshal(p.ToolCall.Args, &args) // a cut-off call still needs an object
			if args == nil {
				args = map[string]any{}
			}
			part = &genai.Part{FunctionCall: &genai.FunctionCall{ID: p.ToolCall.ID, Name: p.ToolCall.Name, Args: args}}
		default:
			continue
		}
		part.ThoughtSignature, sig = sig, nil
		parts = append(parts, part)
	}
	if sig != nil {
		parts = append(parts, &genai.Part{ThoughtSignature: sig})
	}
	return parts
}

// noFiles refuses a file in a message whose role this provider sends no
// files in (system, assistant, tool).
func noFiles(i int, msg agentloop.Message) error {
	return httpx.NoFiles("gemini", "Gemini is sent files", i, msg)
}

// userParts maps a user message: text, and files inline (their content) or
// by URI (any other URL, such as the Files API's or gs://).
func userParts(msg agentloop.Message, i int) ([]*genai.Part, error) {
	var parts []*genai.Part
	for j, p := range msg.Parts {
		switch p.Type {
		case agentloop.PartText:
			if p.Text != "" {
				parts = append(parts, &genai.Part{Text: p.Text})
			}
		case agentloop.PartFile:
			f := p.File
			if f == nil {
				return nil, fmt.Errorf("gemini: message %d part %d: file part without a file", i, j)
			}
			fail := func(reason string) error {
				return &agentloop.FileError{Provider: "gemini", Message: i, Part: j, MediaType: f.MediaType, Filename: f.Filename, Reason: reason}
			}
			top, _, _ := strings.Cut(f.MediaType, "/")
			switch {
			case top == "image" || top == "audio" || top == "video" || top == "text" || f.MediaType == "application/pdf":
			default:
				return nil, fail("Gemini takes images, audio, video, text and PDFs only")
			}
			data, inline, err := f.Inline()
			switch {
			case err != nil:
				return nil, fail(err.Error())
			case !inline:
				parts = append(parts, &genai.Part{FileData: &genai.FileData{FileURI: f.URL, MIMEType: f.MediaType}})
			default:
				parts = append(parts, &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: f.MediaType}})
			}
		}
	}
	return parts, nil
}
