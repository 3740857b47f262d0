package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/sse"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

// streamChunk is one chat.completion.chunk (or an error event).
type streamChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			ToolCalls        []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type callState struct {
	id, name string
	args     []byte
	yielded  bool // yielded whole as a ToolCall
	whole    bool // its arguments are one complete JSON value
}

// decoder turns a stream's events into chunks. One per response; the zero
// value is ready.
type decoder struct {
	calls     []callState
	byIndex   map[int]int // server index -> ordinal in calls
	finish    string
	sawFinish bool
	usage     *agentloop.Usage
	chunk     streamChunk
}

// run reads body to its end, yielding chunks. It returns nil when done or
// when yield asked to stop, and the error to yield otherwise.
func (d *decoder) run(body io.Reader, yield func(agentloop.Chunk, error) bool) error {
	r := sse.NewReader(body)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			if !d.sawFinish {
				return httpx.EndedEarly("openai", "a finish reason")
			}
			break
		}
		if err != nil {
			return httpx.StreamBroken("openai", err)
		}
		data := bytes.TrimSpace(ev.Data)
		if string(data) == "[DONE]" {
			break
		}
		if len(data) == 0 {
			continue
		}
		more, err := d.event(ev.Name, data, yield)
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
	return d.end(yield)
}

// end yields what is left: calls not yet closed, usage, finish.
func (d *decoder) end(yield func(agentloop.Chunk, error) bool) error {
	if !d.flushCalls(yield) {
		return nil
	}
	if d.usage != nil && !yield(*d.usage, nil) {
		return nil
	}
	yield(agentloop.Finish{Reason: d.reason()}, nil)
	return nil
}

// reason maps the finish reason. "length" with calls whose arguments are
// all whole JSON is FinishToolCalls: the limit fell just after the calls
// were complete (see the providers package doc).
func (d *decoder) reason() agentloop.FinishReason {
	switch d.finish {
	case "stop":
		if len(d.calls) > 0 {
			return agentloop.FinishToolCalls // some servers say stop after calls
		}
		return agentloop.FinishStop
	case "length":
		if len(d.calls) > 0 && d.callsWhole() {
			return agentloop.FinishToolCalls
		}
		return agentloop.FinishLength
	case "tool_calls", "function_call":
		return agentloop.FinishToolCalls
	case "content_filter":
		return agentloop.FinishContentFilter
	case "":
		if len(d.calls) > 0 {
			return agentloop.FinishToolCalls
		}
		return agentloop.FinishStop
	}
	return agentloop.FinishOther
}

// event handles one data payload; more is false when yield said stop.
func (d *decoder) event(name string, data []byte, yield func(agentloop.Chunk, error) bool) (more bool, err error) {
	if name == "error" {
		return false, httpx.ParseErrorBody("openai", data)
	}
	c := &d.chunk
	// Reuse the choices array, zeroed: json does not clear the fields a
	// payload leaves out.
	old := c.Choices[:cap(c.Choices)]
	clear(old)
	*c = streamChunk{Choices: old[:0]}
	if err := json.Unmarshal(data, c); err != nil {
		return false, fmt.Errorf("openai: malformed stream event %q: %w", clip(data), err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return false, httpx.ParseErrorBody("openai", data)
	}
	if c.Usage != nil {
		u := c.Usage
		// OpenAI's completion_tokens include the reasoning tokens; xAI's
		// leave them out and count them in total_tokens only. Output is
		// every generated token either way.
		d.usage = &agentloop.Usage{Input: u.PromptTokens, Output: max(u.CompletionTokens, u.TotalTokens-u.PromptTokens)}
		if u.PromptTokensDetails != nil {
			d.usage.CacheRead = u.PromptTokensDetails.CachedTokens
		}
		if u.CompletionTokensDetails != nil {
			d.usage.Reasoning = u.CompletionTokensDetails.ReasoningTokens
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only the first choice is used (n is never set)
		}
		if t := ch.Delta.ReasoningContent; t != "" {
			if !yield(agentloop.ReasoningDelta{Text: t}, nil) {
				return false, nil
			}
		} else if t := ch.Delta.Reasoning; t != "" {
			if !yield(agentloop.ReasoningDelta{Text: t}, nil) {
				return false, nil
			}
		}
		if t := ch.Delta.Content; t != "" {
			if !yield(agentloop.TextDelta{Text: t}, nil) {
				return false, nil
			}
		}
		for _, tc := range ch.Delta.ToolCalls {
			ord := d.ordinal(tc.Index, tc.ID)
			cs := &d.calls[ord]
			if cs.id == "" {
				cs.id = tc.ID
			}
			if cs.name == "" {
				cs.name = tc.Function.Name
			}
			cs.args = append(cs.args, tc.Function.Arguments...)
			if !yield(agentloop.ToolCallDelta{Index: ord, ID: cs.id, Name: cs.name, Args: tc.Function.Arguments}, nil) {
				return false, nil
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			d.finish = *ch.FinishReason
			d.sawFinish = true
			if !d.flushCalls(yield) {
				return false, nil
			}
		}
	}
	return true, nil
}

// ordinal returns the position in d.calls of the call a delta belongs to,
// adding a new call when it starts one. Servers that send no index get one
// call per distinct id.
func (d *decoder) ordinal(index *int, id string) int {
	if index == nil {
		n := len(d.calls)
		if n > 0 && (id == "" || id == d.calls[n-1].id) {
			return n - 1
		}
		d.calls = append(d.calls, callState{})
		return n
	}
	if ord, ok := d.byIndex[*index]; ok {
		return ord
	}
	if d.byIndex == nil {
		d.byIndex = make(map[int]int)
	}
	d.byIndex[*index] = len(d.calls)
	d.calls = append(d.calls, callState{})
	return len(d.calls) - 1
}

// flushCalls yields each call not yet yielded whole, in order, with the
// server's id ("" when it sent none: the loop then makes one); false when
// yield said stop.
func (d *decoder) flushCalls(yield func(agentloop.Chunk, error) bool) bool {
	for i := range d.calls {
		c := &d.calls[i]
		if c.yielded {
			continue
		}
		c.yielded = true
		args := bytes.TrimSpace(c.args)
		// Whole: the server wrote complete JSON (servers send "{}" for no
		// arguments; nothing at all may be a call cut after its name).
		c.whole = len(args) > 0 && json.Valid(args)
		if len(args) == 0 {
			args = []byte("{}")
		}
		if !yield(agentloop.ToolCall{ID: c.id, Name: c.name, Args: json.RawMessage(bytes.Clone(args))}, nil) {
			return false
		}
		c.args = nil
	}
	return true
}

// callsWhole reports whether every call's arguments were whole JSON.
func (d *decoder) callsWhole() bool {
	for _, c := range d.calls {
		if !c.whole {
			return false
		}
	}
	return true
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
