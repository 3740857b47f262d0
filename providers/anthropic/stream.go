package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/sse"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

type apiUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

type streamEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage apiUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type     string          `json:"type"`
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Text     string          `json:"text"`
		Thinking string          `json:"thinking"`
		Data     string          `json:"data"`
		Input    json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *apiUsage `json:"usage"`
}

type block struct {
	kind      string // text, thinking, redacted_thinking, tool_use, or other
	ordinal   int    // tool_use: 0-based position among the calls
	id, name  string
	args      []byte
	start     json.RawMessage // tool_use input in content_block_start
	signature string
	data      string
	open      bool
}

// decoder turns one response's events into chunks; the zero value is ready.
type decoder struct {
	blocks   []block
	calls    int
	cutCalls int // tool_use blocks not closed by their own content_block_stop, or without a whole input
	stop     string
	input    int
	cacheW   int // cache_creation_input_tokens
	cacheR   int // cache_read_input_tokens
	output   int
	sawUsage bool
}

// run reads body to its end, yielding chunks. It returns nil when done or
// when yield asked to stop, and the error to yield otherwise.
func (d *decoder) run(body io.Reader, yield func(agentloop.Chunk, error) bool) error {
	r := sse.NewReader(body)
	var ev streamEvent
	for {
		e, err := r.Next()
		if err == io.EOF {
			return httpx.EndedEarly("anthropic", "message_stop")
		}
		if err != nil {
			return httpx.StreamBroken("anthropic", err)
		}
		data := bytes.TrimSpace(e.Data)
		if len(data) == 0 {
			continue
		}
		ev = streamEvent{}
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("anthropic: malformed stream event %q: %w", clip(data), err)
		}
		if ev.Type == "" {
			ev.Type = e.Name
		}
		more, done, err := d.event(&ev, data, yield)
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		if done {
			return nil
		}
	}
}

func (d *decoder) event(ev *streamEvent, data []byte, yield func(agentloop.Chunk, error) bool) (more, done bool, err error) {
	switch ev.Type {
	case "ping":
	case "error":
		return false, false, httpx.ParseErrorBody("anthropic", data)
	case "message_start":
		if ev.Message != nil {
			d.addUsage(&ev.Message.Usage)
		}
	case "content_block_start":
		if ev.ContentBlock == nil {
			return false, false, fmt.Errorf("anthropic: content_block_start %d without a content_block", ev.Index)
		}
		cb := ev.ContentBlock
		b := d.block(ev.Index)
		*b = block{kind: cb.Type, open: true}
		switch cb.Type {
		case "text":
			if cb.Text != "" && !yield(agentloop.TextDelta{Text: cb.Text}, nil) {
				return false, false, nil
			}
		case "thinking":
			if cb.Thinking != "" && !yield(agentloop.ReasoningDelta{Text: cb.Thinking}, nil) {
				return false, false, nil
			}
		case "redacted_thinking":
			b.data = cb.Data
		case "tool_use":
			b.ordinal, b.id, b.name, b.start = d.calls, cb.ID, cb.Name, cb.Input
			d.calls++
			if !yield(agentloop.ToolCallDelta{Index: b.ordinal, ID: b.id, Name: b.name}, nil) {
				return false, false, nil
			}
		}
	case "content_block_delta":
		if ev.Delta == nil {
			return false, false, fmt.Errorf("anthropic: content_block_delta %d without a delta", ev.Index)
		}
		b := d.block(ev.Index)
		var c agentloop.Chunk
		switch ev.Delta.Type {
		case "text_delta":
			c = agentloop.TextDelta{Text: ev.Delta.Text}
		case "thinking_delta":
			c = agentloop.ReasoningDelta{Text: ev.Delta.Thinking}
		case "signature_delta":
			b.signature += ev.Delta.Signature
		case "input_json_delta":
			// Only the client's tools: a server_tool_use block (a tool the
			// API runs itself) streams its input too.
			if b.kind == "tool_use" && ev.Delta.PartialJSON != "" {
				b.args = append(b.args, ev.Delta.PartialJSON...)
				c = agentloop.ToolCallDelta{Index: b.ordinal, ID: b.id, Name: b.name, Args: ev.Delta.PartialJSON}
			}
		}
		if c != nil && !yield(c, nil) {
			return false, false, nil
		}
	case "content_block_stop":
		b := d.block(ev.Index)
		if b.open && b.kind == "tool_use" && !b.wholeInput() {
			d.cutCalls++ // see reason
		}
		if !d.closeBlock(b, yield) {
			return false, false, nil
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			d.stop = ev.Delta.StopReason
		}
		if ev.Usage != nil {
			d.addUsage(ev.Usage)
		}
	case "message_stop":
		for i := range d.blocks {
			if d.blocks[i].open && d.blocks[i].kind == "tool_use" {
				d.cutCalls++
			}
			if !d.closeBlock(&d.blocks[i], yield) {
				return false, false, nil
			}
		}
		if d.sawUsage && !yield(d.usage(), nil) {
			return false, false, nil
		}
		yield(agentloop.Finish{Reason: d.reason()}, nil)
		return true, true, nil
	}
	return true, false, nil
}

// wholeInput reports whether a tool_use block's input is known to be
// complete: JSON from input_json_delta, or a non-empty object given whole
// in content_block_start. An input of {} from the start with no deltas may
// be a call cut right after its name, so it does not count.
func (b *block) wholeInput() bool {
	if args := bytes.TrimSpace(b.args); len(args) > 0 {
		return json.Valid(args)
	}
	start := bytes.TrimSpace(b.start)
	var obj map[string]json.RawMessage
	return json.Unmarshal(start, &obj) == nil && len(obj) > 0
}

// block returns the state of content block i, growing the list as needed.
func (d *decoder) block(i int) *block {
	if i < 0 {
		i = 0
	}
	for len(d.blocks) <= i {
		d.blocks = append(d.blocks, block{})
	}
	return &d.blocks[i]
}

// closeBlock yields what ends block b; false when yield said stop.
func (d *decoder) closeBlock(b *block, yield func(agentloop.Chunk, error) bool) bool {
	if !b.open {
		return true
	}
	b.open = false
	switch b.kind {
	case "thinking":
		return yield(agentloop.ReasoningEnd{Signature: b.signature}, nil)
	case "redacted_thinking":
		return yield(agentloop.ReasoningEnd{Redacted: b.data}, nil)
	case "tool_use":
		args := bytes.TrimSpace(b.args)
		if len(args) == 0 {
			args = bytes.TrimSpace(b.start)
		}
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		return yield(agentloop.ToolCall{ID: b.id, Name: b.name, Args: json.RawMessage(bytes.Clone(args))}, nil)
	}
	return true
}

func (d *decoder) addUsage(u *apiUsage) {
	d.sawUsage = true
	if u.InputTokens != nil {
		d.input = *u.InputTokens
	}
	if u.CacheCreationInputTokens != nil {
		d.cacheW = *u.CacheCreationInputTokens
	}
	if u.CacheReadInputTokens != nil {
		d.cacheR = *u.CacheReadInputTokens
	}
	if u.OutputTokens != nil {
		d.output = *u.OutputTokens
	}
}

// usage is the reply's usage. The API counts cache reads and writes apart
// from input_tokens; agentloop.Usage counts them in Input.
func (d *decoder) usage() agentloop.Usage {
	return agentloop.Usage{
		Input:      d.input + d.cacheW + d.cacheR,
		Output:     d.output,
		CacheRead:  d.cacheR,
		CacheWrite: d.cacheW,
	}
}

func (d *decoder) reason() agentloop.FinishReason {
	switch d.stop {
	case "end_turn", "stop_sequence":
		return agentloop.FinishStop
	case "tool_use":
		return agentloop.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		if d.calls > 0 && d.cutCalls == 0 {
			// The limit fell just after the calls were complete: run them
			// (see the providers package doc).
			return agentloop.FinishToolCalls
		}
		return agentloop.FinishLength
	case "refusal":
		return agentloop.FinishContentFilter
	case "":
		if d.calls > 0 {
			return agentloop.FinishToolCalls
		}
		return agentloop.FinishStop
	}
	return agentloop.FinishOther
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
