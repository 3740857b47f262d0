package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// streamText plays one model call of m and returns its text deltas.
func streamText(t *testing.T, m agentloop.Model, user string) []string {
	t.Helper()
	req := &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage(user)}}
	var deltas []string
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := c.(agentloop.TextDelta); ok && d.Text != "" { // the loop drops empty deltas too
			deltas = append(deltas, d.Text)
		}
	}
	return deltas
}

func TestDemo_AskedForMarkdownAnswersWithFormattingAndNoTools(t *testing.T) {
	text := strings.Join(streamText(t, demoModel(pacing{}), "Show me what Markdown looks like"), "")
	for _, want := range []string{"**GitHub-flavoured Markdown**", "| `get_weather` | the server |", "```go\n", "](https://"} {
		if !strings.Contains(text, want) {
			t.Errorf("answer lacks %q:\n%s", want, text)
		}
	}
}

func TestDemo_AMessageWithFilesGetsAnAnswerNamingThem(t *testing.T) {
	req := &agentloop.Request{Messages: agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{
		agentloop.TextPart("What is this?"),
		{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Filename: "dot.png", Data: []byte("12345")}},
	}}}}
	var text strings.Builder
	for c, err := range demoModel(pacing{}).Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := c.(agentloop.TextDelta); ok {
			text.WriteString(d.Text)
		} else if _, ok := c.(agentloop.ToolCallDelta); ok {
			t.Errorf("the answer to files calls a tool: %+v", c)
		}
	}
	if want := "- **dot.png**: image/png, 5 bytes"; !strings.Contains(text.String(), want) {
		t.Errorf("answer lacks %q:\n%s", want, text.String())
	}
}

func TestDemo_FinalAnswerIsAMarkdownList(t *testing.T) {
	got := summary(map[string]agentloop.ToolResult{
		"get_weather":   {Content: `{"city":"Paris","conditions":"sunny","high_c":20,"low_c":12}`},
		"delete_record": {Content: `{"deleted":true,"id":42}`},
	})
	want := "Here is what happened:\n\n- **Weather in Paris:** sunny, 12 to 20 °C.\n- **Approval:** Record 42 is deleted.\n\nThat is the whole demo."
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
}

func TestPacing_StreamsTheSameTextAWordAtATime(t *testing.T) {
	const answer = "one two  three"
	for _, p := range []pacing{{}, newPacing(time.Nanosecond)} {
		m := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) { return p.text(answer), nil })
		deltas := streamText(t, m, "hi")
		if got := strings.Join(deltas, ""); got != answer {
			t.Errorf("pacing %+v: text %q, want %q", p, got, answer)
		}
		if len(deltas) != 4 { // "one ", "two ", " ", "three"
			t.Errorf("pacing %+v: deltas %q, want one a word", p, deltas)
		}
	}
}

func TestPacing_OffForScriptsRealModelsAndZero(t *testing.T) {
	for _, cfg := range []config{{pace: 0}, {pace: time.Second, script: "x.json"}, {pace: time.Second, model: "m"}} {
		if p := demoPacing(cfg); p != (pacing{}) {
			t.Errorf("%+v: pacing %+v, want none", cfg, p)
		}
	}
	if p := demoPacing(config{pace: 10 * time.Millisecond}); p.word != 10*time.Millisecond || p.tool != slowToolFactor*10*time.Millisecond {
		t.Errorf("demo pacing %+v", p)
	}
	if _, err := parseFlags([]string{"-pace", "-1s"}, io.Discard); err == nil || !strings.Contains(err.Error(), "-pace") {
		t.Errorf("a negative -pace: %v", err)
	}
	if cfg, err := parseFlags(nil, io.Discard); err != nil || cfg.pace != defaultPace {
		t.Errorf("default pace %v, %v", cfg.pace, err)
	}
}

func TestPacing_ASlowToolStopsWhenItsCallIsCancelled(t *testing.T) {
	tools, err := backendTools()
	if err != nil {
		t.Fatal(err)
	}
	newPacing(time.Hour).slowTool(tools, "get_weather")
	var weather *agentloop.Tool
	for _, tool := range tools {
		if tool.Name == "get_weather" {
			weather = tool
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// An hour-long wait returns at once: the call's context is done.
	_, err = weather.Func(ctx, json.RawMessage(`{"city":"Paris"}`))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "get_weather stopped") {
		t.Errorf("cancelled slow call: %v", err)
	}
}

func TestPacing_OffLeavesToolsAlone(t *testing.T) {
	tools, err := backendTools()
	if err != nil {
		t.Fatal(err)
	}
	pacing{}.slowTool(tools, "get_weather")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range tools {
		if tool.Name == "get_weather" {
			// Without pacing the tool runs even on a done context (it does not look at it).
			if out, err := tool.Func(ctx, json.RawMessage(`{"city":"Paris"}`)); err != nil || !strings.Contains(out, "Paris") {
				t.Errorf("unpaced get_weather: %q, %v", out, err)
			}
		}
	}
}
