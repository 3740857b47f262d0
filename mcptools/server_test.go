package mcptools_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/mcptools"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewServerDoesNotConnect(t *testing.T) {
	f := newFake(t, nil)
	s := newServer(t, f, mcptools.ServerOptions{})
	if n := f.dials.Load(); n != 0 {
		t.Fatalf("NewServer dialled %d times; want a lazy connection", n)
	}
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := f.dials.Load(); n != 1 {
		t.Fatalf("dialled %d times for two listings; want 1", n)
	}
	if got := s.Name(); got != "fake" {
		t.Errorf("Name() = %q; want the server's own name %q", got, "fake")
	}
}

func TestNewServerRejectsBadOptions(t *testing.T) {
	if _, err := mcptools.NewServer(nil, mcptools.ServerOptions{}); err == nil || !strings.Contains(err.Error(), "nil Dialer") {
		t.Errorf("nil dialer: err = %v", err)
	}
	dial := mcptools.Stdio("true")
	if _, err := mcptools.NewServer(dial, mcptools.ServerOptions{Prefix: "fs."}); err == nil || !strings.Contains(err.Error(), `prefix "fs."`) {
		t.Errorf("bad prefix: err = %v", err)
	}
	if _, err := mcptools.NewServer(dial, mcptools.ServerOptions{MaxTimeout: -time.Second}); err == nil || !strings.Contains(err.Error(), "MaxTimeout") {
		t.Errorf("negative MaxTimeout: err = %v", err)
	}
}

func TestToolsCarryNameDescriptionSchemaAndPolicy(t *testing.T) {
	f := newFake(t, nil)
	s := newServer(t, f, mcptools.ServerOptions{
		Prefix:        "fake_",
		Filter:        func(tool *mcp.Tool) bool { return tool.Name != "big" },
		NeedsApproval: mcptools.UnlessReadOnly,
		MaxTimeout:    time.Minute,
	})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fake_echo", "fake_fail", "fake_hang", "fake_mixed", "fake_steps", "fake_weather"}
	got := toolNames(tools)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("tool names (-want +got):\n%s", diff)
	}
	echo := findTool(t, tools, "fake_echo")
	if echo.Description != "Echoes its text." {
		t.Errorf("description = %q", echo.Description)
	}
	if !strings.Contains(string(echo.Schema), `"text"`) {
		t.Errorf("schema %s lacks the server's property", echo.Schema)
	}
	if echo.NeedsApproval {
		t.Error("a read-only tool needs approval under UnlessReadOnly")
	}
	if !findTool(t, tools, "fake_fail").NeedsApproval {
		t.Error("a tool that is not read-only does not need approval under UnlessReadOnly")
	}
	if echo.Timeout != time.Minute {
		t.Errorf("Timeout = %v; want MaxTimeout", echo.Timeout)
	}
}

func TestArgumentsAreValidatedAgainstTheServersSchema(t *testing.T) {
	f := newFake(t, nil)
	tools, err := newServer(t, f, mcptools.ServerOptions{}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res := resultOf(t, run(t, context.Background(), tools, "echo", map[string]any{"text": 42}))
	if !res.IsError || !errors.Is(res.Err, agentloop.ErrInvalidArgs) {
		t.Fatalf("result = %+v; want an invalid-arguments error", res)
	}
}

func TestCallReturnsTextStructuredContentAndDescriptions(t *testing.T) {
	f := newFake(t, nil)
	tools, err := newServer(t, f, mcptools.ServerOptions{}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"echo", map[string]any{"text": "hello"}, "hello"},
		{"weather", map[string]any{"city": "Paris"}, `{"city":"Paris","temp":21.5}`},
		{"mixed", map[string]any{}, "here you go\n[image: image/png, 7 bytes]\n[resource file:///a.txt, text/plain]\ninside\n[resource link: file:///b.bin (b.bin)]"},
	} {
		res := resultOf(t, run(t, context.Background(), tools, tc.tool, tc.args))
		if res.IsError || res.Content != tc.want {
			t.Errorf("%s: result = %+v; want content %q", tc.tool, res, tc.want)
		}
	}
}

func TestIsErrorBecomesAnErrorResultTheModelSees(t *testing.T) {
	f := newFake(t, nil)
	tools, err := newServer(t, f, mcptools.ServerOptions{}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res := resultOf(t, run(t, context.Background(), tools, "fail", map[string]any{}))
	if !res.IsError || !strings.Contains(res.Content, "the disk is full") {
		t.Fatalf("result = %+v; want an error result with the server's message", res)
	}
	var te *mcptools.ToolError
	if !errors.As(res.Err, &te) || te.Tool != "fail" || te.Server != "fake" {
		t.Fatalf("Err = %#v; want a *ToolError naming the tool and server", res.Err)
	}
}

func TestLongResultIsCutWithAMarker(t *testing.T) {
	f := newFake(t, nil)
	tools, err := newServer(t, f, mcptools.ServerOptions{MaxResultBytes: 101}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res := resultOf(t, run(t, context.Background(), tools, "big", map[string]any{}))
	head, marker, ok := strings.Cut(res.Content, "\n")
	if !ok || head != strings.Repeat("é", 50) {
		t.Fatalf("content head = %q; want the first 50 characters (100 bytes, cut on a character boundary)", head)
	}
	if marker != "[truncated by agentloop: the result has 2000 bytes; only the first 100 are shown]" {
		t.Errorf("marker = %q", marker)
	}
}

func TestProgressBecomesToolProgressItemsInOrder(t *testing.T) {
	f := newFake(t, nil)
	tools, err := newServer(t, f, mcptools.ServerOptions{}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	items := runHeld(t, f, tools, stepArgs{Steps: 3})
	want := []string{"progress 1/3: step 1", "progress 2/3: step 2", "progress 3/3: step 3"}
	if diff := cmp.Diff(want, progressOf(items)); diff != "" {
		t.Fatalf("progress (-want +got):\n%s", diff)
	}
	var sawProgress bool
	for _, it := range items {
		switch it := it.(type) {
		case agentloop.ToolProgress:
			sawProgress = true
			if it.CallID != "call_1" || it.Name != "steps" {
				t.Errorf("progress item %+v names the wrong call", it)
			}
		case agentloop.ToolResultReady:
			if !sawProgress {
				t.Error("the result came before the progress")
			}
			if it.Result.Content != "3 steps done" {
				t.Errorf("result = %+v", it.Result)
			}
		}
	}
}

func TestFormatProgressOptionShapesTheItems(t *testing.T) {
	f := newFake(t, nil)
	s := newServer(t, f, mcptools.ServerOptions{FormatProgress: func(p *mcp.ProgressNotificationParams) string {
		return p.Message
	}})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := progressOf(runHeld(t, f, tools, stepArgs{Steps: 2}))
	if diff := cmp.Diff([]string{"step 1", "step 2"}, got); diff != "" {
		t.Fatalf("progress (-want +got):\n%s", diff)
	}
}

func TestProgressRestartsTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(t, nil)
		// Six steps of 30s each on the bubble's fake clock: 3 minutes in all,
		// more than the timeout, but never more than half of it without
		// progress.
		s := newServer(t, f, mcptools.ServerOptions{Timeout: time.Minute})
		tools, err := s.Tools(context.Background())
		require.NoError(t, err)
		items := runHeld(t, f, tools, stepArgs{Steps: 6, DelayMS: 30_000})
		res := resultOf(t, items)
		require.False(t, res.IsError, "progress should have kept the call alive: %+v", res)
		assert.Len(t, progressOf(items), 6)
	})
}

func TestSilentCallTimesOutAndIsCancelledOnTheServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(t, nil)
		s := newServer(t, f, mcptools.ServerOptions{Timeout: time.Minute})
		tools, err := s.Tools(context.Background())
		require.NoError(t, err)
		res := resultOf(t, run(t, context.Background(), tools, "hang", map[string]any{}))
		require.True(t, res.IsError)
		require.ErrorIs(t, res.Err, agentloop.ErrToolTimeout)
		assert.Contains(t, res.Content, "neither the result", "the content says what happened")
		recv(t, f.cancelled, "the server to see the call cancelled")
	})
}

func TestCancellingTheRunCancelsTheMCPRequest(t *testing.T) {
	f := newFake(t, nil)
	tools, err := newServer(t, f, mcptools.ServerOptions{}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		<-f.started
		cancel(agentloop.Cancel("user pressed stop"))
	}()
	_, err = runErr(t, ctx, tools, "hang", map[string]any{}, nil)
	recv(t, f.cancelled, "the server to see notifications/cancelled")
	if !errors.Is(err, agentloop.ErrCancelled) {
		t.Fatalf("run error = %v; want the run's cancel error", err)
	}
	h, _ := agentloop.HistoryOf(err)
	last := h[len(h)-1]
	if last.Role != agentloop.RoleTool || !last.Parts[0].ToolResult.IsError || !strings.Contains(last.Parts[0].ToolResult.Content, "user pressed stop") {
		t.Errorf("last message = %+v; want the call's cancelled result", last)
	}
}

func TestListFollowsEveryPage(t *testing.T) {
	f := newFake(t, &mcp.ServerOptions{PageSize: 2})
	var lists int
	f.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				lists++
			}
			return next(ctx, method, req)
		}
	})
	tools, err := newServer(t, f, mcptools.ServerOptions{}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 7 || lists != 4 {
		t.Fatalf("%d tools in %d pages; want 7 in 4 pages of 2", len(tools), lists)
	}
}

func TestListChangedRefreshesTheTools(t *testing.T) {
	f := newFake(t, nil)
	changed := make(chan struct{}, 4)
	s := newServer(t, f, mcptools.ServerOptions{OnToolsChanged: func() { changed <- struct{}{} }})
	before, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if before[0] != again[0] {
		t.Error("an unchanged list should keep the same *agentloop.Tool values")
	}
	f.srv.AddTool(&mcp.Tool{Name: "added", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new"}}}, nil
		})
	recv(t, changed, "notifications/tools/list_changed")
	after, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 || !slices.Contains(toolNames(after), "added") {
		t.Fatalf("tools after the change: %v", toolNames(after))
	}
	if res := resultOf(t, run(t, context.Background(), after, "added", map[string]any{})); res.Content != "new" {
		t.Errorf("the added tool answered %+v", res)
	}
}

func TestToolNamesAreMadeSafeForProviders(t *testing.T) {
	f := newFake(t, nil)
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	f.srv.AddTool(&mcp.Tool{Name: "files.read/all", InputSchema: map[string]any{"type": "object"}}, noop)
	long := strings.Repeat("x", 80)
	f.srv.AddTool(&mcp.Tool{Name: long, InputSchema: map[string]any{"type": "object"}}, noop)
	tools, err := newServer(t, f, mcptools.ServerOptions{Prefix: "p_"}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	findTool(t, tools, "p_files_read_all")
	var longName string
	for _, n := range toolNames(tools) {
		if strings.HasPrefix(n, "p_xxx") {
			longName = n
		}
	}
	if len(longName) != mcptools.MaxNameLen {
		t.Fatalf("long name %q has %d characters; want %d", longName, len(longName), mcptools.MaxNameLen)
	}
	// The offered name calls the server's tool by its own name.
	if res := resultOf(t, run(t, context.Background(), tools, "p_files_read_all", map[string]any{})); res.Content != "ok" {
		t.Errorf("result = %+v", res)
	}
}

func TestNamesThatCollideAreAnError(t *testing.T) {
	f := newFake(t, nil)
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	f.srv.AddTool(&mcp.Tool{Name: "a.b", InputSchema: map[string]any{"type": "object"}}, noop)
	f.srv.AddTool(&mcp.Tool{Name: "a_b", InputSchema: map[string]any{"type": "object"}}, noop)
	_, err := newServer(t, f, mcptools.ServerOptions{}).Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"a.b" and "a_b" would both be offered as "a_b"`) {
		t.Fatalf("err = %v; want the collision named", err)
	}
}

func TestSeveralServersNeedDistinctPrefixes(t *testing.T) {
	f1, f2 := newFake(t, nil), newFake(t, nil)
	a := newServer(t, f1, mcptools.ServerOptions{Name: "one"})
	b := newServer(t, f2, mcptools.ServerOptions{Name: "two"})
	_, err := mcptools.Tools(context.Background(), a, b)
	if err == nil || !strings.Contains(err.Error(), `is offered by both MCP server "one" and MCP server "two"; give them different ServerOptions.Prefix`) {
		t.Fatalf("err = %v; want the clash named with both servers", err)
	}
	b2 := newServer(t, f2, mcptools.ServerOptions{Name: "two", Prefix: "two_"})
	all, err := mcptools.Tools(context.Background(), a, b2)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 14 || !slices.Contains(toolNames(all), "two_echo") || !slices.Contains(toolNames(all), "echo") {
		t.Fatalf("tools = %v", toolNames(all))
	}
}

func TestApprovalPausesTheRun(t *testing.T) {
	f := newFake(t, nil)
	tools, err := newServer(t, f, mcptools.ServerOptions{
		NeedsApproval: func(*mcp.Tool) bool { return true },
	}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	items := run(t, context.Background(), tools, "echo", map[string]any{"text": "x"})
	p, ok := items[len(items)-1].(agentloop.Pending)
	if !ok || len(p.Approvals) != 1 || p.Approvals[0].Name != "echo" {
		t.Fatalf("last item = %#v; want a Pending approval of echo", items[len(items)-1])
	}
}

// crashable is a server-side transport whose connections a test can cut
// as a crash does. A ServerSession's Close is not that: it first waits for
// the calls in flight, and whether it cancels them first depends on timing.
type crashable struct {
	mcp.Transport
	conns chan<- mcp.Connection
}

func (c crashable) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := c.Transport.Connect(ctx)
	if err == nil {
		c.conns <- conn
	}
	return conn, err
}

func TestServerExitMidCallGivesAnErrorAndTheNextCallReconnects(t *testing.T) {
	f := newFake(t, nil)
	t.Cleanup(func() { close(f.release) }) // the cut-off call's handler, if it still waits
	conns := make(chan mcp.Connection, 4)
	dial := func(ctx context.Context) (mcp.Transport, error) {
		f.dials.Add(1)
		serverSide, clientSide := mcp.NewInMemoryTransports()
		if _, err := f.srv.Connect(ctx, crashable{serverSide, conns}, nil); err != nil {
			return nil, err
		}
		return clientSide, nil
	}
	s, err := mcptools.NewServer(dial, mcptools.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-f.started
		(<-conns).Close() // the server goes away mid-call
	}()
	res := resultOf(t, run(t, context.Background(), tools, "hang", map[string]any{}))
	if !res.IsError || !strings.Contains(res.Content, "connection to MCP server \"fake\" was lost during the call") {
		t.Fatalf("result = %+v; want an error that says the connection was lost", res)
	}
	res = resultOf(t, run(t, context.Background(), tools, "echo", map[string]any{"text": "again"}))
	if res.IsError || res.Content != "again" {
		t.Fatalf("next call: %+v; want it to reconnect and succeed", res)
	}
	if n := f.dials.Load(); n != 2 {
		t.Errorf("dialled %d times; want 2 (one reconnection)", n)
	}
}

func TestAFailedReconnectionFailsThatCallOnly(t *testing.T) {
	f := newFake(t, nil)
	fail := make(chan bool, 1)
	inner := f.dialer()
	dial := func(ctx context.Context) (mcp.Transport, error) {
		select {
		case <-fail:
			return nil, errors.New("no route to the server")
		default:
			return inner(ctx)
		}
	}
	logs := newLogSignal()
	s, err := mcptools.NewServer(dial, mcptools.ServerOptions{Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ss := recv(t, f.sessions, "the first session")
	ss.Close()
	logs.waitLog(t, "mcptools: session ended")
	fail <- true
	res := resultOf(t, run(t, context.Background(), tools, "echo", map[string]any{"text": "x"}))
	if !res.IsError || !strings.Contains(res.Content, "no route to the server") {
		t.Fatalf("call while the server is unreachable: %+v; want the dial error", res)
	}
	res = resultOf(t, run(t, context.Background(), tools, "echo", map[string]any{"text": "back"}))
	if res.IsError || res.Content != "back" {
		t.Fatalf("next call: %+v; want a new connection", res)
	}
}

func TestCloseEndsTheSessionAndLaterUsesFail(t *testing.T) {
	f := newFake(t, nil)
	s, err := mcptools.NewServer(f.dialer(), mcptools.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ss := recv(t, f.sessions, "the session")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ss.Wait() // returns because the client closed the connection
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Tools(context.Background()); !errors.Is(err, mcptools.ErrClosed) {
		t.Errorf("Tools after Close: %v; want ErrClosed", err)
	}
	res := resultOf(t, run(t, context.Background(), tools, "echo", map[string]any{"text": "x"}))
	if !res.IsError || !errors.Is(res.Err, mcptools.ErrClosed) {
		t.Errorf("call after Close: %+v; want an ErrClosed error result", res)
	}
}

func TestConcurrentCallsGetTheirOwnProgress(t *testing.T) {
	f := newFake(t, nil)
	tools, err := newServer(t, f, mcptools.ServerOptions{}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	model := simtestModelWithCalls(
		callSpec{"a", "steps", stepArgs{Steps: 2, Hold: true}},
		callSpec{"b", "steps", stepArgs{Steps: 4, Hold: true}},
	)
	agent := &agentloop.Agent{Model: model, Tools: tools}
	counts := map[string]int{}
	for item, err := range agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("go")}, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := item.(agentloop.ToolProgress); ok {
			counts[p.CallID]++
			if counts["a"]+counts["b"] == 6 {
				close(f.finish)
			}
		}
	}
	if counts["a"] != 2 || counts["b"] != 4 {
		t.Fatalf("progress per call = %v; want a:2 b:4", counts)
	}
}

// A tool whose schema the validator cannot check (here draft-04) makes Tools
// fail with an error that names the tool and the way out; the filter leaves
// it out and the other tools are offered.
func TestAToolWithASchemaThatDoesNotCompileIsNamedAndCanBeFilteredOut(t *testing.T) {
	f := newFake(t, nil)
	f.srv.AddTool(&mcp.Tool{Name: "old", Description: "A draft-04 schema.", InputSchema: map[string]any{
		"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
	}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	_, err := newServer(t, f, mcptools.ServerOptions{}).Tools(t.Context())
	require.ErrorContains(t, err, `tool "old" cannot be offered (leave it out with ServerOptions.Filter)`)
	require.ErrorContains(t, err, "draft-04")

	tools, err := newServer(t, f, mcptools.ServerOptions{Filter: func(tool *mcp.Tool) bool { return tool.Name != "old" }}).Tools(t.Context())
	require.NoError(t, err)
	assert.NotContains(t, toolNames(tools), "old")
	assert.NotEmpty(t, tools)
}
