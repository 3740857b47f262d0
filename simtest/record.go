package simtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"

	"github.com/agentloop/agentloop"
)

// Recorder is an [agentloop.Model] that passes every call to Model and
// records it as a [Turn] of a [Script]: the reply as Model streamed it
// (text, reasoning and signatures, tool calls, usage, finish, and an error
// as a [Fail] step) and, as the turn's [Expect], what the agent sent: the
// system prompt, the messages and the names of the tools offered. Played
// by the model of [Script.Model], the script replays the session with no
// server, and a replay whose agent sends something else fails with an
// [*ExpectationError] naming the first difference.
//
// A script holds only what a [agentloop.Request] holds and what the model
// streamed: no header, key or URL of the provider. Content is written as it
// was unless Redact rewrites it.
//
// A Recorder is safe for concurrent use; turns are recorded in the order
// their calls started. The zero value is not usable: set Model.
type Recorder struct {
	// Model is the model recorded.
	Model agentloop.Model
	// Redact, when non-nil, rewrites every text that goes into the script:
	// the system prompt, message texts, tool arguments, tool results, and
	// the reply's text, reasoning, tool arguments and error messages. To
	// keep a replay matching what the live agent sends, redact to a text
	// holding [Any] (replace a secret, an id or a timestamp with Any);
	// within a reply, Any is played as it is written.
	Redact func(string) string

	mu    sync.Mutex
	turns []*Turn // nil while the call streams
}

// Stream passes the call to r.Model and records it. See [agentloop.Model].
func (r *Recorder) Stream(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	return func(yield func(agentloop.Chunk, error) bool) {
		expect := r.expectOf(req)
		r.mu.Lock()
		slot := len(r.turns)
		r.turns = append(r.turns, nil)
		r.mu.Unlock()

		var reply []Step
		var text, reasoning strings.Builder
		flush := func() {
			if text.Len() > 0 {
				reply = append(reply, Text(r.redact(text.String())))
				text.Reset()
			}
			if reasoning.Len() > 0 {
				reply = append(reply, Reasoning(r.redact(reasoning.String())))
				reasoning.Reset()
			}
		}
		defer func() {
			flush()
			r.mu.Lock()
			r.turns[slot] = &Turn{Expect: expect, Reply: reply}
			r.mu.Unlock()
		}()
		for c, err := range r.Model.Stream(ctx, req) {
			if err != nil {
				flush()
				reply = append(reply, Fail(r.redact(err.Error())))
				yield(nil, err)
				return
			}
			switch c := c.(type) {
			case agentloop.TextDelta:
				if reasoning.Len() > 0 {
					flush()
				}
				text.WriteString(c.Text)
			case agentloop.ReasoningDelta:
				if text.Len() > 0 {
					flush()
				}
				reasoning.WriteString(c.Text)
			case agentloop.ReasoningEnd:
				flush()
				if c.Signature != "" {
					reply = append(reply, Signature(c.Signature))
				}
			case agentloop.ToolCall:
				flush()
				reply = append(reply, Call(c.ID, c.Name, json.RawMessage(r.redact(string(c.Args)))))
			case agentloop.Usage:
				flush()
				reply = append(reply, Usage(c.Input, c.Output))
			case agentloop.Finish:
				flush()
				reply = append(reply, Finish(c.Reason))
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// Script returns the turns recorded so far, in the order their calls
// started; a call still streaming is left out. Its TurnsBy is
// [TurnsByCall].
func (r *Recorder) Script() *Script {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &Script{Turns: []Turn{}}
	for _, t := range r.turns {
		if t != nil {
			s.Turns = append(s.Turns, *t)
		}
	}
	return s
}

func (r *Recorder) redact(s string) string {
	if r.Redact == nil {
		return s
	}
	return r.Redact(s)
}

func (r *Recorder) expectOf(req *agentloop.Request) Expect {
	e := Expect{Tools: make([]string, len(req.Tools)), System: r.redact(req.System), Messages: make([]Message, len(req.Messages))}
	for i, t := range req.Tools {
		e.Tools[i] = t.Name
	}
	for i, m := range req.Messages {
		msg := messageOf(m)
		msg.Text = r.redact(msg.Text)
		for j := range msg.Calls {
			msg.Calls[j].Args = json.RawMessage(r.redact(string(msg.Calls[j].Args)))
		}
		for j := range msg.Results {
			msg.Results[j].Content = r.redact(msg.Results[j].Content)
		}
		e.Messages[i] = msg
	}
	return e
}

// MarshalJSON writes s in the format [ParseScript] reads. A turn's
// ReplyFunc is not written; tool arguments are written compacted, and
// arguments that are not JSON as a JSON string.
func (s *Script) MarshalJSON() ([]byte, error) {
	type turnDoc struct {
		Expect *Expect          `json:"expect,omitempty"`
		Reply  []map[string]any `json:"reply"`
	}
	doc := struct {
		TurnsBy TurnsBy   `json:"turns_by,omitempty"`
		Turns   []turnDoc `json:"turns"`
	}{TurnsBy: s.TurnsBy, Turns: make([]turnDoc, len(s.Turns))}
	for i, t := range s.Turns {
		td := turnDoc{Reply: make([]map[string]any, len(t.Reply))}
		if !isZeroExpect(t.Expect) {
			td.Expect = &t.Expect
		}
		for j, st := range t.Reply {
			td.Reply[j] = stepJSON(st)
		}
		doc.Turns[i] = td
	}
	return json.Marshal(doc)
}

// WriteFile writes s to path in the format [ParseScript] reads, laid out
// for reading: expectations indented, each reply element on one line (so
// tool arguments keep the text the model wrote).
func (s *Script) WriteFile(path string) error {
	var out bytes.Buffer
	out.WriteString("{\n")
	if s.TurnsBy != TurnsByCall {
		fmt.Fprintf(&out, "  \"turns_by\": %q,\n", s.TurnsBy)
	}
	out.WriteString("  \"turns\": [")
	for i, t := range s.Turns {
		if i > 0 {
			out.WriteByte(',')
		}
		out.WriteString("\n    {")
		if !isZeroExpect(t.Expect) {
			e, err := json.MarshalIndent(t.Expect, "      ", "  ")
			if err != nil {
				return fmt.Errorf("simtest: %w", err)
			}
			out.WriteString("\"expect\": ")
			out.Write(e)
			out.WriteString(",\n     ")
		}
		out.WriteString("\"reply\": [")
		for j, st := range t.Reply {
			if j > 0 {
				out.WriteByte(',')
			}
			el, err := json.Marshal(stepJSON(st))
			if err != nil {
				return fmt.Errorf("simtest: %w", err)
			}
			out.WriteString("\n       ")
			out.Write(el)
		}
		out.WriteString("]}")
	}
	out.WriteString("\n  ]\n}\n")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("simtest: %w", err)
	}
	return nil
}

func isZeroExpect(e Expect) bool {
	return e.Tools == nil && e.User == "" && len(e.ToolResults) == 0 && e.System == "" && e.Messages == nil
}

func stepJSON(s Step) map[string]any {
	switch s.kind {
	case stepText:
		return map[string]any{"text": s.text}
	case stepReasoning:
		return map[string]any{"reasoning": s.text}
	case stepSignature:
		return map[string]any{"signature": s.text}
	case stepCall:
		args := any(s.call.Args)
		if !json.Valid(s.call.Args) {
			args = string(s.call.Args)
		}
		return map[string]any{"tool_call": struct {
			ID   string `json:"id,omitempty"`
			Name string `json:"name"`
			Args any    `json:"args"`
		}{s.call.ID, s.call.Name, args}}
	case stepUsage:
		return map[string]any{"usage": s.usage}
	case stepFinish:
		return map[string]any{"finish": s.finish}
	case stepFail:
		return map[string]any{"error": s.text}
	case stepDelay:
		return map[string]any{"delay_ms": s.delay.Milliseconds()}
	default:
		return map[string]any{"hang": true}
	}
}
