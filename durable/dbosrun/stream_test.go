package dbosrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/dbosrun"
	"github.com/agentloop/agentloop/durable/internal/enginetest"
)

// launch starts DBOS on SQLite in the test's temp dir with one runner.
func launch(t *testing.T, agent *agentloop.Agent, opts dbosrun.Options) (dbos.Context, *dbosrun.Runner) {
	t.Helper()
	d, err := openDBOS(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "dbos.db"), "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = dbos.Shutdown(d, 10*time.Second) })
	r, err := dbosrun.New(d, agent, opts)
	require.NoError(t, err)
	require.NoError(t, dbos.Launch(d))
	return d, r
}

func collect(t *testing.T, seq iter.Seq2[agentloop.Item, error]) ([]agentloop.Item, error) {
	t.Helper()
	var items []agentloop.Item
	for it, err := range seq {
		if err != nil {
			return items, err
		}
		items = append(items, it)
	}
	return items, nil
}

// toolAgent's model calls "echo" twice in its first turn, then answers.
func toolAgent(t *testing.T, maxTurns int) *agentloop.Agent {
	t.Helper()
	echo, err := agentloop.NewRawTool("echo", "Echoes.", nil, func(ctx context.Context, args json.RawMessage) (string, error) {
		return string(args), nil
	})
	require.NoError(t, err)
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			var chunks []agentloop.Chunk
			if enginetest.Replies(req) == 0 {
				chunks = []agentloop.Chunk{agentloop.TextDelta{Text: "calling"},
					agentloop.ToolCall{Name: "echo", Args: json.RawMessage(`{"n":1}`)},
					agentloop.ToolCall{Name: "echo", Args: json.RawMessage(`{"n":2}`)}}
			} else {
				chunks = []agentloop.Chunk{agentloop.TextDelta{Text: "an "}, agentloop.TextDelta{Text: "answer"}}
			}
			for _, c := range chunks {
				if !yield(c, nil) {
					return
				}
			}
		}
	})
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{echo}, MaxTurns: maxTurns}
}

func TestStream_OfARunThatEndedYieldsItsRecordedOutcome(t *testing.T) {
	_, r := launch(t, toolAgent(t, 1), dbosrun.Options{}) // one turn: the run hits the turn limit
	run := dbosrun.Run{ID: "limit", History: agentloop.History{agentloop.UserMessage("go")}}
	_, live := collect(t, r.Stream(context.Background(), run))
	var le *agentloop.TurnLimitError
	require.ErrorAs(t, live, &le)

	run.History = agentloop.History{agentloop.UserMessage("ignored: the run exists")}
	items, recorded := collect(t, r.Stream(context.Background(), run))
	assert.Empty(t, items, "an ended run yields only its outcome")
	var re *agentloop.TurnLimitError
	require.ErrorAs(t, recorded, &re)
	assert.ErrorIs(t, recorded, agentloop.ErrTurnLimit)
	assert.Equal(t, le.Limit, re.Limit)
	if d := cmp.Diff(le.History, re.History, cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) })); d != "" {
		t.Errorf("recorded history (-live +recorded):\n%s", d)
	}
}

func TestStream_TheRunGoesOnWhenTheConsumerStops(t *testing.T) {
	ended := make(chan agentloop.Final, 1)
	_, r := launch(t, toolAgent(t, 0), dbosrun.Options{OnItem: func(id string, it agentloop.Item, err error) {
		if f, ok := it.(agentloop.Final); ok {
			ended <- f
		}
	}})
	run := dbosrun.Run{ID: "stop", History: agentloop.History{agentloop.UserMessage("go")}}
	for it, err := range r.Stream(context.Background(), run) {
		require.NoError(t, err)
		if _, ok := it.(agentloop.TurnStart); ok {
			break
		}
	}
	f := <-ended
	assert.Equal(t, "an answer", f.Text)
	last, err := agentloop.Drain(r.Stream(context.Background(), run))
	require.NoError(t, err)
	assert.Equal(t, "an answer", last.(agentloop.Final).Text)
}

func TestStream_RefusesARunWithoutIDAndASecondStreamOfARunInProcess(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	wait, err := agentloop.NewRawTool("wait", "Waits.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-release
		return "ok", nil
	})
	require.NoError(t, err)
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if enginetest.Replies(req) == 0 {
				yield(agentloop.ToolCall{Name: "wait", Args: json.RawMessage(`{}`)}, nil)
				return
			}
			yield(agentloop.TextDelta{Text: "ok"}, nil)
		}
	})
	_, r := launch(t, &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{wait}}, dbosrun.Options{})

	_, err = agentloop.Drain(r.Stream(context.Background(), dbosrun.Run{}))
	require.ErrorContains(t, err, "Run.ID is empty")

	run := dbosrun.Run{ID: "twice", History: agentloop.History{agentloop.UserMessage("go")}}
	first := make(chan error, 1)
	go func() {
		_, err := agentloop.Drain(r.Stream(context.Background(), run))
		first <- err
	}()
	<-started
	_, err = agentloop.Drain(r.Stream(context.Background(), run))
	require.ErrorContains(t, err, `run "twice" already has a Stream attached`)
	close(release)
	require.NoError(t, <-first)
}

func TestNew_RefusesTwoRunnersOfOneNameAndARunnerAfterLaunch(t *testing.T) {
	d, err := openDBOS(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "dbos.db"), "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = dbos.Shutdown(d, 10*time.Second) })
	agent := toolAgent(t, 0)
	_, err = dbosrun.New(d, agent, dbosrun.Options{Name: "a"})
	require.NoError(t, err)
	_, err = dbosrun.New(d, agent, dbosrun.Options{Name: "b"})
	require.NoError(t, err, "runners of different names")
	_, err = dbosrun.New(d, agent, dbosrun.Options{Name: "a"})
	require.ErrorContains(t, err, `dbosrun: registering runner "a"`)
	require.NoError(t, dbos.Launch(d))
	_, err = dbosrun.New(d, agent, dbosrun.Options{Name: "c"})
	require.Error(t, err)
	_, err = dbosrun.New(d, nil, dbosrun.Options{})
	require.Error(t, err)
	require.False(t, errors.Is(err, context.Canceled))
}
