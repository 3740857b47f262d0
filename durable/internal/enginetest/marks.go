package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

// Replies counts the assistant messages of req. A scripted model that
// plays its script by it continues a run in any process and after any
// replay, as a real model answers the conversation it is sent.
func Replies(req *agentloop.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == agentloop.RoleAssistant {
			n++
		}
	}
	return n
}

// Mark appends line to the marks file at path, creating it if needed: a
// record of calls that outlives a killed process. Concurrent marks of
// lines shorter than the system's pipe buffer do not interleave.
func Mark(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("enginetest: marking: %w", err)
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		f.Close()
		return fmt.Errorf("enginetest: marking: %w", err)
	}
	return f.Close()
}

// Marks reads the marks file at path: how often each line was marked. It
// fails tb if the file cannot be read.
func Marks(tb testing.TB, path string) map[string]int {
	tb.Helper()
	b, err := os.ReadFile(path)
	require.NoError(tb, err)
	n := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		n[l]++
	}
	return n
}

// MarkingAgent's model calls tool a, then tool b, then answers "done";
// every model call ("model <n>", n its [Replies]) and tool call ("tool
// <name> <the first 8 characters of its idempotency key>") leaves a [Mark]
// in the file at marksPath, so that a test sees the calls of every process
// that ran the run. When blocked is not nil, b closes it and then blocks
// until its context is done: an engine's crash test kills the process
// there. A mark that cannot be written fails the call.
func MarkingAgent(marksPath string, blocked chan struct{}) *agentloop.Agent {
	tool := func(name string) *agentloop.Tool {
		t, err := agentloop.NewRawTool(name, "Marks.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
			if err := Mark(marksPath, "tool "+name+" "+agentloop.IdempotencyKey(ctx)[:8]); err != nil {
				return "", err
			}
			if name == "b" && blocked != nil {
				close(blocked)
				<-ctx.Done()
				return "", ctx.Err()
			}
			return name + " done", nil
		})
		if err != nil {
			panic(err) // the names are valid
		}
		return t
	}
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			n := Replies(req)
			if err := Mark(marksPath, fmt.Sprintf("model %d", n)); err != nil {
				yield(nil, err)
				return
			}
			switch n {
			case 0:
				yield(call("a", `{}`), nil)
			case 1:
				yield(call("b", `{}`), nil)
			default:
				yield(agentloop.TextDelta{Text: "done"}, nil)
			}
		}
	})
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool("a"), tool("b")}}
}
