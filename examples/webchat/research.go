package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// The demo's sub-agent: a "researcher" that the chat's agent calls as a
// tool (agentloop.AgentTool). Its work streams into the page under the
// call while it runs, and its own call that needs approval (save_note) is
// approved in the page like any other.

// researchRe picks the messages the demo script hands to the researcher.
var researchRe = regexp.MustCompile(`(?i)\bresearch`)

type noteArgs struct {
	Note string `json:"note" jsonschema:"description=The finding to file"`
}

// researcherTool returns the researcher sub-agent as a tool: it runs on
// model (the demo's researcher script when model is nil), with get_weather
// (weather, the chat's own tool) and save_note, which needs the user's
// approval.
func researcherTool(model agentloop.Model, weather *agentloop.Tool, p pacing) (*agentloop.Tool, error) {
	note, err := agentloop.NewTool("save_note", "File a finding in the team's notes. The user must approve each call.", func(_ context.Context, a noteArgs) (map[string]any, error) {
		return map[string]any{"saved": true, "note": a.Note}, nil
	})
	if err != nil {
		return nil, err
	}
	note.NeedsApproval = true
	if model == nil {
		model = simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
			return researcherReply(req, p), nil
		})
	}
	researcher := &agentloop.Agent{
		Name:     "researcher",
		Model:    model,
		System:   "You are a researcher. Look things up with your tools, file what you found with save_note, and report back in two sentences.",
		Tools:    []*agentloop.Tool{weather, note},
		MaxTurns: 6,
	}
	return agentloop.AgentTool(researcher, agentloop.AgentToolOptions{
		Description: "Ask the researcher to look something up (it checks the weather and files its finding) and report back.",
	})
}

// researcherReply is the researcher's script: look up the weather in the
// city the task names, file the finding (which waits for the user's
// approval), then report.
func researcherReply(req *agentloop.Request, p pacing) []simtest.Step {
	task := ""
	for _, m := range req.Messages {
		if m.Role == agentloop.RoleUser {
			task = m.Text()
		}
	}
	results := map[string]agentloop.ToolResult{}
	for _, m := range req.Messages {
		for _, part := range m.Parts {
			if part.Type == agentloop.PartToolResult && part.ToolResult != nil {
				results[part.ToolResult.Name] = *part.ToolResult
			}
		}
	}
	city := "Paris"
	if m := cityRe.FindStringSubmatch(task); m != nil {
		city = m[1]
	}
	w, looked := results["get_weather"]
	note, filed := results["save_note"]
	switch {
	case !looked:
		return append(p.text(fmt.Sprintf("I will check the forecast for %s.", city)),
			simtest.Call("", "get_weather", map[string]string{"city": city}), simtest.Usage(30, 10))
	case !filed:
		finding := "The forecast lookup failed."
		var f forecast
		if !w.IsError && json.Unmarshal([]byte(w.Content), &f) == nil {
			finding = fmt.Sprintf("%s: %s, %d to %d °C.", f.City, f.Conditions, f.LowC, f.HighC)
		}
		return append(p.text("Found it. Filing the finding in the notes."),
			simtest.Call("", "save_note", map[string]string{"note": finding}), simtest.Usage(50, 10))
	}
	var f forecast
	report := "I could not get a forecast."
	if !w.IsError && json.Unmarshal([]byte(w.Content), &f) == nil {
		report = fmt.Sprintf("%s will be %s, %d to %d °C.", f.City, f.Conditions, f.LowC, f.HighC)
	}
	if note.IsError {
		report += " The note was not filed."
	} else {
		report += " The finding is in the notes."
	}
	return append(p.text(report), simtest.Usage(60, 20))
}
