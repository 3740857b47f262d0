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

// ParseScript reads a script in the JSON format of version 1:
//
//	{"turns": [
//	  {"expect": {"tools": ["add"], "user": "Berlin", "tool_results": {"call_1": "5"}},
//	   "reply": [{"reasoning": "…"}, {"text": "…"},
//	             {"tool_call": {"id": "call_1", "name": "add", "args": {"a": 2}}},
//	             {"usage": {"input": 12, "output": 7}}, {"finish": "stop"},
//	             {"error": "message"}, {"delay_ms": 50}]}]}
//
// "expect" is optional. Every reply element is an object with exactly one
// key. Beyond version 1 it accepts {"signature": "…"} (close the reasoning
// block with a signature), {"hang": true} (block until cancelled), and the
// cache and reasoning counts of a usage ({"usage": {"input": 120,
// "output": 30, "cacheRead": 100, "cacheWrite": 0, "reasoning": 12}}). An
// unknown key, a malformed element, an unknown field or data after the
// script object is an error that names the turn and element where there is
// one, wrapping [ErrBadScript].
func ParseScript(data []byte) ([]Turn, error) {
	var doc struct {
		Turns []struct {
			Expect *struct {
				Tools       []string          `json:"tools"`
				User        string            `json:"user"`
				ToolResults map[string]string `json:"tool_results"`
			} `json:"expect"`
			Reply []map[string]json.RawMessage `json:"reply"`
		} `json:"turns"`
	}
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
	turns := make([]Turn, 0, len(doc.Turns))
	for i, t := range doc.Turns {
		var turn Turn
		if t.Expect != nil {
			turn.Expect = Expect{Tools: t.Expect.Tools, User: t.Expect.User, ToolResults: t.Expect.ToolResults}
		}
		for j, el := range t.Reply {
			step, err := parseStep(el)
			if err != nil {
				return nil, fmt.Errorf("%w: turn %d, reply element %d: %w", ErrBadScript, i+1, j+1, err)
			}
			turn.Reply = append(turn.Reply, step)
		}
		turns = append(turns, turn)
	}
	return turns, nil
}

// LoadScript reads a script file; see [ParseScript].
func LoadScript(path string) ([]Turn, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("simtest: %w", err)
	}
	turns, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return turns, nil
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
