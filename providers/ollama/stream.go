package ollama

import (
	"github.com/agentloop/agentloop"
	"github.com/ollama/ollama/api"
)

// mapper turns the decoded chunks of one /api/chat stream into
// agentloop chunks. It is used by one goroutine, for one stream.
type mapper struct {
	reasoning bool // a reasoning block is open
	calls     int  // tool calls yielded so far
	chunks    int  // stream chunks seen
	done      bool // the final chunk (done:true) was seen
}

// add maps one chunk, passing each agentloop chunk to emit in order. Within
// one chunk, thinking comes before content, and content before tool calls.
// It returns false as soon as emit does. Chunks after the final one are
// ignored.
func (m *mapper) add(r *api.ChatResponse, emit func(agentloop.Chunk) bool) bool {
	if m.done {
		return true
	}
	m.chunks++
	msg := &r.Message
	if msg.Thinking != "" {
		m.reasoning = true
		if !emit(agentloop.ReasoningDelta{Text: msg.Thinking}) {
			return false
		}
	}
	if msg.Content != "" {
		if !m.closeReasoning(emit) || !emit(agentloop.TextDelta{Text: msg.Content}) {
			return false
		}
	}
	for i := range msg.ToolCalls {
		if !m.closeReasoning(emit) || !emit(m.toolCall(&msg.ToolCalls[i])) {
			return false
		}
	}
	if !r.Done {
		return true
	}
	m.done = true
	if !m.closeReasoning(emit) {
		return false
	}
	if !emit(agentloop.Usage{Input: max(r.PromptEvalCount, 0), Output: max(r.EvalCount, 0)}) {
		return false
	}
	return emit(agentloop.Finish{Reason: finishReason(r.DoneReason, m.calls > 0)})
}

// closeReasoning ends an open reasoning block. Ollama has no signature, so
// the ReasoningEnd is empty.
func (m *mapper) closeReasoning(emit func(agentloop.Chunk) bool) bool {
	if !m.reasoning {
		return true
	}
	m.reasoning = false
	return emit(agentloop.ReasoningEnd{})
}

// toolCall returns the complete call: the server's id ("" when it sent
// none: the loop makes one), the arguments as a JSON object ({} when there are
// none) whose top-level keys keep the model's order and whose nested objects
// have sorted keys (the official client decodes them into Go maps), so the
// JSON is deterministic for a given stream.
func (m *mapper) toolCall(tc *api.ToolCall) agentloop.ToolCall {
	m.calls++
	args, err := tc.Function.Arguments.MarshalJSON()
	if err != nil || len(args) == 0 || string(args) == "null" {
		// Arguments decoded from JSON always marshal again; keep the
		// call well-formed if they somehow do not.
		args = []byte("{}")
	}
	return agentloop.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args}
}

// finishReason maps Ollama's done_reason. Ollama says "stop" when the model
// ended its turn with tool calls, so calls make it FinishToolCalls. It says
// "length" when the token limit falls on or just after the token that
// completes a call; Ollama's parsers pass on only calls parsed whole (a
// call cut mid-way is dropped), so calls make that FinishToolCalls too, as
// Ollama's own OpenAI- and Anthropic-compatible endpoints report it.
func finishReason(doneReason string, calls bool) agentloop.FinishReason {
	switch doneReason {
	case "stop", "", "tool_calls":
		if calls {
			return agentloop.FinishToolCalls
		}
		return agentloop.FinishStop
	case "length":
		if calls {
			return agentloop.FinishToolCalls
		}
		return agentloop.FinishLength
	default:
		// "load" and "unload" answer requests that only (un)load the
		// model; anything newer is unknown to this package.
		return agentloop.FinishOther
	}
}
