package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// demoModel is the built-in demo script: a scripted model whose every reply
// is computed from the request, so it works across the continuation POSTs
// of a chat without any server state. After each user message it goes
// through these steps, skipping a step whose tool is not offered:
//
//  1. calls get_weather for the city named in the message ("… in Paris";
//     Paris by default), and add when the message holds "<a> + <b>";
//  2. calls the front end's create_record tool (the page provides it) with
//     {"name": "Ada Lovelace", "email": "ada@example.com"};
//  3. calls delete_record {"id": 42}, which needs the user's approval;
//  4. answers with a summary of the results.
func demoModel() *simtest.Model {
	return simtest.NewFuncModel(demoReply)
}

var (
	cityRe = regexp.MustCompile(`\b(?:in|for|at)\s+([A-Z][\p{L}-]+(?:\s+[A-Z][\p{L}-]+)?)`)
	sumRe  = regexp.MustCompile(`(-?\d+(?:\.\d+)?)\s*\+\s*(-?\d+(?:\.\d+)?)`)
)

func demoReply(req *agentloop.Request) ([]simtest.Step, error) {
	last := -1
	for i, m := range req.Messages {
		if m.Role == agentloop.RoleUser {
			last = i
		}
	}
	userText := ""
	if last >= 0 {
		userText = req.Messages[last].Text()
	}
	called := map[string]bool{}
	results := map[string]agentloop.ToolResult{}
	for _, m := range req.Messages[last+1:] {
		for _, c := range m.ToolCalls() {
			called[c.Name] = true
		}
		for _, p := range m.Parts {
			if p.Type == agentloop.PartToolResult && p.ToolResult != nil {
				results[p.ToolResult.Name] = *p.ToolResult
			}
		}
	}
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Name] = true
	}

	switch {
	case offered["get_weather"] && !called["get_weather"]:
		city := "Paris"
		if m := cityRe.FindStringSubmatch(userText); m != nil {
			city = m[1]
		}
		steps := []simtest.Step{
			simtest.Reasoning("This is the demo script. First a server tool: the weather."),
			simtest.Text(fmt.Sprintf("Let me look up the weather in %s first.", city)),
			simtest.Call("", "get_weather", map[string]string{"city": city}),
		}
		if m := sumRe.FindStringSubmatch(userText); m != nil && offered["add"] {
			steps = append(steps, simtest.Call("", "add", json.RawMessage(fmt.Sprintf(`{"a":%s,"b":%s}`, m[1], m[2]))))
		}
		return append(steps, simtest.Usage(40, 20)), nil
	case offered["create_record"] && !called["create_record"]:
		return []simtest.Step{
			simtest.Text("Now please fill in the new record in the form."),
			simtest.Call("", "create_record", map[string]string{"name": "Ada Lovelace", "email": "ada@example.com"}),
			simtest.Usage(60, 15),
		}, nil
	case offered["delete_record"] && !called["delete_record"]:
		return []simtest.Step{
			simtest.Text("I would also delete the old record 42. Please approve or deny that."),
			simtest.Call("", "delete_record", map[string]int{"id": 42}),
			simtest.Usage(80, 15),
		}, nil
	}
	return []simtest.Step{simtest.Text(summary(results)), simtest.Usage(100, 40)}, nil
}

// summary is the demo's final answer.
func summary(results map[string]agentloop.ToolResult) string {
	var lines []string
	if r, ok := results["get_weather"]; ok {
		var f forecast
		if !r.IsError && json.Unmarshal([]byte(r.Content), &f) == nil {
			lines = append(lines, fmt.Sprintf("The weather in %s: %s, %d to %d °C.", f.City, f.Conditions, f.LowC, f.HighC))
		} else {
			lines = append(lines, "The weather lookup failed: "+r.Content)
		}
	}
	if r, ok := results["add"]; ok {
		lines = append(lines, "The sum: "+r.Content+".")
	}
	if r, ok := results["create_record"]; ok {
		if r.IsError {
			lines = append(lines, "The record form did not complete: "+r.Content)
		} else {
			lines = append(lines, "The form returned "+r.Content+".")
		}
	}
	if r, ok := results["delete_record"]; ok {
		switch {
		case strings.HasPrefix(r.Content, "The user denied"):
			lines = append(lines, "You denied deleting record 42, so I left it alone.")
		case r.IsError:
			lines = append(lines, "Deleting record 42 failed: "+r.Content)
		default:
			lines = append(lines, "Record 42 is deleted.")
		}
	}
	if len(lines) == 0 {
		return "Hello! This is the agentloop demo script. Ask me about the weather somewhere."
	}
	return strings.Join(append(lines, "That is the whole demo."), " ")
}
