package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/examples/internal/mcpflags/mcpflagstest"
	"github.com/agentloop/agentloop/internal/syncbuf"
)

// TestMain serves the MCP server of mcpflagstest when a test started this
// binary as it, and checks that the tests leak no goroutines.
func TestMain(m *testing.M) {
	mcpflagstest.ServeIfChild()
	goleak.VerifyTestMain(m)
}

// browser is a minimal useChat for these tests: it posts the messages and
// applies the streamed chunks to the assistant message, keeping the
// signatures the server puts on its parts where the real client keeps them
// (the handler refuses parts that come back without them).
type browser struct {
	t     *testing.T
	url   string
	msgs  []aisdk.UIMessage
	tools map[string]any
}

func (b *browser) post() (finish string, types []string) {
	b.t.Helper()
	body := map[string]any{"id": "chat-1", "messages": b.msgs, "trigger": "submit-message", "tools": b.tools}
	last := b.msgs[len(b.msgs)-1]
	if last.Role == "assistant" {
		body["messageId"] = last.ID
	}
	data, _ := json.Marshal(body)
	resp, err := http.Post(b.url+"/api/chat", "application/json", bytes.NewReader(data))
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		b.t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	if last.Role != "assistant" {
		b.msgs = append(b.msgs, aisdk.UIMessage{Role: "assistant", Parts: []aisdk.UIPart{}})
	}
	m := &b.msgs[len(b.msgs)-1]
	text := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		c, err := aisdk.ParseChunk([]byte(line))
		if err != nil {
			b.t.Fatal(err)
		}
		types = append(types, aisdk.ChunkType(c))
		find := func(id string) *aisdk.UIPart {
			for i := range m.Parts {
				if m.Parts[i].ToolCallID == id {
					return &m.Parts[i]
				}
			}
			b.t.Fatalf("chunk %s for unknown call %q", line, id)
			return nil
		}
		switch v := c.(type) {
		case aisdk.StartChunk:
			m.ID = v.MessageID
		case aisdk.StartStepChunk:
			m.Parts = append(m.Parts, aisdk.UIPart{Type: "step-start"})
		case aisdk.TextStartChunk:
			text[v.ID] = len(m.Parts)
			m.Parts = append(m.Parts, aisdk.UIPart{Type: "text"})
		case aisdk.TextDeltaChunk:
			m.Parts[text[v.ID]].Text += v.Delta
		case aisdk.TextEndChunk:
			p := &m.Parts[text[v.ID]]
			p.State, p.ProviderMetadata = aisdk.StateDone, metadata(v.ProviderMetadata)
		case aisdk.ToolInputStartChunk:
			m.Parts = append(m.Parts, aisdk.UIPart{Type: "tool-" + v.ToolName, ToolCallID: v.ToolCallID, State: aisdk.StateInputStreaming})
		case aisdk.ToolInputAvailableChunk:
			p := find(v.ToolCallID)
			p.State, p.Input, p.CallProviderMetadata = aisdk.StateInputAvailable, v.Input, metadata(v.ProviderMetadata)
		case aisdk.ToolApprovalRequestChunk:
			p := find(v.ToolCallID)
			p.State, p.Approval = aisdk.StateApprovalRequested, &aisdk.UIApproval{ID: v.ApprovalID, Signature: v.Signature}
		case aisdk.ToolOutputAvailableChunk:
			p := find(v.ToolCallID)
			p.State, p.Output, p.ResultProviderMetadata = aisdk.StateOutputAvailable, v.Output, metadata(v.ProviderMetadata)
		case aisdk.ToolOutputErrorChunk:
			p := find(v.ToolCallID)
			p.State, p.ErrorText, p.ResultProviderMetadata = aisdk.StateOutputError, v.ErrorText, metadata(v.ProviderMetadata)
		case aisdk.ToolOutputDeniedChunk:
			find(v.ToolCallID).State = aisdk.StateOutputDenied
		case aisdk.FinishChunk:
			finish = string(v.FinishReason)
		case aisdk.ErrorChunk:
			b.t.Fatalf("error chunk: %s", v.ErrorText)
		}
	}
	return finish, types
}

// metadata returns providerMetadata as the client stores it on a part.
func metadata(md aisdk.ProviderMetadata) json.RawMessage {
	if md == nil {
		return nil
	}
	b, _ := json.Marshal(md)
	return b
}

func (b *browser) part(toolType string) *aisdk.UIPart {
	m := &b.msgs[len(b.msgs)-1]
	for i := range m.Parts {
		if m.Parts[i].Type == toolType {
			return &m.Parts[i]
		}
	}
	b.t.Fatalf("no %s part in %+v", toolType, m.Parts)
	return nil
}

func TestDemo_GoesThroughBackendToolFormApprovalAndAnswer(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprintf("approve=%v", approve), func(t *testing.T) {
			h := newTestServer(t, config{}, io.Discard)
			srv := httptest.NewServer(h)
			defer srv.Close()
			b := &browser{t: t, url: srv.URL, tools: map[string]any{
				"create_record": map[string]any{"description": "Show a form.", "parameters": map[string]any{
					"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}, "email": map[string]any{"type": "string"}},
					"required": []string{"name", "email"},
				}},
			}}
			b.msgs = []aisdk.UIMessage{{ID: "u1", Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: "What's the weather in Oslo and 2 + 3?"}}}}

			finish, _ := b.post()
			if finish != "tool-calls" || b.part("tool-get_weather").State != aisdk.StateOutputAvailable || b.part("tool-add").State != aisdk.StateOutputAvailable {
				t.Fatalf("POST 1: finish %q, parts %+v", finish, b.msgs[1].Parts)
			}
			form := b.part("tool-create_record")
			if form.State != aisdk.StateInputAvailable || !strings.Contains(string(form.Input), "Ada Lovelace") {
				t.Fatalf("form part %+v", form)
			}
			form.State, form.Output = aisdk.StateOutputAvailable, json.RawMessage(`{"id":7,"name":"Ada Lovelace"}`)

			finish, _ = b.post()
			del := b.part("tool-delete_record")
			if finish != "tool-calls" || del.State != aisdk.StateApprovalRequested {
				t.Fatalf("POST 2: finish %q, delete part %+v", finish, del)
			}
			del.State, del.Approval.Approved = aisdk.StateApprovalResponded, &approve

			finish, types := b.post()
			if finish != "stop" || types[1] != map[bool]string{true: "tool-output-available", false: "tool-output-denied"}[approve] {
				t.Fatalf("POST 3: finish %q, chunks %v", finish, types)
			}
			answer := b.msgs[1].Parts[len(b.msgs[1].Parts)-1].Text
			for _, want := range []string{"**Weather in Oslo:**", "**Sum:** `{\"sum\":5}`", `"id":7`, map[bool]string{true: "Record 42 is deleted", false: "You denied"}[approve]} {
				if !strings.Contains(answer, want) {
					t.Errorf("answer %q lacks %q", answer, want)
				}
			}
			if len(b.msgs) != 2 {
				t.Errorf("%d messages; the continuations must extend one assistant message", len(b.msgs))
			}
			// The demo script names the chat once its first answer is in.
			resp, err := http.Get(srv.URL + "/api/chats")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var list aisdk.ChatList
			if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Chats) != 1 || list.Chats[0].Title != "Weather in Oslo and a sum" {
				t.Errorf("chat list %+v (%v): want the title %q", list, err, "Weather in Oslo and a sum")
			}
		})
	}
}

func TestDemo_WithoutThePageToolSkipsTheForm(t *testing.T) {
	h := newTestServer(t, config{}, io.Discard)
	srv := httptest.NewServer(h)
	defer srv.Close()
	b := &browser{t: t, url: srv.URL}
	b.msgs = []aisdk.UIMessage{{ID: "u1", Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: "hi"}}}}
	if finish, _ := b.post(); finish != "tool-calls" || b.part("tool-delete_record").State != aisdk.StateApprovalRequested {
		t.Fatalf("finish %q, parts %+v", finish, b.msgs[1].Parts)
	}
}

func TestWeather_IsDeterministic(t *testing.T) {
	a, _ := weather(context.Background(), weatherArgs{City: "Paris"})
	b, _ := weather(context.Background(), weatherArgs{City: "paris "})
	if a.Conditions != b.Conditions || a.HighC != b.HighC || a.LowC >= a.HighC {
		t.Errorf("%+v vs %+v", a, b)
	}
	if _, err := weather(context.Background(), weatherArgs{}); err == nil {
		t.Error("empty city accepted")
	}
}

func TestRun_ServesAScriptAndStopsWithTheContext(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"reply":[{"text":"Scripted hello."}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	var logs bytes.Buffer
	go func() {
		errc <- run(ctx, []string{"-addr", "127.0.0.1:0", "-script", script, "-data", t.TempDir()}, &logs, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-errc:
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+addr+"/api/chat", "application/json", strings.NewReader(`{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"delta":"hello."`) {
		t.Errorf("body %s", body)
	}
	info, err := http.Get("http://" + addr + "/api/info")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Model     string
		Simulator bool
		Durable   bool // by default on SQLite
	}
	if err := json.NewDecoder(info.Body).Decode(&got); err != nil || !got.Simulator || !strings.Contains(got.Model, "script.json") || !got.Durable {
		t.Errorf("info %+v, %v", got, err)
	}
	info.Body.Close()
	page, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		t.Errorf("page status %d", page.StatusCode)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("run: %v", err)
	}
	if !strings.Contains(logs.String(), "scripted model from") {
		t.Errorf("logs %q", logs.String())
	}
}

func TestFlags_RejectBadCombinations(t *testing.T) {
	for _, args := range [][]string{{"-script", "a", "-model", "b"}, {"extra"}, {"-drain", "-1s"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if _, err := newServer(t.Context(), config{script: "/does/not/exist.json"}, io.Discard); err == nil {
		t.Error("a missing script was accepted")
	}
	// -model builds an Ollama model without contacting the server.
	if s, err := newServer(t.Context(), config{model: "qwen3:4b"}, io.Discard); err != nil || !strings.Contains(s.describe, `Ollama model "qwen3:4b"`) {
		t.Errorf("-model: %+v, %v", s, err)
	} else {
		s.close()
	}
}

func TestToolStates_AFailingToolIsHiddenShownAndReset(t *testing.T) {
	script := filepath.Join(t.TempDir(), "failing.json")
	call := `{"reply":[{"tool_call":{"name":"get_weather","args":{"city":""}}}]}`
	doc := `{"turns":[` + call + `,` + call + `,` + call + `,{"expect":{"tools":["add","delete_record","researcher"]},"reply":[{"text":"The weather tool is broken."}]}]}`
	if err := os.WriteFile(script, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h := newTestServer(t, config{script: script, data: dir}, io.Discard) // SQLite in dir
	srv := httptest.NewServer(h)
	defer srv.Close()
	b := &browser{t: t, url: srv.URL}
	b.msgs = []aisdk.UIMessage{{ID: "u1", Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: "weather?"}}}}
	if finish, _ := b.post(); finish != "stop" {
		t.Fatalf("finish %q (the fourth turn's expectation on the offered tools failed?)", finish)
	}
	status := func() string {
		resp, err := http.Get(srv.URL + "/agents/chat-1/tool-states")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Success bool
			Data    struct {
				ToolStates map[string]struct{ Status string }
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || !body.Success {
			t.Fatalf("tool states: %v %+v", err, body)
		}
		return body.Data.ToolStates["get_weather"].Status
	}
	if got := status(); got != "failed" {
		t.Errorf("get_weather is %q after three failures", got)
	}
	resp, err := http.Post(srv.URL+"/agents/chat-1/tool-states/reset", "application/json", strings.NewReader(`{"toolName":"get_weather"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := status(); got != "available" {
		t.Errorf("get_weather is %q after the reset", got)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) == 0 || filepath.Base(files[0]) != "webchat.db" {
		t.Errorf("files %v, want the database webchat.db (the tool states live in it)", files)
	}
}

// A client that goes away (a closed tab, a reload) does not cancel its
// run: the run goes on and is saved, and the chat's next message stops it
// and goes on from it.
func TestChat_ARunOutlivesItsClientAndTheNextMessageStopsIt(t *testing.T) {
	script := writeScript(t, `{"turns":[{"reply":[{"text":"Working"},{"hang":true}]},{"expect":{"user":"next"},"reply":[{"text":"Next answer."}]}]}`)
	logs := &syncbuf.Buffer{}
	h := newTestServer(t, config{script: script}, logs)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/chat",
		strings.NewReader(`{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read until the text before the hang: the run is then blocked in the model.
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), `"delta":"Working"`) {
	}
	cancel() // a closed tab: the fetch is aborted, and no stop request is sent
	resp.Body.Close()
	info := getChat(t, srv.URL, "c")
	if !info.Streaming {
		t.Fatalf("the run ended with its client: %+v", info)
	}
	next := `{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]},{"id":"u2","role":"user","parts":[{"type":"text","text":"next"}]}]}`
	resp, err = http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(next))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"delta":"answer."`) {
		t.Errorf("the next message: %d %s", resp.StatusCode, body)
	}
	info = getChat(t, srv.URL, "c")
	if info.Streaming || len(info.Messages) != 4 || !strings.Contains(fmt.Sprint(info.Messages[1].Parts), "Working") {
		t.Errorf("the chat after the next message: %+v", info)
	}
	srv.Close() // waits for the handlers: the stopped run has ended
	if got := logs.String(); !strings.Contains(got, "a new request stops the chat's run in progress") || !strings.Contains(got, "its run went on without it") {
		t.Errorf("server log %q does not report the run that went on and was stopped", got)
	}
}

// getChat returns GET /api/chats/{id}.
func getChat(t *testing.T, base, id string) aisdk.ChatView {
	t.Helper()
	resp, err := http.Get(base + "/api/chats/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v aisdk.ChatView
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&v) != nil {
		t.Fatalf("GET /api/chats/%s: %d", id, resp.StatusCode)
	}
	return v
}

// -help is not a failure: run returns flag.ErrHelp, on which main exits 0.
func TestFlags_HelpReturnsErrHelp(t *testing.T) {
	var usage strings.Builder
	err := run(t.Context(), []string{"-help"}, &usage, nil)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run(-help) = %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(usage.String(), "-addr") {
		t.Errorf("usage %q", usage.String())
	}
}

// newTestServer returns the webchat handler for cfg, closed when t ends.
func newTestServer(t *testing.T, cfg config, logw io.Writer) http.Handler {
	t.Helper()
	s, err := newServer(t.Context(), cfg, logw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s.handler
}
