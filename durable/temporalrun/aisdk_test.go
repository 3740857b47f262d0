package temporalrun_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/durable/temporalrun"
	"github.com/agentloop/agentloop/store/memstore"
)

// A Runner is an aisdk.Runner: a ChatServer runs its runs as Temporal
// workflows.
var _ aisdk.Runner = (*temporalrun.Runner)(nil)

func TestRealServer_AChatServerOnTemporalAnswersAChatEndToEndAndRunsEachToolCallOnce(t *testing.T) {
	c, _ := realServer(t)
	var calls atomic.Int32
	agent := weatherAgent(&calls)
	st := memstore.New(memstore.Options{})
	t.Cleanup(func() { _ = st.Close() })
	chat := &aisdk.ChatServer{Agent: agent, Store: st, Logger: slog.New(slog.DiscardHandler), KeepAlive: -1}
	r, err := temporalrun.New(agent, temporalrun.Options{TaskQueue: unique(t, "queue"), Client: c, OnItem: chat.RunItem})
	require.NoError(t, err)
	chat.Runner = r
	startWorker(t, c, r)
	require.NoError(t, chat.Validate())
	srv := httptest.NewServer(chat.Routes("/api"))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { assert.NoError(t, chat.Shutdown(context.Background())) })

	client := &aisdktest.ChatClient{URL: srv.URL + "/api/chat", ChatID: unique(t, "chat")}
	msgs, err := client.Send(context.Background(), "weather?")
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	var text string
	for _, p := range msgs[1].Parts {
		text += p.Text
	}
	assert.Contains(t, text, "Sunny in both.")

	saved, err := st.GetChat(context.Background(), client.ChatID)
	require.NoError(t, err)
	end := saved.History[len(saved.History)-1]
	assert.Equal(t, agentloop.RoleAssistant, end.Role)
	assert.Equal(t, "Sunny in both.", end.Text())
	assert.Equal(t, int32(2), calls.Load(), "each tool call runs once")
}

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
	r, err := temporalrun.New(markingAgent(filepath.Join(t.TempDir(), "marks"), blocked),
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
