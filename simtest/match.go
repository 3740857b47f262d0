package simtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/agentloop/agentloop"
)

// matchText reports whether got matches want, in which every [Any] matches
// any run of characters.
func matchText(want, got string) bool {
	parts := strings.Split(want, Any)
	if len(parts) == 1 {
		return want == got
	}
	if !strings.HasPrefix(got, parts[0]) {
		return false
	}
	got = got[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(got, p)
		if i < 0 {
			return false
		}
		got = got[i+len(p):]
	}
	return strings.HasSuffix(got, last)
}

// matchArgs reports whether the argument texts are equal as JSON values, a
// wanted string [Any] matching any value. Texts that are not JSON compare
// as texts.
func matchArgs(want, got json.RawMessage) bool {
	if want == nil {
		return true
	}
	var w, g any
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
		return bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(got))
	}
	return matchValue(w, g)
}

func matchValue(want, got any) bool {
	switch w := want.(type) {
	case string:
		if w == Any {
			return true
		}
		g, ok := got.(string)
		return ok && matchText(w, g)
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, v := range w {
			gv, ok := g[k]
			if !ok || !matchValue(v, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !matchValue(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

// messageOf returns m as an expectation holds it.
func messageOf(m agentloop.Message) Message {
	out := Message{Role: m.Role, Text: m.Text()}
	for _, p := range m.Parts {
		switch {
		case p.Type == agentloop.PartToolCall && p.ToolCall != nil:
			out.Calls = append(out.Calls, MessageCall{Name: p.ToolCall.Name, Args: p.ToolCall.Args})
		case p.Type == agentloop.PartToolResult && p.ToolResult != nil:
			out.Results = append(out.Results, MessageResult{Name: p.ToolResult.Name, Content: p.ToolResult.Content, IsError: p.ToolResult.IsError})
		}
	}
	return out
}

// checkMessages compares the request's messages with the wanted ones and
// names the first difference.
func checkMessages(turn int, want []Message, h agentloop.History) error {
	for i := range min(len(want), len(h)) {
		w, g := want[i], messageOf(h[i])
		fail := func(what, wantS, gotS string) error {
			return &ExpectationError{Turn: turn, What: fmt.Sprintf("message %d (%s) %s", i+1, g.Role, what), Want: wantS, Got: gotS}
		}
		if w.Role != g.Role {
			return fail("role", string(w.Role), string(g.Role))
		}
		if !matchText(w.Text, g.Text) {
			return fail("text", fmt.Sprintf("%q", w.Text), fmt.Sprintf("%q", g.Text))
		}
		for j := range max(len(w.Calls), len(g.Calls)) {
			switch {
			case j >= len(w.Calls):
				return fail(fmt.Sprintf("call %d", j+1), "no call", fmt.Sprintf("%s(%s)", g.Calls[j].Name, g.Calls[j].Args))
			case j >= len(g.Calls):
				return fail(fmt.Sprintf("call %d", j+1), fmt.Sprintf("%s(%s)", w.Calls[j].Name, w.Calls[j].Args), "no call")
			case w.Calls[j].Name != g.Calls[j].Name || !matchArgs(w.Calls[j].Args, g.Calls[j].Args):
				return fail(fmt.Sprintf("call %d", j+1), fmt.Sprintf("%s(%s)", w.Calls[j].Name, w.Calls[j].Args), fmt.Sprintf("%s(%s)", g.Calls[j].Name, g.Calls[j].Args))
			}
		}
		for j := range max(len(w.Results), len(g.Results)) {
			switch {
			case j >= len(w.Results):
				return fail(fmt.Sprintf("result %d", j+1), "no result", fmt.Sprintf("%s: %q", g.Results[j].Name, g.Results[j].Content))
			case j >= len(g.Results):
				return fail(fmt.Sprintf("result %d", j+1), fmt.Sprintf("%s: %q", w.Results[j].Name, w.Results[j].Content), "no result")
			case w.Results[j].Name != g.Results[j].Name || w.Results[j].IsError != g.Results[j].IsError || !matchText(w.Results[j].Content, g.Results[j].Content):
				return fail(fmt.Sprintf("result %d", j+1), fmt.Sprintf("%s: %q", w.Results[j].Name, w.Results[j].Content), fmt.Sprintf("%s: %q", g.Results[j].Name, g.Results[j].Content))
			}
		}
	}
	if len(want) != len(h) {
		return &ExpectationError{Turn: turn, What: "message count", Want: fmt.Sprint(len(want)), Got: fmt.Sprint(len(h))}
	}
	return nil
}
