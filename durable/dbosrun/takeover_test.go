package dbosrun_test

import (
	"context"
	"log/slog"
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

// What a live replica's takeover of a dead one's run would build on
// (design §21.2): Launch in a process with another executor id does not
// recover the dead executor's PENDING run, and dbos.ResumeWorkflow on it
// enqueues it on DBOS's internal queue, from which the live process runs
// it to its end, without repeating the completed steps.
func TestTakeover_ResumeWorkflowRunsADeadExecutorsPendingRunInAnotherExecutor(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			marksPath := filepath.Join(t.TempDir(), "marks")
			crashChild(t, b, marksPath, "")

			ctx := context.Background()
			d, err := dbos.NewContext(ctx, dbos.Config{AppName: "agentloop-dbosrun-test", DatabaseURL: b.url, DatabaseSchema: b.schema,
				ExecutorID: "another", Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			t.Cleanup(func() { _ = dbos.Shutdown(d, 10*time.Second) })
			ended := make(chan agentloop.Item, 1)
			_, err = dbosrun.New(d, enginetest.MarkingAgent(marksPath, nil), dbosrun.Options{OnItem: func(_ string, it agentloop.Item, err error) {
				if err != nil || it == nil {
					ended <- nil
				} else if f, ok := it.(agentloop.Final); ok {
					ended <- f
				}
			}})
			require.NoError(t, err)
			require.NoError(t, dbos.Launch(d))

			st, err := dbos.ListWorkflows(d, dbos.WithFilterWorkflowIDs(crashRun.ID))
			require.NoError(t, err)
			require.Len(t, st, 1)
			assert.Equal(t, dbos.WorkflowStatusPending, st[0].Status, "Launch of another executor leaves the run")
			assert.Equal(t, "local", st[0].ExecutorID)

			_, err = dbos.ResumeWorkflow[any](d, crashRun.ID)
			require.NoError(t, err)
			f, ok := (<-ended).(agentloop.Final)
			require.True(t, ok, "the resumed run ends with its answer")
			assert.Equal(t, "done", f.Text)
			got := enginetest.Marks(t, marksPath)
			for line, n := range got {
				if line[:6] == "tool b" {
					assert.Equal(t, 2, n, line) // in flight at the kill
				} else {
					assert.Equal(t, 1, n, line)
				}
			}
			st, err = dbos.ListWorkflows(d, dbos.WithFilterWorkflowIDs(crashRun.ID))
			require.NoError(t, err)
			require.Len(t, st, 1)
			assert.Equal(t, "another", st[0].ExecutorID, "the run moved to the live executor")
		})
	}
}
