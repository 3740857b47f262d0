package aisdk_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
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

// These tests pin Drain: no new run starts, the runs in progress finish,
// and Shutdown after it ends what is left.

// gatedScript says it works, waits at the gate ("g"), then answers.
func gatedScript() []simtest.Turn {
	return []simtest.Turn{
		{Reply: []simtest.Step{simtest.Text("Working on it."), simtest.Call("g", "wait_for_it", map[string]string{})}},
		{Reply: []simtest.Step{simtest.Text("All done.")}},
	}
}

// cancelled returns a context that is done already: Drain with it only
// refuses new runs and reports whether any is in progress.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// postChat posts a new chat to url and returns the response's status and
// Retry-After header.
func postChat(t *testing.T, url, chatID string) (int, string) {
	t.Helper()
	body := `{"id":"` + chatID + `","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Hi"}]}]}`
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// sendAsync sends text on c in a goroutine; the channel gets Send's error.
func sendAsync(c *aisdktest.ChatClient, text string) <-chan error {
	sent := make(chan error, 1)
	go func() {
		_, err := c.Send(context.Background(), text)
		sent <- err
	}()
	return sent
}

// drainAsync calls Drain(context.Background()) in a goroutine; the channel
// gets its error.
func drainAsync(drain func(context.Context) error) <-chan error {
	drained := make(chan error, 1)
	go func() { drained <- drain(context.Background()) }()
	return drained
}

func TestDrain_ARunInProgressFinishesWhileNewChatsAreRefusedAndFollowersFollow(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open()
	r := servetest.NewReplica(t, st, simtest.NewModel(gatedScript()...), g.Tool)
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	sent := sendAsync(client, "Go")
	<-g.Started

	// Drain began: with its context done, it says a run is in progress.
	require.ErrorIs(t, r.Server.Drain(cancelled()), context.Canceled)
	status, retry := postChat(t, r.ChatURL(), "d")
	assert.Equal(t, http.StatusServiceUnavailable, status, "a new chat during the drain")
	assert.Equal(t, "1", retry)

	// A follower of the run in progress is served.
	var once sync.Once
	following := make(chan struct{})
	follower := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", OnChunk: func(_ int, data json.RawMessage) {
		if isChunk(data, "tool-input-available", "g") {
			once.Do(func() { close(following) })
		}
	}}
	resumed := make(chan error, 1)
	go func() {
		ok, err := follower.Resume(context.Background())
		assert.True(t, ok, "the follower found no run in progress")
		resumed <- err
	}()
	<-following

	drained := drainAsync(r.Server.Drain)
	select {
	case err := <-drained:
		t.Fatalf("Drain returned %v while the run waits at its gate", err)
	default:
	}
	g.Open()
	require.NoError(t, <-drained)
	require.NoError(t, <-sent)
	require.NoError(t, <-resumed)

	msgs := client.Messages()
	require.Len(t, msgs, 2)
	assert.Contains(t, partsText(msgs[1]), "All done.", "the answer is complete")
	assert.Contains(t, partsText(follower.Messages()[len(follower.Messages())-1]), "All done.", "the follower saw the end")
	assert.Equal(t, "All done.", servetest.History(t, st, "c").LastAssistantText())
	assert.Equal(t, aisdk.RunFinished, lastRun(t, r, "c"), "the run finished: it was not stopped nor handed over")
	_, err := st.ActiveStream(context.Background(), "c")
	assert.ErrorIs(t, err, store.ErrNotFound, "the run's stream ended")
}

// partsText returns the text parts of m, joined.
func partsText(m aisdk.UIMessage) string {
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func TestDrain_WhenItsContextEndsFirstShutdownEndsTheRunsLeftAsBefore(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open()
	r := servetest.NewReplica(t, st, simtest.NewModel(gatedScript()...), g.Tool)
	sent := sendAsync(&aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}, "Go")
	<-g.Started

	require.ErrorIs(t, r.Server.Drain(cancelled()), context.Canceled)
	drained := drainAsync(r.Server.Drain) // one that still waits when Shutdown comes
	require.NoError(t, r.Server.Shutdown(context.Background()))
	require.NoError(t, <-drained, "the runs Shutdown ended are no longer in progress")
	<-sent
	_, err := st.ActiveStream(context.Background(), "c")
	assert.ErrorIs(t, err, store.ErrNotFound, "the run's stream is still active after Shutdown")
	res := results(servetest.History(t, st, "c"))
	assert.True(t, res["g"].IsError, "the call cut off by Shutdown is saved as interrupted: %+v", res["g"])
	assert.Equal(t, aisdk.RunStopped, lastRun(t, r, "c"), "Shutdown cancelled the run")
	// And Drain after Shutdown has nothing left to wait for.
	assert.NoError(t, r.Server.Drain(cancelled()))
}

func TestDrain_AStopRequestStillStopsARun(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open()
	r := servetest.NewReplica(t, st, simtest.NewModel(gatedScript()...), g.Tool)
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	sent := sendAsync(client, "Go")
	<-g.Started

	require.ErrorIs(t, r.Server.Drain(cancelled()), context.Canceled)
	drained := drainAsync(r.Server.Drain)
	require.NoError(t, (&aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}).Stop(context.Background()))
	require.NoError(t, <-drained)
	<-sent
	assert.Equal(t, aisdk.RunStopped, lastRun(t, r, "c"))
}

func TestDrain_ReturnsAtOnceWhenNoRunIsInProgress(t *testing.T) {
	t.Run("ChatServer", func(t *testing.T) {
		st := newStore(t)
		r := servetest.NewReplica(t, st, simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Hi.")}}))
		_, err := (&aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}).Send(context.Background(), "Hi")
		require.NoError(t, err)
		assert.NoError(t, r.Server.Drain(cancelled()), "a run that ended is not waited for")
		status, _ := postChat(t, r.ChatURL(), "d")
		assert.Equal(t, http.StatusServiceUnavailable, status, "a new chat after the drain")
		resp, err := http.Get(r.HTTP.URL + "/api/chats/c")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "the chats are served after the drain")
	})
	t.Run("Handler", func(t *testing.T) {
		h := &aisdk.Handler{Agent: &agentloop.Agent{Model: echoModel()}, Logger: slog.New(slog.DiscardHandler)}
		srv := httptest.NewServer(h)
		defer srv.Close()
		assert.NoError(t, h.Drain(cancelled()))
		status, _ := postChat(t, srv.URL, "d")
		assert.Equal(t, http.StatusServiceUnavailable, status)
	})
}

func TestHandler_DrainLetsTheRunInProgressFinish(t *testing.T) {
	g := servetest.NewGate(t)
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: simtest.NewModel(gatedScript()...), Tools: []*agentloop.Tool{g.Tool}},
		Logger: slog.New(slog.DiscardHandler), KeepAlive: -1}
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer g.Open() // first: Close waits for the run
	client := &aisdktest.ChatClient{URL: srv.URL, ChatID: "c"}
	sent := sendAsync(client, "Go")
	<-g.Started

	require.ErrorIs(t, h.Drain(cancelled()), context.Canceled)
	status, retry := postChat(t, srv.URL, "d")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "1", retry)
	drained := drainAsync(h.Drain)
	g.Open()
	require.NoError(t, <-drained)
	require.NoError(t, <-sent)
	msgs := client.Messages()
	require.Len(t, msgs, 2)
	assert.Contains(t, partsText(msgs[1]), "All done.")
	require.NoError(t, h.Shutdown(context.Background()))
}

// With a Runner, the run is the engine's, not its request's: Drain waits
// for it after its client went away and its request ended.
func TestRunner_DrainWaitsForTheRunsTheRunnerExecutesHere(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open()
	f := &fakeRunner{agent: &agentloop.Agent{Model: simtest.NewModel(gatedScript()...), Tools: []*agentloop.Tool{g.Tool}}}
	h := &aisdk.ChatServer{Agent: f.agent, Store: st, Runner: f, Logger: slog.New(slog.DiscardHandler), KeepAlive: -1}
	f.chat = h
	require.NoError(t, h.Validate())
	routes := h.Routes("/api")
	posted := make(chan struct{}, 1) // the chat POST's handler returned
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		routes.ServeHTTP(w, r)
		if r.Method == http.MethodPost && r.URL.Path == "/api/chat" {
			posted <- struct{}{}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		assert.NoError(t, h.Shutdown(context.Background()))
		f.wg.Wait()
	})
	r := servetest.Replica{Server: h, HTTP: srv}

	ctx, drop := context.WithCancel(context.Background())
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	sent := make(chan error, 1)
	go func() {
		_, err := client.Send(ctx, "Go")
		sent <- err
	}()
	<-g.Started
	drop() // the client goes away; the run goes on in the engine
	<-sent
	<-posted

	require.ErrorIs(t, h.Drain(cancelled()), context.Canceled, "the engine's run is in progress")
	status, _ := postChat(t, r.ChatURL(), "d")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	<-posted
	drained := drainAsync(h.Drain)
	g.Open()
	require.NoError(t, <-drained)
	assert.Equal(t, "All done.", servetest.History(t, st, "c").LastAssistantText())
	assert.Equal(t, aisdk.RunFinished, lastRun(t, r, "c"))
	require.Len(t, f.ids, 1)
	s, err := st.GetStream(context.Background(), strings.TrimPrefix(f.ids[0], "c/"))
	require.NoError(t, err)
	assert.Equal(t, store.StreamDone, s.State)
}

// A run of the Runner that lost its stream lease (its chat was deleted, or
// taken over) writes nothing more here, and its end may never come here
// (the engine may have moved it to another process): Drain does not wait
// for it.
func TestRunner_DrainDoesNotWaitForARunThatLostItsLease(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open()
	r, f := newRunnerReplica(t, st, simtest.NewModel(gatedScript()...), g.Tool)
	var gone atomic.Bool
	f.kill = func(agentloop.Item) bool { return gone.Load() } // its end never comes here
	sent := sendAsync(&aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}, "Go")
	<-g.Started

	gone.Store(true)
	req, err := http.NewRequest(http.MethodDelete, r.HTTP.URL+"/api/chats/c", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	<-sent

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound, should Drain wait for it
	defer cancel()
	assert.NoError(t, r.Server.Drain(ctx))
}

// A run that the engine recovers in a draining process is in progress
// there: Drain waits for it, from its first item to its last.
func TestRunner_DrainWaitsForARunRecoveredDuringIt(t *testing.T) {
	st := newStore(t)
	a, fa := newRunnerReplica(t, st, simtest.NewModel(weatherScript()...), jsWeatherTool(t))
	b, fb := newRunnerReplica(t, st, simtest.NewModel(weatherScript()...), jsWeatherTool(t))
	died := make(chan struct{})
	fa.kill = func(it agentloop.Item) bool {
		if _, ok := it.(agentloop.TextDelta); ok {
			close(died) // a dies as its run streams
			return true
		}
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-died
		cancel()
	}()
	_, _ = (&aisdktest.ChatClient{URL: a.ChatURL(), ChatID: "c"}).Send(ctx, "Weather?")
	<-died
	runID := fa.ids[0]

	require.NoError(t, b.Server.Drain(cancelled()), "b runs nothing yet")
	start := agentloop.History{servetest.History(t, st, "c")[0]}
	n := 0
	for it, err := range fb.agent.Stream(context.Background(), start, &agentloop.RunOptions{ConversationID: "c"}) {
		b.Server.RunItem(runID, it, err) // the engine recovers the run on b
		if n++; n == 1 {
			require.ErrorIs(t, b.Server.Drain(cancelled()), context.Canceled, "the recovered run is in progress")
		}
	}
	assert.NoError(t, b.Server.Drain(cancelled()), "the recovered run ended")
	assert.Equal(t, "It is sunny in Oslo.", servetest.History(t, st, "c").LastAssistantText())
	assert.Equal(t, aisdk.RunFinished, lastRun(t, b, "c"))
}
