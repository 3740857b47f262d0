package temporalrun_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/durable/internal/enginetest"
	"github.com/agentloop/agentloop/durable/temporalrun"
)

// A Runner is an aisdk.Runner: a ChatServer runs its runs as Temporal
// workflows.
var _ aisdk.Runner = (*temporalrun.Runner)(nil)

func TestStart_NeedsAClientAndRefusesOptionsItCannotRecord(t *testing.T) {
	agent := weatherAgent(new(atomic.Int32))
	r, err := temporalrun.New(agent, temporalrun.Options{TaskQueue: "q"})
	require.NoError(t, err)
	h := agentloop.History{agentloop.UserMessage("hi")}
	require.ErrorContains(t, r.Start(context.Background(), "c/s", "c", h, nil), "Options.Client")
	require.ErrorContains(t, r.Start(context.Background(), "c/s", "c", h, &agentloop.RunOptions{Hooks: &agentloop.Hooks{}}), "cannot be recorded")
	require.ErrorContains(t, r.Start(context.Background(), "c/s", "c", h, &agentloop.RunOptions{Tools: agent.Tools}), "only client tools")
	assert.False(t, r.Stop("c/s", nil), "a run that no worker of this process executes is not stopped")
}

// Stop cancels a run that a worker of this process executes: the run ends
// as a cancelled run, with ErrStopped as the cause, through OnItem.
func TestRealServer_StopEndsARunOfThisProcessAsCancelled(t *testing.T) {
	c, _ := realServer(t)
	blocked := make(chan struct{})
	ended := make(chan error, 1)
	onItem := func(_ string, _ agentloop.Item, err error) {
		if err != nil {
			ended <- err
		}
	}
	r, err := temporalrun.New(enginetest.MarkingAgent(filepath.Join(t.TempDir(), "marks"), blocked),
		temporalrun.Options{TaskQueue: unique(t, "queue"), Client: c, OnItem: onItem, Heartbeat: 3 * time.Second})
	require.NoError(t, err)
	startWorker(t, c, r)
	id := unique(t, "run")
	require.NoError(t, r.Start(context.Background(), id, "c", agentloop.History{agentloop.UserMessage("go")}, nil))
	<-blocked
	require.True(t, r.Stop(id, errors.New("the user pressed stop")))
	err = <-ended
	require.ErrorIs(t, err, agentloop.ErrCancelled)
	require.ErrorIs(t, err, temporalrun.ErrStopped)
}
