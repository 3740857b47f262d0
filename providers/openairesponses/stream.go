package openairesponses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/sse"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

// event is one streamed event; the fields used depend on its type.
type event struct {
	Type         string          `json:"type"`
	OutputIndex  int             `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	Item         *outputItem     `json:"item"`
	Delta        string          `json:"delta"`
	Arguments    string          `json:"arguments"`
	Response     *response       `json:"response"`
	Code         json.RawMessage `json:"code"`
	Message      string          `json:"message"`
	Error        *apiError       `json:"error"`
}

type outputItem struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	Status           string `json:"status"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
}

type response struct {
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *apiError `json:"error"`
	Usage *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

type apiError struct {
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

// item is the state of one output item, by output_index.
type item struct {
	kind    string // message, reasoning, function_call, or other
	ordinal int    // function_call: 0-based position among the calls
	id      string // function_call: call_id
	name    string
	args    []byte
	done    bool // function_call: yielded as a ToolCall; reasoning: closed
	whole   bool // function_call: completed, with whole JSON arguments
	deltas  bool // reasoning: a delta was yielded
}

// decoder turns one response's events into chunks; the zero value is ready.
type decoder struct {
	items   map[int]*item
	calls   int
	refusal bool
}

// run reads body to its terminal event, yielding chunks. It returns nil
// when done or when yield asked to stop, and the error to yield otherwise.
func (d *decoder) run(body io.Reader, yield func(agentloop.Chunk, error) bool) error {
	r := sse.NewReader(body)
	for {
		e, err := r.Next()
		if err == io.EOF {
			return httpx.EndedEarly("openai", "response.completed")
		}
		if err != nil {
			return httpx.StreamBroken("openai", err)
		}
		data := bytes.TrimSpace(e.Data)
		if len(data) == 0 || string(data) == "[DONE]" {
			continue
		}
		var ev event
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("openai: malformed stream event %q: %w", clip(data), err)
		}
		if ev.Type == "" {
			ev.Type = e.Name
		}
		more, done, err := d.event(&ev, yield)
		if err != nil {
			return err
		}
		if !more || done {
			return nil
		}
	}
}

// event handles one event. more is false when yield said stop; done is
// true after the terminal event.
func (d *decoder) event(ev *event, yield func(agentloop.Chunk, error) bool) (more, done bool, err error) {
	switch ev.Type {
	case "response.output_item.added":
		if ev.Item == nil {
			return false, false, fmt.Errorf("openai: %s %d without an item", ev.Type, ev.OutputIndex)
		}
		it := d.item(ev.OutputIndex)
		*it = item{kind: ev.Item.Type}
		if it.kind == "function_call" {
			it.ordinal, it.id, it.name = d.calls, ev.Item.CallID, ev.Item.Name
			d.calls++
			it.args = append(it.args, ev.Item.Arguments...)
			return yield(agentloop.ToolCallDelta{Index: it.ordinal, ID: it.id, Name: it.name, Args: ev.Item.Arguments}, nil), false, nil
		}
	case "response.reasoning_summary_part.added":
		if it := d.item(ev.OutputIndex); ev.SummaryIndex > 0 && it.deltas {
			return yield(agentloop.ReasoningDelta{Text: "\n\n"}, nil), false, nil
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if ev.Delta == "" {
			break
		}
		it := d.item(ev.OutputIndex)
		if it.kind == "" {
			it.kind = "reasoning"
		}
		it.deltas = true
		return yield(agentloop.ReasoningDelta{Text: ev.Delta}, nil), false, nil
	case "response.output_text.delta", "response.refusal.delta":
		if ev.Type == "response.refusal.delta" {
			d.refusal = true
		}
		if ev.Delta == "" {
			break
		}
		return yield(agentloop.TextDelta{Text: ev.Delta}, nil), false, nil
	case "response.function_call_arguments.delta":
		it := d.item(ev.OutputIndex)
		if it.kind != "function_call" || ev.Delta == "" {
			break
		}
		it.args = append(it.args, ev.Delta...)
		return yield(agentloop.ToolCallDelta{Index: it.ordinal, ID: it.id, Name: it.name, Args: ev.Delta}, nil), false, nil
	case "response.function_call_arguments.done":
		if it := d.item(ev.OutputIndex); it.kind == "function_call" && ev.Arguments != "" {
			it.args = append(it.args[:0], ev.Arguments...)
		}
	case "response.output_item.done":
		if ev.Item == nil {
			return false, false, fmt.Errorf("openai: %s %d without an item", ev.Type, ev.OutputIndex)
		}
		it := d.item(ev.OutputIndex)
		switch ev.Item.Type {
		case "function_call":
			if it.kind != "function_call" { // done without added
				*it = item{kind: "function_call", ordinal: d.calls, id: ev.Item.CallID, name: ev.Item.Name}
				d.calls++
			}
			if ev.Item.Arguments != "" {
				it.args = append(it.args[:0], ev.Item.Arguments...)
			}
			complete := ev.Item.Status == "" || ev.Item.Status == "completed"
			return d.yieldCall(it, complete, yield), false, nil
		case "reasoning":
			if it.done {
				break
			}
			it.kind, it.done = "reasoning", true
			return yield(agentloop.ReasoningEnd{Signature: ev.Item.ID, Redacted: ev.Item.EncryptedContent}, nil), false, nil
		}
	case "response.completed", "response.incomplete", "response.failed":
		return d.end(ev, yield)
	case "error":
		return false, false, streamError(ev)
	}
	return true, false, nil
}

// end handles the terminal event: it yields calls and reasoning left open,
// the usage and the finish reason, or returns the failure.
func (d *decoder) end(ev *event, yield func(agentloop.Chunk, error) bool) (more, done bool, err error) {
	resp := ev.Response
	if resp == nil {
		resp = &response{}
	}
	if ev.Type == "response.failed" || resp.Status == "failed" {
		if resp.Error != nil {
			return false, false, apiErr(resp.Error)
		}
		return false, false, &providers.APIError{Provider: "openai", Message: "the response failed without saying why"}
	}
	for _, idx := range slices.Sorted(maps.Keys(d.items)) { // output order

		it := d.items[idx]
		switch {
		case it.kind == "function_call" && !it.done:
			if !d.yieldCall(it, false, yield) {
				return false, false, nil
			}
		case it.kind == "reasoning" && !it.done:
			it.done = true
			if !yield(agentloop.ReasoningEnd{}, nil) {
				return false, false, nil
			}
		}
	}
	if u := resp.Usage; u != nil && !yield(agentloop.Usage{
		Input:     u.InputTokens,
		Output:    u.OutputTokens,
		CacheRead: u.InputTokensDetails.CachedTokens,
		Reasoning: u.OutputTokensDetails.ReasoningTokens,
	}, nil) {
		return false, false, nil
	}
	yield(agentloop.Finish{Reason: d.reason(ev.Type, resp)}, nil)
	return true, true, nil
}

// reason maps the terminal event to a finish reason.
func (d *decoder) reason(typ string, resp *response) agentloop.FinishReason {
	if typ == "response.incomplete" || resp.Status == "incomplete" {
		why := ""
		if resp.IncompleteDetails != nil {
			why = resp.IncompleteDetails.Reason
		}
		switch why {
		case "max_output_tokens":
			if d.calls > 0 && d.callsWhole() {
				return agentloop.FinishToolCalls // see the providers package doc
			}
			return agentloop.FinishLength
		case "content_filter":
			return agentloop.FinishContentFilter
		}
		return agentloop.FinishOther
	}
	switch {
	case d.calls > 0:
		return agentloop.FinishToolCalls
	case d.refusal:
		return agentloop.FinishContentFilter
	}
	return agentloop.FinishStop
}

// yieldCall yields it whole, once; false when yield said stop.
func (d *decoder) yieldCall(it *item, complete bool, yield func(agentloop.Chunk, error) bool) bool {
	if it.done {
		return true
	}
	it.done = true
	args := bytes.TrimSpace(it.args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	it.whole = complete && json.Valid(args)
	return yield(agentloop.ToolCall{ID: it.id, Name: it.name, Args: json.RawMessage(bytes.Clone(args))}, nil)
}

func (d *decoder) callsWhole() bool {
	for _, it := range d.items {
		if it.kind == "function_call" && !it.whole {
			return false
		}
	}
	return true
}

// item returns the state of output item i, creating it.
func (d *decoder) item(i int) *item {
	if d.items == nil {
		d.items = make(map[int]*item)
	}
	it, ok := d.items[i]
	if !ok {
		it = &item{}
		d.items[i] = it
	}
	return it
}

// streamError is the APIError of an "error" event, whose code and message
// are at its top level (or, from some servers, in an "error" object).
func streamError(ev *event) error {
	if ev.Error != nil {
		return apiErr(ev.Error)
	}
	return apiErr(&apiError{Code: ev.Code, Message: ev.Message})
}

func apiErr(e *apiError) *providers.APIError {
	code := httpx.ErrorCode(e.Code)
	typ := e.Type
	if typ == "" {
		typ = code // the sentinels are matched on the type: rate_limit_exceeded, server_error, ...
		code = ""
	}
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	return &providers.APIError{Provider: "openai", Type: typ, Code: code, Message: msg}
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
