package aisdk_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/aisdk/internal/servetest"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
)

// changeAtStart is a store that, the first time a request asks for a
// chat's stream, first runs change: a write of the chat that lands between
// the request's first check and its stop of the run in progress.
type changeAtStart struct {
	aisdk.ChatStore
	once   sync.Once
	change func()
}

func (s *changeAtStart) StartStream(ctx context.Context, chatID string, lease time.Duration) (store.Lease, error) {
	s.once.Do(s.change)
	return s.ChatStore.StartStream(ctx, chatID, lease)
}

// Issue 21: a request that passed its first check could stop the run in
// progress and then be refused (409) by the check it makes once it holds
// the chat, when the chat changed in between (the run, or the request that
// started it, saved). The request checks again before it stops the run: a
// request refused then stops nothing.
func TestStored_ARequestThatNoLongerFitsTheChatWhenItWouldStopTheRunStopsNothing(t *testing.T) {
	ctx := context.Background()
	mem := newStore(t)
	first := servetest.NewReplica(t, mem, simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("One.")}}))
	client := &aisdktest.ChatClient{URL: first.ChatURL(), ChatID: "c"}
	_, err := client.Send(ctx, "first")
	require.NoError(t, err)

	// A run of the chat is in progress, from another request; it ends when
	// asked to stop.
	running, err := mem.StartStream(ctx, "c", time.Minute)
	require.NoError(t, err)
	go func() {
		if mem.WaitStop(ctx, running) == nil {
			_ = mem.EndStream(ctx, running, store.StreamCancelled)
		}
	}()
	t.Cleanup(func() { _ = mem.EndStream(ctx, running, store.StreamDone) })

	// Between the request's first check and its stop, the chat becomes one
	// the request does not fit (another client edited the first message).
	st := &changeAtStart{ChatStore: mem, change: func() {
		c, err := mem.GetChat(ctx, "c")
		require.NoError(t, err)
		c.History = agentloop.History{{ID: "other", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("edited elsewhere")}}}
		require.NoError(t, mem.PutChat(ctx, c))
	}}
	r := servetest.NewReplica(t, st, simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Two.")}}))
	client.URL = r.ChatURL()
	_, err = client.Send(ctx, "second")
	var he *aisdktest.HTTPStatusError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.StatusConflict, he.Status)

	s, err := mem.ActiveStream(ctx, "c")
	if errors.Is(err, store.ErrNotFound) {
		t.Fatal("the refused request stopped the run in progress")
	}
	require.NoError(t, err)
	assert.Equal(t, running.StreamID, s.ID)
	assert.False(t, s.StopRequested, "the refused request asked the run to stop")
}
