package aisdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/aisdk/internal/servetest"
	"github.com/agentloop/agentloop/simtest"
	"github.com/google/go-cmp/cmp"
)

// jsClientDir holds the Node harness that drives the real AI SDK client
// (package.json pins ai@7.0.173, @ai-sdk/react@4.0.177 and
// @assistant-ui/react-ai-sdk@1.4.12; install with `npm ci --prefix
// aisdk/testdata/jsclient`).
const jsClientDir = "testdata/jsclient"

// jsResult is what harness.mjs prints.
type jsResult struct {
	Status        string            `json:"status"`
	Error         string            `json:"error"`
	OnError       []string          `json:"onError"`
	Messages      []jsMessage       `json:"messages"`
	Requests      []json.RawMessage `json:"requests"`
	Chunks        []string          `json:"chunks"`
	InvalidChunks []struct {
		Data  string `json:"data"`
		Error string `json:"error"`
	} `json:"invalidChunks"`
	// Views are the distinct states of the tool parts the chat showed.
	Views []string `json:"views"`
	// FirstMessages (resume scenarios) are what the page showed when it
	// went away.
	FirstMessages []jsMessage `json:"firstMessages"`
}

type jsMessage struct {
	ID    string           `json:"id"`
	Role  string           `json:"role"`
	Parts []map[string]any `json:"parts"`
}

// jsRequest is the part of a posted body the tests look at.
type jsRequest struct {
	ID           string          `json:"id"`
	Trigger      string          `json:"trigger"`
	MessageID    *string         `json:"messageId"`
	Messages     []jsMessage     `json:"messages"`
	Tools        map[string]any  `json:"tools"`
	System       *string         `json:"system"`
	CallSettings json.RawMessage `json:"callSettings"`
	Metadata     json.RawMessage `json:"metadata"`
}

// requireNodeHarness skips the test when Node or the installed harness is
// missing, except under CI=true, where that is a failure.
func requireNodeHarness(t *testing.T) string {
	t.Helper()
	miss := func(why string) {
		msg := "JavaScript client test: " + why + "; install Node and run `npm ci --prefix aisdk/testdata/jsclient`"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true, so this fails instead of skipping)")
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		miss("no node on PATH")
	}
	if _, err := os.Stat(filepath.Join(jsClientDir, "node_modules", "ai", "package.json")); err != nil {
		miss(jsClientDir + "/node_modules is not installed")
	}
	return node
}

// runJSClient serves h, runs the harness scenario against it and returns
// the harness result. It fails the test if any chunk failed the client's
// own validation.
func runJSClient(t *testing.T, node string, h http.Handler, scenario string) jsResult {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "harness.mjs", scenario, srv.URL+"/api/chat")
	cmd.Dir = jsClientDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node harness.mjs %s: %v\nstderr:\n%s", scenario, err, stderr.String())
	}
	var res jsResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("harness output: %v\n%s", err, stdout.String())
	}
	for _, bad := range res.InvalidChunks {
		t.Errorf("the client's schema rejected chunk %s: %s", bad.Data, bad.Error)
	}
	// aisdktest.s Go validator must agree with the real client on real output.
	for _, c := range res.Chunks {
		if err := aisdktest.ValidateChunk([]byte(c)); err != nil && len(res.InvalidChunks) == 0 {
			t.Errorf("aisdktest.ValidateChunk rejects a chunk the JS client accepted: %v", err)
		}
	}
	if t.Failed() {
		t.Logf("chunks:\n%s", strings.Join(res.Chunks, "\n"))
	}
	return res
}

func (r jsResult) requests(t *testing.T) []jsRequest {
	t.Helper()
	out := make([]jsRequest, len(r.Requests))
	for i, raw := range r.Requests {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	return out
}

// partSummary is a compact view of a UI part: its type, plus state, text
// and output where present.
func partSummary(p map[string]any) string {
	s, _ := p["type"].(string)
	if st, ok := p["state"].(string); ok {
		s += "(" + st + ")"
	}
	if txt, ok := p["text"].(string); ok {
		s += " " + txt
	}
	if out, ok := p["output"]; ok {
		b, _ := json.Marshal(out)
		s += " -> " + string(b)
	}
	return s
}

func summaries(m jsMessage) []string {
	out := make([]string, len(m.Parts))
	for i, p := range m.Parts {
		out[i] = partSummary(p)
	}
	return out
}

// assertChat checks a ready chat of one user message and one assistant
// message with the given parts.
func assertChat(t *testing.T, res jsResult, wantParts []string) jsMessage {
	t.Helper()
	if res.Status != "ready" || res.Error != "" || len(res.OnError) > 0 {
		t.Fatalf("chat status %q, error %q, onError %q; want ready without error\nchunks:\n%s", res.Status, res.Error, res.OnError, strings.Join(res.Chunks, "\n"))
	}
	if len(res.Messages) != 2 || res.Messages[0].Role != "user" || res.Messages[1].Role != "assistant" {
		t.Fatalf("messages %+v, want one user and one assistant message", res.Messages)
	}
	asst := res.Messages[1]
	if diff := cmp.Diff(wantParts, summaries(asst)); diff != "" {
		t.Errorf("assistant parts (-want +got):\n%s", diff)
	}
	return asst
}

// jsHandler serves model in the default stateless mode, where every part
// the server makes is signed and every posted one checked: each scenario
// that posts back proves that the real client keeps the signatures.
func jsHandler(model agentloop.Model, tools ...*agentloop.Tool) *aisdk.Handler {
	return &aisdk.Handler{
		Agent:        &agentloop.Agent{Model: model, Tools: tools},
		NewMessageID: func() string { return "msg-js-1" },
		Logger:       slog.New(slog.DiscardHandler),
	}
}

// sigOf returns the signature this package keeps in a providerMetadata
// object of a posted part, or "".
func sigOf(md any) string {
	m, _ := md.(map[string]any)
	inner, _ := m["agentloop"].(map[string]any)
	sig, _ := inner["sig"].(string)
	return sig
}

type weatherIn struct {
	City string `json:"city"`
}

func jsWeatherTool(t *testing.T) *agentloop.Tool {
	tool, err := agentloop.NewTool("get_weather", "Forecast for a city.", func(ctx context.Context, a weatherIn) (map[string]any, error) {
		return map[string]any{"city": a.City, "forecast": "sunny"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

var locationSchema = json.RawMessage(`{"type":"object","properties":{"precision":{"type":"string","enum":["city","country"]}},"required":["precision"]}`)

func TestJSClient_PlainText(t *testing.T) {
	node := requireNodeHarness(t)
	model := simtest.NewModel(simtest.Turn{Expect: simtest.Expect{User: "Hello"}, Reply: []simtest.Step{simtest.Text("Hi there, friend!")}})
	res := runJSClient(t, node, jsHandler(model), "text")
	asst := assertChat(t, res, []string{"step-start", "text(done) Hi there, friend!"})
	if asst.ID != "msg-js-1" {
		t.Errorf("assistant id %q, want the server's msg-js-1", asst.ID)
	}
	if len(res.Requests) != 1 {
		t.Errorf("%d requests, want 1 (no automatic re-send after a plain answer)", len(res.Requests))
	}
}

func TestJSClient_Reasoning(t *testing.T) {
	node := requireNodeHarness(t)
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Reasoning("The user wants thought."), simtest.Text("Thought done.")}})
	res := runJSClient(t, node, jsHandler(model), "reasoning")
	assertChat(t, res, []string{"step-start", "reasoning(done) The user wants thought.", "text(done) Thought done."})
}

func TestJSClient_ServerToolDoesNotTriggerResend(t *testing.T) {
	node := requireNodeHarness(t)
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call-w", "get_weather", map[string]string{"city": "Oslo"})}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"call-w": "sunny"}}, Reply: []simtest.Step{simtest.Text("Sunny in Oslo.")}},
	)
	res := runJSClient(t, node, jsHandler(model, jsWeatherTool(t)), "server-tool")
	assertChat(t, res, []string{
		"step-start", `tool-get_weather(output-available) -> {"city":"Oslo","forecast":"sunny"}`,
		"step-start", "text(done) Sunny in Oslo.",
	})
	if len(res.Requests) != 1 {
		t.Errorf("%d requests, want 1: a server tool must not make the client re-post", len(res.Requests))
	}
}

// clientToolScript calls the client tool getLocation, then answers with its
// result; offered, when non-nil, is the exact tool set the first turn must
// be offered.
func clientToolScript(offered []string) *simtest.Model {
	return simtest.NewModel(
		simtest.Turn{Expect: simtest.Expect{Tools: offered}, Reply: []simtest.Step{
			simtest.Text("Let me check."),
			simtest.Call("call-loc", "getLocation", map[string]string{"precision": "city"}),
		}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"call-loc": "Berlin"}}, Reply: []simtest.Step{simtest.Text("You are in Berlin.")}},
	)
}

var clientToolParts = []string{
	"step-start", "text(done) Let me check.", `tool-getLocation(output-available) -> {"city":"Berlin","precision":"city"}`,
	"step-start", "text(done) You are in Berlin.",
}

// assertContinuation checks that the second POST continued the assistant
// message: trigger submit-message, messageId the assistant id, and the
// tool's answer in the posted assistant message.
func assertContinuation(t *testing.T, reqs []jsRequest, assistantID, toolState string) {
	t.Helper()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (the automatic re-send after the client's answer)", len(reqs))
	}
	if reqs[0].MessageID != nil {
		t.Errorf("POST 1 messageId %q, want absent", *reqs[0].MessageID)
	}
	second := reqs[1]
	if second.Trigger != "submit-message" || second.MessageID == nil || *second.MessageID != assistantID {
		t.Errorf("POST 2 trigger %q messageId %v, want submit-message and %q", second.Trigger, second.MessageID, assistantID)
	}
	if len(second.Messages) != 2 || second.Messages[1].ID != assistantID {
		t.Fatalf("POST 2 messages %+v, want the user message and assistant %q", second.Messages, assistantID)
	}
	last := second.Messages[1].Parts[len(second.Messages[1].Parts)-1]
	if last["state"] != toolState {
		t.Errorf("POST 2 tool part %v, want state %s", last, toolState)
	}
}

func TestJSClient_FrontendToolRoundTrip(t *testing.T) {
	node := requireNodeHarness(t)
	loc, err := agentloop.NewClientTool("getLocation", "The user's location.", locationSchema)
	if err != nil {
		t.Fatal(err)
	}
	res := runJSClient(t, node, jsHandler(clientToolScript([]string{"getLocation"}), loc), "client-tool")
	asst := assertChat(t, res, clientToolParts)
	assertContinuation(t, res.requests(t), asst.ID, "output-available")
}

func TestJSClient_AssistantUIBodyToolsBecomeClientTools(t *testing.T) {
	node := requireNodeHarness(t)
	// The server knows no getLocation: it comes from the body's tools, which
	// the real AssistantChatTransport builds from the page's model context,
	// together with its system prompt and call settings.
	model := clientToolScript([]string{"getLocation"})
	h := jsHandler(model)
	h.AllowClientSystem, h.AllowClientSettings = true, true
	res := runJSClient(t, node, h, "assistant-ui")
	asst := assertChat(t, res, clientToolParts)
	reqs := res.requests(t)
	assertContinuation(t, reqs, asst.ID, "output-available")
	if part := reqs[1].Messages[1].Parts[2]; sigOf(part["callProviderMetadata"]) == "" {
		t.Errorf("POST 2 tool part %v lacks the call's signature: assistant-ui's transport must post it back", part)
	}
	for i, r := range reqs {
		if r.Tools["getLocation"] == nil || r.System == nil || r.CallSettings == nil {
			t.Errorf("POST %d lacks assistant-ui's tools/system/callSettings: %s", i+1, res.Requests[i])
		}
	}
	if len(reqs) > 0 && string(reqs[0].Metadata) != "{}" {
		t.Errorf("POST 1 metadata %s, want assistant-ui's run config {}", reqs[0].Metadata)
	}
	for i, r := range model.Requests() {
		if r.System != "You are a test assistant." {
			t.Errorf("model call %d: system %q, want the body's system prompt", i+1, r.System)
		}
		if r.Settings.Temperature == nil || *r.Settings.Temperature != 0.25 {
			t.Errorf("model call %d: temperature %v, want the body's callSettings.temperature 0.25", i+1, r.Settings.Temperature)
		}
	}
}

type deleteIn struct {
	ID int `json:"id"`
}

// newDeleteRecord returns a delete_record tool that needs approval and
// answers {"deleted": id}, and the count of its runs.
func newDeleteRecord(t *testing.T) (*agentloop.Tool, *atomic.Int32) {
	t.Helper()
	runs := new(atomic.Int32)
	del, err := agentloop.NewTool("delete_record", "Delete a record.", func(ctx context.Context, a deleteIn) (map[string]any, error) {
		runs.Add(1)
		return map[string]any{"deleted": a.ID}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	del.NeedsApproval = true
	return del, runs
}

func TestJSClient_Approval(t *testing.T) {
	node := requireNodeHarness(t)
	for _, tc := range []struct {
		scenario string
		approved bool
		want     []string
	}{
		{"approval-approved", true, []string{"step-start", `tool-delete_record(output-available) -> {"deleted":7}`, "step-start", "text(done) Done."}},
		{"approval-denied", false, []string{"step-start", "tool-delete_record(output-denied)", "step-start", "text(done) Done."}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			del, runs := newDeleteRecord(t)
			model := simtest.NewModel(
				simtest.Turn{Reply: []simtest.Step{simtest.Call("call-del", "delete_record", map[string]int{"id": 7})}},
				simtest.Turn{Reply: []simtest.Step{simtest.Text("Done.")}},
			)
			res := runJSClient(t, node, jsHandler(model, del), tc.scenario)
			asst := assertChat(t, res, tc.want)
			reqs := res.requests(t)
			assertContinuation(t, reqs, asst.ID, "approval-responded")
			part := reqs[1].Messages[1].Parts[1]
			approval, _ := part["approval"].(map[string]any)
			if sig, _ := approval["signature"].(string); sig == "" || sigOf(part["callProviderMetadata"]) == "" {
				t.Errorf("POST 2 tool part %v lacks the approval's or the call's signature", part)
			}
			wantRuns := int32(0)
			if tc.approved {
				wantRuns = 1
			}
			if got := runs.Load(); got != wantRuns {
				t.Errorf("the tool ran %d times, want %d", got, wantRuns)
			}
		})
	}
}

func TestJSClient_ErrorMidStreamShownByClient(t *testing.T) {
	node := requireNodeHarness(t)
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Partial answer"), simtest.Fail("model exploded")}})
	h := jsHandler(model)
	h.ErrorText = func(err error) string {
		if strings.Contains(err.Error(), "model exploded") {
			return "The model failed: model exploded"
		}
		return err.Error()
	}
	res := runJSClient(t, node, h, "error")
	if res.Status != "error" || res.Error != "The model failed: model exploded" {
		t.Fatalf("status %q error %q, want error with the server's error text\nchunks:\n%s", res.Status, res.Error, strings.Join(res.Chunks, "\n"))
	}
	if len(res.OnError) != 1 || res.OnError[0] != res.Error {
		t.Errorf("onError calls %q, want one with %q", res.OnError, res.Error)
	}
	if len(res.Requests) != 1 {
		t.Errorf("%d requests, want 1 (no re-send after an error)", len(res.Requests))
	}
	if len(res.Messages) != 2 {
		t.Fatalf("messages %+v, want the user message and the partial answer", res.Messages)
	}
	got := strings.Join(summaries(res.Messages[1]), "|")
	if !strings.Contains(got, "Partial answer") {
		t.Errorf("assistant parts %s, want the partial text kept", got)
	}
}

// The server's signed parts (its text, a server tool's call and output)
// come back unchanged in the next POST of the real client, which the
// handler then accepts.
func TestJSClient_SignedPartsComeBackAndAreAccepted(t *testing.T) {
	node := requireNodeHarness(t)
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call-w", "get_weather", map[string]string{"city": "Oslo"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Sunny in Oslo.")}},
		simtest.Turn{Expect: simtest.Expect{User: "Thanks", ToolResults: map[string]string{"call-w": "sunny"}}, Reply: []simtest.Step{simtest.Text("You are welcome.")}},
	)
	ids := []string{"msg-js-1", "msg-js-2"}
	h := jsHandler(model, jsWeatherTool(t))
	h.NewMessageID = func() string { id := ids[0]; ids = ids[1:]; return id }
	res := runJSClient(t, node, h, "server-tool-followup")
	if res.Status != "ready" || res.Error != "" || len(res.Messages) != 4 {
		t.Fatalf("status %q error %q, %d messages; want ready with two exchanges", res.Status, res.Error, len(res.Messages))
	}
	if got := summaries(res.Messages[3]); !cmp.Equal(got, []string{"step-start", "text(done) You are welcome."}) {
		t.Errorf("second answer %v", got)
	}
	reqs := res.requests(t)
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first := reqs[1].Messages[1]
	tool, text := first.Parts[1], first.Parts[3]
	if sigOf(tool["callProviderMetadata"]) == "" || sigOf(tool["resultProviderMetadata"]) == "" {
		t.Errorf("POST 2 posted the server tool part %v without its signatures", tool)
	}
	if sigOf(text["providerMetadata"]) == "" {
		t.Errorf("POST 2 posted the answer %v without its signature", text)
	}
	if n := len(model.Requests()); n != 3 {
		t.Errorf("%d model calls, want 3 (the second POST was refused?)", n)
	}
}

// A tool's progress reaches the real client as preliminary output, which it
// shows until the final output replaces it, without re-sending on it.
func TestJSClient_PreliminaryOutputIsShownThenReplaced(t *testing.T) {
	node := requireNodeHarness(t)
	imp, err := agentloop.NewTool("import_rows", "Import rows.", func(ctx context.Context, _ struct{}) (map[string]int, error) {
		for i := 1; i <= 2; i++ {
			if err := agentloop.ReportProgress(ctx, fmt.Sprintf(`{"done":%d,"of":2}`, i)); err != nil {
				return nil, err
			}
		}
		return map[string]int{"imported": 2}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call-imp", "import_rows", map[string]any{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Imported.")}},
	)
	res := runJSClient(t, node, jsHandler(model, imp), "progress")
	assertChat(t, res, []string{"step-start", `tool-import_rows(output-available) -> {"imported":2}`, "step-start", "text(done) Imported."})
	want := []string{
		"tool-import_rows input-streaming null",
		"tool-import_rows input-available null",
		`tool-import_rows output-available preliminary {"done":1,"of":2}`,
		`tool-import_rows output-available preliminary {"done":2,"of":2}`,
		`tool-import_rows output-available {"imported":2}`,
	}
	if diff := cmp.Diff(want, res.Views); diff != "" {
		t.Errorf("what the chat showed of the tool (-want +got):\n%s", diff)
	}
	if len(res.Requests) != 1 {
		t.Errorf("%d requests, want 1: preliminary output must not make the client re-send", len(res.Requests))
	}
}

// Client code that changes the call it asks the user to approve is refused:
// the approved call does not run, and the real client shows the error.
func TestJSClient_ApprovalOfATamperedCallIsRefused(t *testing.T) {
	node := requireNodeHarness(t)
	del, runs := newDeleteRecord(t)
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Call("call-del", "delete_record", map[string]int{"id": 7})}})
	res := runJSClient(t, node, jsHandler(model, del), "approval-tampered")
	if res.Status != "error" || !strings.Contains(res.Error, "the tool call has no valid signature") {
		t.Errorf("status %q error %q; want the 403 that names the tampered part", res.Status, res.Error)
	}
	if len(res.Requests) != 2 {
		t.Errorf("%d requests, want 2 (the approval's re-send)", len(res.Requests))
	}
	if runs.Load() != 0 || len(model.Requests()) != 1 {
		t.Errorf("the tool ran %d times and the model was called %d times after a tampered approval", runs.Load(), len(model.Requests()))
	}
}

// openGateOnResume opens g once the resume request (GET …/stream) has
// found the run and starts answering, so the run cannot end before the
// resume looks for it (that would be a 204, and nothing to resume).
func openGateOnResume(h http.Handler, g *servetest.Gate) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/stream") {
			w = &openOnWrite{ResponseWriter: w, g: g}
		}
		h.ServeHTTP(w, r)
	})
}

// openOnWrite opens its gate when the response begins.
type openOnWrite struct {
	http.ResponseWriter
	g *servetest.Gate
}

func (o *openOnWrite) WriteHeader(code int) {
	o.ResponseWriter.WriteHeader(code)
	o.g.Open()
}

func (o *openOnWrite) Write(p []byte) (int, error) {
	n, err := o.ResponseWriter.Write(p)
	o.g.Open()
	return n, err
}

func (o *openOnWrite) Unwrap() http.ResponseWriter { return o.ResponseWriter }

// The real client resumes a stream with resumeStream (what useChat({resume:
// true}) calls on mount) against a server with a Store: a page goes away
// while the server waits in a tool, reloads the stored chat, and resumes;
// the run went on without it, and the replayed stream replaces the partial
// message with the whole answer. In the continuation scenario the message
// began in an earlier response (before an approval): the replay restates
// its earlier parts, or the client would fail on the approved call's output.
func TestJSClient_ResumeStreamAfterAReload(t *testing.T) {
	node := requireNodeHarness(t)
	for _, tc := range []struct {
		scenario string
		turns    []simtest.Turn
		want     []string
	}{
		{"resume", []simtest.Turn{
			{Reply: []simtest.Step{simtest.Text("Checking."), simtest.Call("w", "get_weather", map[string]string{"city": "Oslo"})}},
			{Reply: []simtest.Step{simtest.Text("Sunny; one moment."), simtest.Call("g", "wait_for_it", map[string]string{})}},
			{Reply: []simtest.Step{simtest.Text("All done.")}},
		}, []string{
			"step-start", "text(done) Checking.", `tool-get_weather(output-available) -> {"city":"Oslo","forecast":"sunny"}`,
			"step-start", "text(done) Sunny; one moment.", `tool-wait_for_it(output-available) -> {"waited":true}`,
			"step-start", "text(done) All done.",
		}},
		{"resume-continuation", []simtest.Turn{
			{Reply: []simtest.Step{simtest.Text("Deleting."), simtest.Call("d", "delete_record", map[string]int{"id": 7})}},
			{Reply: []simtest.Step{simtest.Text("Deleted; one moment."), simtest.Call("g", "wait_for_it", map[string]string{})}},
			{Reply: []simtest.Step{simtest.Text("Done.")}},
		}, []string{
			"step-start", "text(done) Deleting.", `tool-delete_record(output-available) -> {"deleted":7}`,
			"step-start", "text(done) Deleted; one moment.", `tool-wait_for_it(output-available) -> {"waited":true}`,
			"step-start", "text(done) Done.",
		}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			g := servetest.NewGate(t)
			defer g.Open()
			del, runs := newDeleteRecord(t)
			h := &aisdk.ChatServer{
				Agent:        &agentloop.Agent{Model: simtest.NewModel(tc.turns...), Tools: []*agentloop.Tool{jsWeatherTool(t), del, g.Tool}},
				Store:        newStore(t),
				NewMessageID: func() string { return "msg-js-1" },
				Logger:       slog.New(slog.DiscardHandler),
			}
			res := runJSClient(t, node, openGateOnResume(h.Routes("/api"), g), tc.scenario)
			asst := assertChat(t, res, tc.want)
			if n := len(res.FirstMessages); n != 2 || res.FirstMessages[1].ID != asst.ID {
				t.Errorf("the page that went away showed %+v; the resumed message must replace its assistant message %q", res.FirstMessages, asst.ID)
			}
			if tc.scenario == "resume-continuation" && runs.Load() != 1 {
				t.Errorf("the approved tool ran %d times", runs.Load())
			}
		})
	}
}
