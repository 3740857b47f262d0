package dbosrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/dbosrun"
	"github.com/agentloop/agentloop/durable/internal/enginetest"
)

// helperMarkingAgent's lead calls its helper sub-agent (an AgentTool,
// which answers at once), then tool b, then answers "done"; every model
// and tool call leaves a mark. The lead's calls use 1 input and 1 output
// token each, the helper's 7 and 2. When blocked is not nil, b closes it
// and then blocks until its context is done.
func helperMarkingAgent(marksPath string, blocked chan struct{}) *agentloop.Agent {
	b, err := agentloop.NewRawTool("b", "Marks.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		if err := enginetest.Mark(marksPath, "tool b"); err != nil {
			return "", err
		}
		if blocked != nil {
			close(blocked)
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "b done", nil
	})
	if err != nil {
		panic(err)
	}
	sub := &agentloop.Agent{Name: "helper", Model: agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if err := enginetest.Mark(marksPath, "helper model"); err != nil {
				yield(nil, err)
				return
			}
			if yield(agentloop.TextDelta{Text: "helped"}, nil) {
				yield(agentloop.Usage{Input: 7, Output: 2}, nil)
			}
		}
	})}
	helper, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	if err != nil {
		panic(err)
	}
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{helper, b},
		Model: agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				n := enginetest.Replies(req)
				if err := enginetest.Mark(marksPath, fmt.Sprintf("lead model %d", n)); err != nil {
					yield(nil, err)
					return
				}
				switch n {
				case 0:
					yield(agentloop.ToolCall{Name: "helper", Args: json.RawMessage(`{"task":"help"}`)}, nil)
				case 1:
					yield(agentloop.ToolCall{Name: "b", Args: json.RawMessage(`{}`)}, nil)
				default:
					yield(agentloop.TextDelta{Text: "done"}, nil)
				}
				yield(agentloop.Usage{Input: 1, Output: 1}, nil)
			}
		})}
}

// A process killed (SIGKILL) after an agent tool's step completed: the
// next process recovers the run, replaying that step without its sub-run's
// items, and the run ends with the usage, in all and per agent, of the
// same run in process, which never stopped.
func TestNested_ARunRecoveredPastASubAgentsStepAfterACrashCountsItsUsage(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			want, err := agentloop.Drain(helperMarkingAgent(filepath.Join(t.TempDir(), "marks"), nil).Stream(context.Background(), crashRun.History, nil))
			require.NoError(t, err)
			inProcess := want.(agentloop.Final)
			require.Equal(t, map[string]agentloop.Usage{"lead": {Input: 3, Output: 3}, "helper": {Input: 7, Output: 2}}, inProcess.AgentUsage)

			marksPath := filepath.Join(t.TempDir(), "marks")
			crashChild(t, b, marksPath, "helper")
			ctx := context.Background()
			d, err := openDBOS(ctx, b.url, b.schema)
			require.NoError(t, err)
			t.Cleanup(func() { _ = dbos.Shutdown(d, 10*time.Second) })
			r, err := dbosrun.New(d, helperMarkingAgent(marksPath, nil), dbosrun.Options{})
			require.NoError(t, err)
			require.NoError(t, dbos.Launch(d))
			last, err := agentloop.Drain(r.Stream(ctx, crashRun))
			require.NoError(t, err)
			f, ok := last.(agentloop.Final)
			require.Truef(t, ok, "last item %T", last)
			assert.Equal(t, map[string]int{"lead model 0": 1, "helper model": 1, "lead model 1": 1, "tool b": 2, "lead model 2": 1},
				enginetest.Marks(t, marksPath), "the helper's step ran once, before the crash")
			assert.Equal(t, inProcess.Usage, f.Usage)
			assert.Equal(t, inProcess.AgentUsage, f.AgentUsage)
		})
	}
}
