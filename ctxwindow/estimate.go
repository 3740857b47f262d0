package ctxwindow

import "github.com/agentloop/agentloop"

// Estimator estimates how many tokens parts of a request cost. The [Manager]
// calls it for every message of every request it shapes, so it must be fast
// (the default looks at lengths only, never at the bytes); it is called from
// the goroutine that ranges over a run, and a Manager shared by concurrent
// runs calls it concurrently, so an implementation must be safe for that.
//
// Estimates need not be exact: the Manager corrects them by the input
// counts that providers report (see [Manager]).
type Estimator interface {
	// Message returns the tokens of one message as a provider sends it.
	Message(m agentloop.Message) int
	// Text returns the tokens of a text: the system prompt, or the name,
	// description and schema of a tool.
	Text(s string) int
}

// Defaults of [Bytes].
const (
	DefaultBytesPerToken   = 4
	DefaultMessageOverhead = 4
	DefaultFileTokens      = 1500
)

// Bytes is the default [Estimator]: a token per BytesPerToken bytes of
// text, reasoning, arguments and results, plus MessageOverhead per message
// and per tool call or result, and FileTokens per attached file. It reads
// lengths only, so it costs the same for a short and a long message. Four
// bytes per token is close for English prose with the tokenizers of current
// models, and low for JSON and code; the provider's counts correct it.
//
// The zero value uses the defaults above. Bytes is safe for concurrent use.
type Bytes struct {
	// BytesPerToken is how many bytes make one token; 0 means
	// DefaultBytesPerToken.
	BytesPerToken int
	// MessageOverhead is the tokens a message, a tool call and a tool
	// result cost besides their text (role markers, ids, framing); 0 means
	// DefaultMessageOverhead, a negative value means none.
	MessageOverhead int
	// FileTokens is what one attached file or image costs; 0 means
	// DefaultFileTokens, a negative value means none.
	FileTokens int
}

func (b Bytes) perToken() int {
	if b.BytesPerToken > 0 {
		return b.BytesPerToken
	}
	return DefaultBytesPerToken
}

func (b Bytes) overhead() int {
	switch {
	case b.MessageOverhead > 0:
		return b.MessageOverhead
	case b.MessageOverhead < 0:
		return 0
	}
	return DefaultMessageOverhead
}

func (b Bytes) file() int {
	switch {
	case b.FileTokens > 0:
		return b.FileTokens
	case b.FileTokens < 0:
		return 0
	}
	return DefaultFileTokens
}

// Text implements [Estimator]: len(s) / BytesPerToken, rounded up.
func (b Bytes) Text(s string) int { return b.bytes(len(s)) }

func (b Bytes) bytes(n int) int {
	per := b.perToken()
	return (n + per - 1) / per
}

// Message implements [Estimator].
func (b Bytes) Message(m agentloop.Message) int {
	over := b.overhead()
	n := 0 // bytes
	t := over
	for _, p := range m.Parts {
		switch p.Type {
		case agentloop.PartText:
			n += len(p.Text)
		case agentloop.PartReasoning:
			n += len(p.Text) + len(p.Signature) + len(p.Redacted)
		case agentloop.PartToolCall:
			if p.ToolCall != nil {
				n += len(p.ToolCall.ID) + len(p.ToolCall.Name) + len(p.ToolCall.Args)
				t += over
			}
		case agentloop.PartToolResult:
			if p.ToolResult != nil {
				n += len(p.ToolResult.CallID) + len(p.ToolResult.Name) + len(p.ToolResult.Content)
				t += over
			}
		case agentloop.PartFile:
			t += b.file()
		}
	}
	return t + b.bytes(n)
}
