package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/simtest"
)

// demoModel is the built-in demo script: a scripted model whose every reply
// is computed from the request, so it works across the continuation POSTs
// of a chat without any server state. A user message that asks about
// Markdown ("markdown", "format", "code block") gets a formatted answer
// showing what the page renders (headings, a list, a table, a link, a
// highlighted Go block), with no tools. A message with attachments gets
// an answer that names each file, its media type and size (the demo
// cannot look inside; a vision model can), with no tools. Any other
// message goes through
// these steps, skipping a step whose tool is not offered:
//
//  1. calls get_weather for the city named in the message ("… in Paris";
//     Paris by default), and add when the message holds "<a> + <b>";
//  2. calls the front end's create_record tool (the page provides it) with
//     {"name": "Ada Lovelace", "email": "ada@example.com"};
//  3. calls delete_record {"id": 42}, which needs the user's approval;
//  4. answers with a Markdown summary of the results.
//
// A message that asks for research ("research the weather in Oslo") goes
// to the researcher sub-agent instead (research.go), whose report the
// answer sums up.
//
// Asked for a chat's title (aisdk.ModelTitle's request), it answers at
// once with one made from the first message (demoTitle).
//
// p paces the text and reasoning (see [pacing]); the zero pacing streams
// each reply at once.
func demoModel(p pacing) *simtest.Model {
	return simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		return demoReply(req, p)
	})
}

var (
	cityRe     = regexp.MustCompile(`\b(?:in|for|at)\s+([A-Z][\p{L}-]+(?:\s+[A-Z][\p{L}-]+)?)`)
	sumRe      = regexp.MustCompile(`(-?\d+(?:\.\d+)?)\s*\+\s*(-?\d+(?:\.\d+)?)`)
	markdownRe = regexp.MustCompile(`(?i)\b(markdown|format(ting|ted)?|code blocks?)\b`)
)

func demoReply(req *agentloop.Request, p pacing) ([]simtest.Step, error) {
	if req.System == aisdk.TitlePrompt {
		return []simtest.Step{simtest.Text(demoTitle(req))}, nil
	}
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

	var files []*agentloop.File
	if last >= 0 && last == len(req.Messages)-1 {
		for _, p := range req.Messages[last].Parts {
			if p.Type == agentloop.PartFile && p.File != nil {
				files = append(files, p.File)
			}
		}
	}

	switch {
	case len(files) > 0:
		return append(p.text(filesAnswer(files)), simtest.Usage(50, 30)), nil
	case markdownRe.MatchString(userText):
		steps := p.reasoning(markdownReasoning)
		steps = append(steps, p.text(markdownAnswer)...)
		return append(steps, simtest.Usage(30, 120)), nil
	case researchRe.MatchString(userText) && offered["researcher"]:
		if !called["researcher"] {
			city := "Paris"
			if m := cityRe.FindStringSubmatch(userText); m != nil {
				city = m[1]
			}
			return append(p.text("I will ask the researcher."),
				simtest.Call("", "researcher", map[string]string{"task": "Find the weather in " + city + " and file it in the notes."}),
				simtest.Usage(40, 15),
			), nil
		}
		return append(p.text(summary(results)), simtest.Usage(100, 40)), nil
	case offered["get_weather"] && !called["get_weather"]:
		city := "Paris"
		if m := cityRe.FindStringSubmatch(userText); m != nil {
			city = m[1]
		}
		steps := p.reasoning("This is the demo script. First a **server tool**: the weather.")
		steps = append(steps, p.text(fmt.Sprintf("Let me look up the weather in %s first.", city))...)
		steps = append(steps, simtest.Call("", "get_weather", map[string]string{"city": city}))
		if m := sumRe.FindStringSubmatch(userText); m != nil && offered["add"] {
			steps = append(steps, simtest.Call("", "add", json.RawMessage(fmt.Sprintf(`{"a":%s,"b":%s}`, m[1], m[2]))))
		}
		return append(steps, simtest.Usage(40, 20)), nil
	case offered["create_record"] && !called["create_record"]:
		return append(p.text("Now please fill in the new record in the form."),
			simtest.Call("", "create_record", map[string]string{"name": "Ada Lovelace", "email": "ada@example.com"}),
			simtest.Usage(60, 15),
		), nil
	case offered["delete_record"] && !called["delete_record"]:
		return append(p.text("I would also delete the old record 42. Please approve or deny that."),
			simtest.Call("", "delete_record", map[string]int{"id": 42}),
			simtest.Usage(80, 15),
		), nil
	}
	return append(p.text(summary(results)), simtest.Usage(100, 40)), nil
}

// filesAnswer is the demo's answer to a message with attachments: what
// arrived, as the model sees it.
func filesAnswer(files []*agentloop.File) string {
	var b strings.Builder
	b.WriteString("I received your attachments:\n\n")
	for _, f := range files {
		name := f.Filename
		if name == "" {
			name = "(no name)"
		}
		size := "by URL"
		if data, ok, err := f.Inline(); err == nil && ok {
			size = fmt.Sprintf("%d bytes", len(data))
		}
		fmt.Fprintf(&b, "- **%s**: %s, %s\n", name, f.MediaType, size)
	}
	b.WriteString("\nThis demo script cannot look inside files; with `-model` set to a vision model (an Ollama llava or qwen2.5vl, or a hosted API) the model sees the image itself.")
	return b.String()
}

// demoTitle is the demo's title of a chat, from the first user message
// that aisdk.ModelTitle's request quotes: "Formatted answers" for a
// question about Markdown, else "Weather in <city>" (the city the demo
// looks up), with " and a sum" when the message holds one.
func demoTitle(req *agentloop.Request) string {
	text := ""
	if len(req.Messages) > 0 {
		text, _, _ = strings.Cut(req.Messages[0].Text(), "\n\nAssistant:")
	}
	if markdownRe.MatchString(text) {
		return "Formatted answers"
	}
	city := "Paris"
	if m := cityRe.FindStringSubmatch(text); m != nil {
		city = m[1]
	}
	if sumRe.MatchString(text) {
		return "Weather in " + city + " and a sum"
	}
	return "Weather in " + city
}

// summary is the demo's final answer: a Markdown list of what each tool
// returned.
func summary(results map[string]agentloop.ToolResult) string {
	var lines []string
	if r, ok := results["get_weather"]; ok {
		var f forecast
		if !r.IsError && json.Unmarshal([]byte(r.Content), &f) == nil {
			lines = append(lines, fmt.Sprintf("**Weather in %s:** %s, %d to %d °C.", f.City, f.Conditions, f.LowC, f.HighC))
		} else {
			lines = append(lines, "**Weather:** the lookup failed: "+r.Content)
		}
	}
	if r, ok := results["researcher"]; ok {
		if r.IsError {
			lines = append(lines, "**Researcher:** it did not finish: "+r.Content)
		} else {
			lines = append(lines, "**Researcher:** "+r.Content)
		}
	}
	if r, ok := results["add"]; ok {
		lines = append(lines, "**Sum:** `"+r.Content+"`.")
	}
	if r, ok := results["create_record"]; ok {
		if r.IsError {
			lines = append(lines, "**Form:** it did not complete: "+r.Content)
		} else {
			lines = append(lines, "**Form:** it returned `"+r.Content+"`.")
		}
	}
	if r, ok := results["delete_record"]; ok {
		switch {
		case strings.HasPrefix(r.Content, "The user denied"):
			lines = append(lines, "**Approval:** You denied deleting record 42, so I left it alone.")
		case r.IsError:
			lines = append(lines, "**Approval:** Deleting record 42 failed: "+r.Content)
		default:
			lines = append(lines, "**Approval:** Record 42 is deleted.")
		}
	}
	if len(lines) == 0 {
		return "Hello! This is the agentloop demo script. Ask me about the **weather** somewhere, or ask for some **Markdown**."
	}
	return "Here is what happened:\n\n- " + strings.Join(lines, "\n- ") + "\n\nThat is the whole demo."
}

// markdownReasoning and markdownAnswer are the demo's reply to a question
// about formatting: everything the page's Markdown renders.
const (
	markdownReasoning = "The user asks about formatting. I will show **bold** text, a list, a table, a link and a `Go` code block."
	markdownAnswer    = "## What answers can look like\n\n" +
		"Answers are **GitHub-flavoured Markdown**, so a model can use *emphasis*, `inline code`, ~~strike-through~~ and lists:\n\n" +
		"1. text streams in word by word;\n" +
		"2. tools show their state as they run;\n" +
		"3. you can stop a reply at any time.\n\n" +
		"| tool | runs in |\n| --- | --- |\n| `get_weather` | the server |\n| `create_record` | your browser |\n| `delete_record` | the server, after you approve |\n\n" +
		"> A quote stands apart from the answer around it.\n\n" +
		"- [x] a task that is done\n- [ ] a task still to do\n\n" +
		"A wide table scrolls sideways inside its own box[^1]:\n\n" +
		"| name | city | conditions | low °C | high °C | wind | humidity | updated |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n" +
		"| get_weather | Paris | partly cloudy | 11 | 18 | 12 km/h north-west | 64 % | a minute ago |\n\n" +
		"[^1]: Footnote links stay on this page.\n\n" +
		"Math: $e^{i\\pi} + 1 = 0$ inline, and on a line of its own:\n\n" +
		"$$\n\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\n$$\n\n" +
		"Code blocks are highlighted and scroll inside themselves:\n\n" +
		"```go\n" +
		"agent := &agentloop.Agent{Model: model, Tools: tools}\n" +
		"for item, err := range agent.Stream(ctx, history, nil) {\n" +
		"\tif err != nil {\n" +
		"\t\treturn fmt.Errorf(\"run: %w\", err) // a long comment that makes this line wider than a phone screen\n" +
		"\t}\n" +
		"\tif t, ok := item.(agentloop.TextDelta); ok {\n" +
		"\t\tfmt.Print(t.Text)\n" +
		"\t}\n" +
		"}\n" +
		"```\n\n" +
		"Links open in a new tab: [the AI SDK UI docs](https://ai-sdk.dev/docs/ai-sdk-ui)."
)
