package simtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentloop/agentloop"
)

// ErrBadScript is wrapped by every error [ParseScript] returns.
var ErrBadScript = errors.New("simtest: bad script")

// TurnsBy says how a [Model] picks the turn a model call plays.
type TurnsBy string

const (
	// TurnsByCall plays the turns in the order of the calls, whichever run
	// or conversation makes them: the n-th call plays the n-th turn. It is
	// the default.
	TurnsByCall TurnsBy = ""
	// TurnsByConversation plays, to a request whose messages hold n
	// assistant messages after the last user message, turn n+1: the turn is
	// chosen by the conversation, not by the model's history of calls, so
	// every chat, in every process, plays the same script the same way (a
	// run continued by another process goes on where it was). Every user
	// message starts the script over at its first turn.
	TurnsByConversation TurnsBy = "conversation"
)

// Script is a parsed script: its turns and how model calls pick them.
type Script struct {
	// TurnsBy says how a call picks its turn; the zero value is [TurnsByCall].
	TurnsBy TurnsBy
	// Turns are the scripted model calls.
	Turns []Turn
}

// Model returns a model that plays the script; see [NewModel].
func (s *Script) Model() *Model {
	m := NewModel(s.Turns...)
	m.turnsBy = s.TurnsBy
	return m
}

// ParseScript reads a script in the JSON format of version 1:
//
//	{"turns_by": "conversation",
//	 "turns": [
//	  {"expect": {"tools": ["add"], "user": "Berlin", "tool_results": {"call_1": "5"},
//	              "system": "You are…", "messages": [{"role": "user", "text": "…"}],
//	              "files": [{"media_type": "image/*", "filename": "cat.png"}]},
//	   "reply": [{"reasoning": "…"}, {"text": "…"},
//	             {"tool_call": {"id": "call_1", "name": "add", "args": {"a": 2}}},
//	             {"usage": {"input": 12, "output": 7}}, {"finish": "stop"},
//	             {"error": "message"}, {"delay_ms": 50}]}]}
//
// "expect" is optional; its fields are those of [Expect] ("messages" holds
// [Message] objects: role, text, calls of name and args, results of name
// and content). Every reply element is an object with exactly one key.
// Beyond version 1 it accepts {"signature": "…"} (close the reasoning block
// with a signature), {"hang": true} (block until cancelled), the
// expectations "system" and "messages" (written by a [Recorder]) and
// "files" (the latest user message's attachments, [ExpectFile]), and the
// optional top-level "turns_by": "call" (the default, [TurnsByCall]) or
// "conversation" ([TurnsByConversation]), and the cache and reasoning
// counts of a usage ({"usage": {"input": 120, "output": 30, "cacheRead":
// 100, "cacheWrite": 0, "reasoning": 12}}). An unknown key, a malformed
// element, an unknown field or data after the script object is an error
// that names the turn and element where there is one, wrapping
// [ErrBadScript].
func ParseScript(data []byte) (*Script, error) {
	var doc scriptDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadScript, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the script object", ErrBadScript)
	}
	if doc.Turns == nil {
		return nil, fmt.Errorf(`%w: no "turns" array`, ErrBadScript)
	}
	s := &Script{Turns: make([]Turn, 0, len(doc.Turns))}
	switch doc.TurnsBy {
	case "", "call":
	case string(TurnsByConversation):
		s.TurnsBy = TurnsByConversation
	default:
		return nil, fmt.Errorf(`%w: "turns_by": %q (want "call" or "conversation")`, ErrBadScript, doc.TurnsBy)
	}
	for i, t := range doc.Turns {
		var turn Turn
		if t.Expect != nil {
			turn.Expect = *t.Expect
		}
		for j, el := range t.Reply {
			step, err := parseStep(el)
			if err != nil {
				return nil, fmt.Errorf("%w: turn %d, reply element %d: %w", ErrBadScript, i+1, j+1, err)
			}
			turn.Reply = append(turn.Reply, step)
		}
		s.Turns = append(s.Turns, turn)
	}
	return s, nil
}

// scriptDoc is a script's JSON document.
type scriptDoc struct {
	TurnsBy string `json:"turns_by,omitempty"`
	Turns   []struct {
		Expect *Expect                      `json:"expect,omitempty"`
		Reply  []map[string]json.RawMessage `json:"reply"`
	} `json:"turns"`
}

// LoadScript reads a script file; see [ParseScript].
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("simtest: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func parseStep(el map[string]json.RawMessage) (Step, error) {
	if len(el) != 1 {
		return Step{}, fmt.Errorf("want an object with exactly one key, got %d keys", len(el))
	}
	for key, raw := range el {
		switch key {
		case "text", "reasoning", "signature", "error", "finish":
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return Step{}, fmt.Errorf("%q: want a string: %w", key, err)
			}
			switch key {
			case "text":
				return Text(s), nil
			case "reasoning":
				return Reasoning(s), nil
			case "signature":
				return Signature(s), nil
			case "error":
				return Fail(s), nil
			default:
				return Finish(agentloop.FinishReason(s)), nil
			}
		case "tool_call":
			var c struct {
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			}
			if err := strictUnmarshal(raw, &c); err != nil {
				return Step{}, fmt.Errorf(`"tool_call": %w`, err)
			}
			if c.Name == "" {
				return Step{}, errors.New(`"tool_call": "name" is required`)
			}
			if c.Args == nil {
				c.Args = json.RawMessage(`{}`)
			}
			return Call(c.ID, c.Name, c.Args), nil
		case "usage":
			var u agentloop.Usage
			if err := strictUnmarshal(raw, &u); err != nil {
				return Step{}, fmt.Errorf(`"usage": %w`, err)
			}
			return UsageOf(u), nil
		case "delay_ms":
			var ms int
			if err := json.Unmarshal(raw, &ms); err != nil || ms < 0 {
				return Step{}, fmt.Errorf(`"delay_ms": want a non-negative integer`)
			}
			return Delay(time.Duration(ms) * time.Millisecond), nil
		case "hang":
			var on bool
			if err := json.Unmarshal(raw, &on); err != nil || !on {
				return Step{}, errors.New(`"hang": want true`)
			}
			return Hang(), nil
		default:
			return Step{}, fmt.Errorf("unknown key %q (want text, reasoning, signature, tool_call, usage, finish, error, delay_ms or hang)", key)
		}
	}
	return Step{}, errors.New("empty reply element")
}

func strictUnmarshal(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
