package mcptools_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/mcptools"
	"github.com/agentloop/agentloop/simtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitFor bounds the wait for something a test expects to happen; reaching
// it is a failure, not a pass.
const waitFor = 10 * time.Second

// fake is an in-process MCP server with tools for each behaviour under
// test, and channels that show what it saw.
type fake struct {
	srv *mcp.Server

	started   chan *mcp.ServerSession // the session of each "hang" call that started
	cancelled chan string             // "hang" for each hang call whose ctx ended
	release   chan struct{}           // ends every hang call
	finish    chan struct{}           // ends every held steps call
	dials     atomic.Int32
	sessions  chan *mcp.ServerSession // the session of each tools/list
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type stepArgs struct {
	Steps   int `json:"steps"`
	DelayMS int `json:"delayMs"`
	// Hold makes the call wait for fake.finish after its last progress, so
	// that a test can see all of it before the result: the MCP SDK
	// delivers notifications on another goroutine than responses, so
	// progress sent right before a result may come after it.
	Hold bool `json:"hold"`
}

func newFake(t *testing.T, opts *mcp.ServerOptions) *fake {
	t.Helper()
	f := &fake{
		started:   make(chan *mcp.ServerSession, 16),
		cancelled: make(chan string, 16),
		release:   make(chan struct{}),
		finish:    make(chan struct{}),
		sessions:  make(chan *mcp.ServerSession, 16),
	}
	f.srv = mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "v1"}, opts)
	f.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "tools/list" {
				select {
				case f.sessions <- ss:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})

	mcp.AddTool(f.srv, &mcp.Tool{Name: "echo", Description: "Echoes its text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	type weather struct {
		City string  `json:"city"`
		Temp float64 `json:"temp"`
	}
	mcp.AddTool(f.srv, &mcp.Tool{Name: "weather", Description: "Structured weather."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			City string `json:"city"`
		}) (*mcp.CallToolResult, weather, error) {
			return nil, weather{City: in.City, Temp: 21.5}, nil
		})
	mcp.AddTool(f.srv, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the disk is full")
		})
	mcp.AddTool(f.srv, &mcp.Tool{Name: "mixed", Description: "Text, an image and a resource."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "here you go"},
				&mcp.ImageContent{Data: []byte("PNGDATA"), MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "inside"}},
				&mcp.ResourceLink{URI: "file:///b.bin", Name: "b.bin"},
			}}, nil, nil
		})
	mcp.AddTool(f.srv, &mcp.Tool{Name: "big", Description: "A long result."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("é", 1000)}}}, nil, nil
		})
	mcp.AddTool(f.srv, &mcp.Tool{Name: "steps", Description: "Reports progress at each step."},
		func(ctx context.Context, req *mcp.CallToolRequest, in stepArgs) (*mcp.CallToolResult, any, error) {
			for i := 1; i <= in.Steps; i++ {
				if in.DelayMS > 0 {
					select {
					case <-time.After(time.Duration(in.DelayMS) * time.Millisecond): // the work the step stands for
					case <-ctx.Done():
						return nil, nil, ctx.Err()
					}
				}
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(),
					Progress:      float64(i), Total: float64(in.Steps),
					Message: fmt.Sprintf("step %d", i),
				})
				if err != nil {
					return nil, nil, err
				}
			}
			if in.Hold {
				select {
				case <-f.finish:
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d steps done", in.Steps)}}}, nil, nil
		})
	mcp.AddTool(f.srv, &mcp.Tool{Name: "hang", Description: "Runs until cancelled or released."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			f.started <- req.Session
			select {
			case <-ctx.Done():
				f.cancelled <- "hang"
				return nil, nil, ctx.Err()
			case <-f.release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
			}
		})
	return f
}

// dialer connects to the fake in memory, counting connections.
func (f *fake) dialer() mcptools.Dialer {
	inner := mcptools.InMemory(f.srv)
	return func(ctx context.Context) (mcp.Transport, error) {
		f.dials.Add(1)
		return inner(ctx)
	}
}

// newServer returns a mcptools.Server for the fake, closed at the end of
// the test.
func newServer(t *testing.T, f *fake, opts mcptools.ServerOptions) *mcptools.Server {
	t.Helper()
	s, err := mcptools.NewServer(f.dialer(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func toolNames(tools []*agentloop.Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

func findTool(t *testing.T, tools []*agentloop.Tool, name string) *agentloop.Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %q among %v", name, toolNames(tools))
	return nil
}

// run has a scripted model call one tool with args, then answer "done",
// and returns the run's items.
func run(t *testing.T, ctx context.Context, tools []*agentloop.Tool, name string, args any) []agentloop.Item {
	t.Helper()
	items, err := runErr(t, ctx, tools, name, args, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return items
}

// runErr is run for a run that may fail: it returns the run's error (one
// that carries a history) with the items before it.
// onItem, if non-nil, sees each item as it comes.
func runErr(t *testing.T, ctx context.Context, tools []*agentloop.Tool, name string, args any, onItem func(agentloop.Item)) ([]agentloop.Item, error) {
	t.Helper()
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_1", name, args)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("done")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: tools}
	var items []agentloop.Item
	for item, err := range agent.Stream(ctx, agentloop.History{agentloop.UserMessage("go")}, nil) {
		if err != nil {
			if _, ok := agentloop.HistoryOf(err); !ok {
				t.Fatalf("run: %v", err)
			}
			return items, err
		}
		if onItem != nil {
			onItem(item)
		}
		items = append(items, item)
	}
	return items, nil
}

func resultOf(t *testing.T, items []agentloop.Item) agentloop.ToolResult {
	t.Helper()
	for _, it := range items {
		if r, ok := it.(agentloop.ToolResultReady); ok {
			return r.Result
		}
	}
	t.Fatalf("no tool result among %d items", len(items))
	return agentloop.ToolResult{}
}

func progressOf(items []agentloop.Item) []string {
	var out []string
	for _, it := range items {
		if p, ok := it.(agentloop.ToolProgress); ok {
			out = append(out, p.Content)
		}
	}
	return out
}

// recv returns the next value of ch, failing the test if none comes.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitFor):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// runHeld runs a held steps call (stepArgs.Hold) and lets it finish once
// its last progress item came.
func runHeld(t *testing.T, f *fake, tools []*agentloop.Tool, args stepArgs) []agentloop.Item {
	t.Helper()
	args.Hold = true
	seen := 0
	items, err := runErr(t, context.Background(), tools, "steps", args, func(it agentloop.Item) {
		if _, ok := it.(agentloop.ToolProgress); ok {
			if seen++; seen == args.Steps {
				close(f.finish)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

type callSpec struct {
	id, name string
	args     any
}

// simtestModelWithCalls returns a model that makes the calls in one turn,
// then answers "done".
func simtestModelWithCalls(calls ...callSpec) *simtest.Model {
	var steps []simtest.Step
	for _, c := range calls {
		steps = append(steps, simtest.Call(c.id, c.name, c.args))
	}
	return simtest.NewModel(simtest.Turn{Reply: steps}, simtest.Turn{Reply: []simtest.Step{simtest.Text("done")}})
}

// logSignal is a slog.Handler that sends the message of every record on a
// channel, so a test can wait for something the package only logs.
type logSignal struct {
	mu   *sync.Mutex
	msgs chan string
}

func newLogSignal() *logSignal { return &logSignal{mu: new(sync.Mutex), msgs: make(chan string, 64)} }

func (h *logSignal) Enabled(context.Context, slog.Level) bool { return true }
func (h *logSignal) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.msgs <- r.Message:
	default:
	}
	return nil
}
func (h *logSignal) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logSignal) WithGroup(string) slog.Handler      { return h }

// waitLog waits for a record with message msg.
func (h *logSignal) waitLog(t *testing.T, msg string) {
	t.Helper()
	for {
		if recv(t, h.msgs, "log "+msg) == msg {
			return
		}
	}
}
