package dbosrun_test

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/dbosrun"
	"github.com/agentloop/agentloop/durable/internal/enginetest"
)

// dbosHarness is one test's DBOS database (of b's kind, a file or a
// schema of its own) and the process (DBOS context) that runs on it.
type dbosHarness struct {
	tb testing.TB
	b  backend
	d  dbos.Context // the current process; nil before the first Open
}

func newDBOSHarness(tb testing.TB, kind backend) enginetest.Harness {
	h := &dbosHarness{tb: tb, b: freshBackend(tb, kind)}
	tb.Cleanup(func() {
		if h.d != nil {
			_ = dbos.Shutdown(h.d, 10*time.Second)
		}
	})
	return h
}

// Open shuts the current process down and launches another on the same
// database with one runner of agent: DBOS recovers what it left.
func (h *dbosHarness) Open(agent *agentloop.Agent, onItem enginetest.OnItem) enginetest.Runner {
	h.tb.Helper()
	if h.d != nil {
		require.NoError(h.tb, dbos.Shutdown(h.d, 10*time.Second))
		h.d = nil
	}
	d, err := openDBOS(context.Background(), h.b.url, h.b.schema)
	require.NoError(h.tb, err)
	h.d = d
	r, err := dbosrun.New(d, agent, dbosrun.Options{OnItem: onItem})
	require.NoError(h.tb, err)
	require.NoError(h.tb, dbos.Launch(d))
	return dbosRunner{r}
}

type dbosRunner struct{ *dbosrun.Runner }

func (r dbosRunner) Stream(ctx context.Context, runID, conversationID string, h agentloop.History) iter.Seq2[agentloop.Item, error] {
	return r.Runner.Stream(ctx, dbosrun.Run{ID: runID, ConversationID: conversationID, History: h})
}

// dbosReplay forks the ended run from the step after its last (or after
// afterTool's last step), as a recovery replays a run from its record.
func dbosReplay(tb testing.TB, eh enginetest.Harness, runID, afterTool string) string {
	tb.Helper()
	d := eh.(*dbosHarness).d
	steps, err := dbos.GetWorkflowSteps(d, runID)
	require.NoError(tb, err)
	start := len(steps)
	if afterTool != "" {
		start = -1
		for _, s := range steps {
			if s.StepName == "agentloop.tool/"+afterTool {
				start = s.StepID + 1
			}
		}
		require.Positive(tb, start, "the step of tool %s: %+v", afterTool, steps)
	}
	id := runID + "-replay"
	_, err = dbos.ForkWorkflow[any](d, dbos.ForkWorkflowInput{OriginalWorkflowID: runID, ForkedWorkflowID: id, StartStep: uint(start)})
	require.NoError(tb, err)
	return id
}

// The durable engines' conformance suite, on SQLite and PostgreSQL: a
// replay is a fork of the run from after its recorded steps, a restart a
// new DBOS context on the same database.
func TestConformance(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			enginetest.Run(t, func(tb testing.TB) enginetest.Harness { return newDBOSHarness(tb, b) },
				enginetest.Options{Replay: dbosReplay})
		})
	}
}
