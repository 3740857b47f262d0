package ctxwindow_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"github.com/agentloop/agentloop/simtest"
)

// dump returns 100,000 bytes of numbered lines.
func dump() string {
	var b strings.Builder
	for i := 0; b.Len() < 100_000; i++ {
		fmt.Fprintf(&b, "line %05d of the dump\n", i)
	}
	return b.String()[:100_000]
}

var readCall = regexp.MustCompile(`call read_tool_result with \{"callId":"([^"]+)","offset":(\d+)\}`)
var nextPage = regexp.MustCompile(`call read_tool_result with offset (\d+) for more\]$`)

// A huge result reaches the model as a preview on every call, the newest
// too; the model reads the rest with the read tool, page by page; the
// stored history keeps the whole result.
func TestLargeResults_ThePreviewIsSentAndTheReadToolReadsTheRest(t *testing.T) {
	full := dump()
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 200_000, LargeResults: &ctxwindow.LargeResults{Limit: 10_000, Preview: 1200}})
	if err != nil {
		t.Fatal(err)
	}
	big, _ := agentloop.NewTool("dump", "Dump everything.", func(context.Context, struct{}) (string, error) { return full, nil })

	var pages []string
	var id string
	turn := 0
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		turn++
		last := req.Messages[len(req.Messages)-1]
		if turn == 1 {
			return []simtest.Step{simtest.Call("", "dump", nil)}, nil
		}
		content := last.Parts[0].ToolResult.Content
		if turn == 2 {
			if len(content) > 1500 || !strings.HasPrefix(content, full[:800]) || !strings.HasSuffix(content, full[len(full)-400:]) {
				return nil, fmt.Errorf("turn 2: the newest result was not sent as a preview: %d bytes", len(content))
			}
			mm := readCall.FindStringSubmatch(content)
			if mm == nil {
				return nil, fmt.Errorf("turn 2: the marker does not say how to read on: %q", content[800:len(content)-400])
			}
			id = mm[1]
			off, _ := strconv.Atoi(mm[2])
			return []simtest.Step{simtest.Call("", ctxwindow.ReadResultToolName, map[string]any{"callId": id, "offset": off})}, nil
		}
		pages = append(pages, content)
		if mm := nextPage.FindStringSubmatch(content); mm != nil && len(pages) < 3 {
			off, _ := strconv.Atoi(mm[1])
			return []simtest.Step{simtest.Call("", ctxwindow.ReadResultToolName, map[string]any{"callId": id, "offset": off})}, nil
		}
		return []simtest.Step{simtest.Text("read enough")}, nil
	})
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{big, m.ReadResultTool()}, Hooks: m.Hooks()}
	last, err := agentloop.Drain(agent.Stream(t.Context(), agentloop.History{user("dump it")}, nil))
	if err != nil {
		t.Fatal(err)
	}
	final := last.(agentloop.Final)
	if got := final.History[2].Parts[0].ToolResult.Content; got != full {
		t.Fatalf("the stored result has %d bytes, want the whole %d", len(got), len(full))
	}
	if len(pages) != 3 {
		t.Fatalf("read %d pages, want 3", len(pages))
	}
	// The pages continue each other from where the preview's head ends.
	at := 800
	for i, p := range pages {
		body := p
		if j := strings.LastIndex(p, "\n[bytes "); j >= 0 {
			body = p[:j]
		}
		if !strings.HasPrefix(full[at:], body) || len(p) > 10_000 {
			t.Fatalf("page %d (%d bytes) is not full[%d:]", i, len(p), at)
		}
		at += len(body)
	}
}

// Without the read tool offered, the marker does not name it.
func TestLargeResults_TheMarkerNamesTheReadToolOnlyWhenOffered(t *testing.T) {
	h := agentloop.History{user("go"), assistant(call("c1")), result("c1", dump())}
	for _, tools := range [][]agentloop.ToolDef{nil, testTools} {
		var rep ctxwindow.Report
		m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 200_000, LargeResults: &ctxwindow.LargeResults{},
			OnReport: func(_ context.Context, r ctxwindow.Report) { rep = r }})
		if err != nil {
			t.Fatal(err)
		}
		req := &agentloop.Request{Messages: h.Clone(), Tools: tools}
		if err := m.Hooks().BeforeModelCall(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if rep.SetAside != 1 || rep.Applied != nil {
			t.Fatalf("report %+v; want one message set aside and no strategy applied", rep)
		}
		c := req.Messages[2].Parts[0].ToolResult.Content
		named := strings.Contains(c, "read_tool_result")
		if named != (len(tools) > 1) || !strings.Contains(c, "[… 97952 bytes left out here to save context: bytes 1365 to 99317 of 100000") {
			t.Fatalf("with %d tools the marker is %q", len(tools), c[1365:len(c)-683])
		}
	}
}

func TestReadResultTool_RefusesUnknownCallsOffsetsAndRunsWithoutTheManager(t *testing.T) {
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 200_000, LargeResults: &ctxwindow.LargeResults{}})
	if err != nil {
		t.Fatal(err)
	}
	tool := m.ReadResultTool()
	if tool.Name != ctxwindow.ReadResultToolName || tool != m.ReadResultTool() {
		t.Fatal("ReadResultTool does not return the same read_tool_result tool")
	}
	if _, err := tool.Func(t.Context(), []byte(`{"callId":"c1"}`)); err == nil || !strings.Contains(err.Error(), "works only in runs that use its ctxwindow.Manager's hooks") {
		t.Fatalf("outside a run: %v", err)
	}

	// Inside a run: the model asks for an unknown id, then an offset past
	// the end; both are error results it can act on.
	turn := 0
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		turn++
		switch turn {
		case 1:
			return []simtest.Step{simtest.Call("big", "dump", nil)}, nil
		case 2:
			return []simtest.Step{simtest.Call("", ctxwindow.ReadResultToolName, map[string]any{"callId": "nope"})}, nil
		case 3:
			return []simtest.Step{simtest.Call("", ctxwindow.ReadResultToolName, map[string]any{"callId": "big", "offset": 500_000})}, nil
		}
		return []simtest.Step{simtest.Text("ok")}, nil
	})
	big, _ := agentloop.NewTool("dump", "Dump.", func(context.Context, struct{}) (string, error) { return dump(), nil })
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{big, tool}, Hooks: m.Hooks()}
	last, err := agentloop.Drain(agent.Stream(t.Context(), agentloop.History{user("go")}, nil))
	if err != nil {
		t.Fatal(err)
	}
	h := last.(agentloop.Final).History
	for i, want := range map[int]string{4: `no shortened tool result has the call id "nope"`, 6: "offset 500000 is outside the result, which has 100000 bytes"} {
		r := h[i].Parts[0].ToolResult
		if !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("message %d: result %+v; want an error containing %q", i, r, want)
		}
	}
}

func TestBytes_CountsLengthsAndOverheads(t *testing.T) {
	m := agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
		text(filler(400)),
		{Type: agentloop.PartReasoning, Text: filler(100), Signature: filler(60), Redacted: filler(40)},
		{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "ab", Args: []byte(filler(96))}},
		{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Name: "ab", Content: filler(96)}},
		{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png"}},
		{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c1"}},
	}}
	// 800 bytes: 200 tokens; 3 overheads of 4 (message, call, result); one file.
	if got, want := (ctxwindow.Bytes{}).Message(m), 200+12+ctxwindow.DefaultFileTokens; got != want {
		t.Errorf("zero Bytes: %d, want %d", got, want)
	}
	if got, want := (ctxwindow.Bytes{BytesPerToken: 2, MessageOverhead: -1, FileTokens: 10}).Message(m), 400+10; got != want {
		t.Errorf("custom Bytes: %d, want %d", got, want)
	}
	if got := (ctxwindow.Bytes{}).Text("12345"); got != 2 {
		t.Errorf("Text rounds up: %d, want 2", got)
	}
}
