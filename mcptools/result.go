package mcptools

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultText turns a tool result into the text the model sees: the
// structured content as JSON when the call succeeded and has some, else
// the content blocks in order, one per line, with text as is and anything
// else described.
func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	if res.StructuredContent != nil && !res.IsError {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		parts = append(parts, describe(c))
	}
	return strings.Join(parts, "\n")
}

// describe renders one content block as text.
func describe(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *mcp.ResourceLink:
		s := "[resource link: " + c.URI
		if c.Name != "" && c.Name != c.URI {
			s += " (" + c.Name + ")"
		}
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		if c.Description != "" {
			s += ": " + c.Description
		}
		return s + "]"
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[empty embedded resource]"
		}
		if r.Blob != nil {
			return fmt.Sprintf("[resource %s: %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
		}
		head := "[resource " + r.URI
		if r.MIMEType != "" {
			head += ", " + r.MIMEType
		}
		return head + "]\n" + r.Text
	case nil:
		return ""
	default:
		return fmt.Sprintf("[content of type %T, not shown]", c)
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// truncate cuts s to at most max bytes, on a character boundary, and says
// so at the end. max <= 0 means no limit.
func truncate(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[truncated by agentloop: the result has " + strconv.Itoa(len(s)) +
		" bytes; only the first " + strconv.Itoa(cut) + " are shown]"
}

// FormatProgress is the default [ServerOptions.FormatProgress]: the progress
// and total as "progress 2/5" (or "progress 2" when the total is unknown),
// followed by ": " and the message when there is one.
func FormatProgress(p *mcp.ProgressNotificationParams) string {
	s := "progress " + strconv.FormatFloat(p.Progress, 'g', -1, 64)
	if p.Total > 0 {
		s += "/" + strconv.FormatFloat(p.Total, 'g', -1, 64)
	}
	if p.Message != "" {
		s += ": " + p.Message
	}
	return s
}
