package ctxwindow

import (
	"slices"
	"testing"

	"github.com/agentloop/agentloop"
)

func TestGroup_KeepsACallWithAnswersThatComeLater(t *testing.T) {
	call := func(id string) agentloop.Part {
		return agentloop.Part{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: id, Name: "t"}}
	}
	res := func(id string) agentloop.Message {
		return agentloop.Message{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: id}}}}
	}
	asst := func(parts ...agentloop.Part) agentloop.Message {
		return agentloop.Message{Role: agentloop.RoleAssistant, Parts: parts}
	}
	h := agentloop.History{
		agentloop.UserMessage("first"),        // 0
		asst(call("a"), call("b")),            // 1: b is answered late
		res("a"),                              // 2
		asst(agentloop.TextPart("meanwhile")), // 3
		agentloop.UserMessage("hm"),           // 4
		res("b"),                              // 5
		asst(call("c")),                       // 6
		res("c"),                              // 7
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "orphan"}}}}, // 8
		agentloop.UserMessage("last"), // 9
	}
	v := newView(h, Bytes{}, 0, 1000)
	var got [][2]int
	for _, u := range v.units {
		got = append(got, [2]int{u.start, u.end})
	}
	want := [][2]int{{0, 1}, {1, 6}, {6, 9}, {9, 10}}
	if !slices.Equal(got, want) {
		t.Fatalf("units %v, want %v", got, want)
	}
	if v.headEnd != 1 || !v.units[0].pinned || v.units[1].pinned || v.units[2].pinned || !v.units[3].pinned {
		t.Fatalf("headEnd %d, units %+v", v.headEnd, v.units)
	}
}
