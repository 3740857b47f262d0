package providertest

import (
	"context"

	"github.com/agentloop/agentloop"
)

// Collect runs one m.Stream with a background context and returns the
// chunks it yielded before its error, and that error (nil if it ended
// well). A nil req is passed on as it is.
func Collect(m agentloop.Model, req *agentloop.Request) ([]agentloop.Chunk, error) {
	var out []agentloop.Chunk
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// UserRequest is a request of one user message with text.
func UserRequest(text string) *agentloop.Request {
	return &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage(text)}}
}

// Summary is what a stream of chunks amounts to, in a form tests compare.
type Summary struct {
	Text, Reasoning string
	TextDeltas      int
	ReasoningDeltas int
	ReasoningEnds   []agentloop.ReasoningEnd
	Calls           []agentloop.ToolCall
	ArgFragments    map[int]int // non-empty ToolCallDelta fragments per call index
	Usage           []agentloop.Usage
	Finish          []agentloop.FinishReason
	LastIsFinish    bool // the last chunk is a Finish
}

// Summarize sums chunks up; nil chunks give a Summary with only an empty
// ArgFragments map.
func Summarize(chunks []agentloop.Chunk) Summary {
	s := Summary{ArgFragments: map[int]int{}}
	for _, c := range chunks {
		switch c := c.(type) {
		case agentloop.TextDelta:
			s.Text += c.Text
			s.TextDeltas++
		case agentloop.ReasoningDelta:
			s.Reasoning += c.Text
			s.ReasoningDeltas++
		case agentloop.ReasoningEnd:
			s.ReasoningEnds = append(s.ReasoningEnds, c)
		case agentloop.ToolCallDelta:
			if c.Args != "" {
				s.ArgFragments[c.Index]++
			}
		case agentloop.ToolCall:
			s.Calls = append(s.Calls, c)
		case agentloop.Usage:
			s.Usage = append(s.Usage, c)
		case agentloop.Finish:
			s.Finish = append(s.Finish, c.Reason)
		}
	}
	if len(chunks) > 0 {
		_, s.LastIsFinish = chunks[len(chunks)-1].(agentloop.Finish)
	}
	return s
}
