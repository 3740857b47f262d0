package aisdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
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
	"github.com/agentloop/agentloop/store/memstore"
)

// fakeRunner is an engine in process: Start runs the run on a goroutine
// and hands its items to the ChatServer's RunItem; kill, if set, is asked
// before each item whether the process "dies" there (the item and the
// rest never reach RunItem, and the run is left as a dead process leaves
// it).
type fakeRunner struct {
	agent *agentloop.Agent
	chat  *aisdk.ChatServer
	kill  func(agentloop.Item) bool

	mu      sync.Mutex
	cancels map[string]context.CancelCauseFunc
	ids     []string
	wg      sync.WaitGroup
}

func (f *fakeRunner) Start(_ context.Context, id, conversationID string, h agentloop.History, opts *agentloop.RunOptions) error {
	ctx, cancel := context.WithCancelCause(context.Background())
	f.mu.Lock()
	if f.cancels == nil {
		f.cancels = map[string]context.CancelCauseFunc{}
	}
	f.cancels[id] = cancel
	f.ids = append(f.ids, id)
	f.mu.Unlock()
	o := *opts
	o.ConversationID = conversationID
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer cancel(nil)
		for it, err := range f.agent.Stream(ctx, h, &o) {
			if f.kill != nil && f.kill(it) {
				return
			}
			f.chat.RunItem(id, it, err)
		}
	}()
	return nil
}

func (f *fakeRunner) Stop(id string, cause error) bool {
	f.mu.Lock()
	cancel := f.cancels[id]
	f.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
	return cancel != nil
}

// newRunnerReplica serves model and tools on st with a fakeRunner.
func newRunnerReplica(t *testing.T, st aisdk.ChatStore, model agentloop.Model, tools ...*agentloop.Tool) (servetest.Replica, *fakeRunner) {
	t.Helper()
	f := &fakeRunner{agent: &agentloop.Agent{Model: model, Tools: tools}}
	h := &aisdk.ChatServer{Agent: f.agent, Store: st, Runner: f, Logger: slog.New(slog.DiscardHandler), KeepAlive: -1}
	f.chat = h
	require.NoError(t, h.Validate())
	srv := httptest.NewServer(h.Routes("/api"))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		assert.NoError(t, h.Shutdown(context.Background()))
		f.wg.Wait()
	})
	return servetest.Replica{Server: h, HTTP: srv}, f
}

// weatherScript checks the weather, then answers.
func weatherScript() []simtest.Turn {
	return []simtest.Turn{
		{Reply: []simtest.Step{simtest.Text("Checking the weather."), simtest.Call("w", "get_weather", map[string]string{"city": "Oslo"})}},
		{Expect: simtest.Expect{ToolResults: map[string]string{"w": "sunny"}}, Reply: []simtest.Step{simtest.Text("It is sunny in Oslo.")}},
	}
}

func TestRunner_AChatServerWithARunnerAnswersAsOneWithout(t *testing.T) {
	answers := map[string][]aisdk.UIMessage{}
	for _, durable := range []bool{false, true} {
		st := newStore(t)
		var r servetest.Replica
		var f *fakeRunner
		if durable {
			r, f = newRunnerReplica(t, st, simtest.NewModel(weatherScript()...), jsWeatherTool(t))
		} else {
			r = servetest.NewReplica(t, st, simtest.NewModel(weatherScript()...), jsWeatherTool(t))
		}
		client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
		msgs, err := client.Send(context.Background(), "Weather?")
		require.NoError(t, err)
		answers[fmt.Sprint(durable)] = msgs
		require.Len(t, msgs, 2)
		assert.Contains(t, fmt.Sprint(msgs[1].Parts), "It is sunny in Oslo.")
		assert.Equal(t, "It is sunny in Oslo.", servetest.History(t, st, "c")[len(servetest.History(t, st, "c"))-1].Text())
		if durable {
			require.Len(t, f.ids, 1)
			s, err := st.GetStream(context.Background(), strings.TrimPrefix(f.ids[0], "c/"))
			require.NoError(t, err, "the run id is <chat id>/<stream id>: %q", f.ids[0])
			assert.Equal(t, store.StreamDone, s.State)
		}
	}
	// The same message, but for its generated id.
	a, b := answers["false"][1], answers["true"][1]
	a.ID, b.ID = "", ""
	assert.Equal(t, a, b)
}

func TestRunner_AStopRequestStopsTheRunThroughTheRunner(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open()
	r, _ := newRunnerReplica(t, st, simtest.NewModel(weatherThenWait()...), jsWeatherTool(t), g.Tool)
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", OnChunk: func(_ int, data json.RawMessage) {
		if isChunk(data, "tool-input-available", "g") {
			go func() {
				<-g.Started
				_ = (&aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}).Stop(context.Background())
			}()
		}
	}}
	msgs, err := client.Send(context.Background(), "Weather?")
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	assert.Equal(t, aisdk.RunStopped, lastRun(t, r, "c"))
	res := results(servetest.History(t, st, "c"))
	assert.Contains(t, res["w"].Content, "sunny")
	assert.True(t, res["g"].IsError, "the stopped call: %+v", res["g"])
}

// lastRun returns the chat view's lastRun.
func lastRun(t *testing.T, r servetest.Replica, id string) string {
	t.Helper()
	resp, err := r.HTTP.Client().Get(r.HTTP.URL + "/api/chats/" + id)
	require.NoError(t, err)
	defer resp.Body.Close()
	var v aisdk.ChatView
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	return v.LastRun
}

// runUntilTheProcessDies sends "Weather?" in chat "c" to a, whose process
// dies at the first text of the run's second step (after that step's start
// is logged); the client goes away with the process. It returns the client
// and the id of the run, once the process died.
func runUntilTheProcessDies(t *testing.T, a servetest.Replica, fa *fakeRunner) (*aisdktest.ChatClient, string) {
	t.Helper()
	died := make(chan struct{})
	turns := 0
	fa.kill = func(it agentloop.Item) bool {
		switch it.(type) {
		case agentloop.TurnStart:
			turns++
		case agentloop.TextDelta:
			if turns == 2 {
				close(died)
				return true
			}
		}
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-died
		cancel()
	}()
	client := &aisdktest.ChatClient{URL: a.ChatURL(), ChatID: "c"}
	_, _ = client.Send(ctx, "Weather?")
	<-died
	return client, fa.ids[0]
}

// recoverRun recovers run runID of chat "c" on b, as an engine does: b's
// runner runs it again from its input (the chat's first message), its items
// going to b's chat server.
func recoverRun(t *testing.T, st aisdk.ChatStore, b servetest.Replica, fb *fakeRunner, runID string) {
	t.Helper()
	start := agentloop.History{servetest.History(t, st, "c")[0]}
	for it, err := range fb.agent.Stream(context.Background(), start, &agentloop.RunOptions{ConversationID: "c"}) {
		b.Server.RunItem(runID, it, err)
	}
}

// A process dies in the second step of a run; the engine recovers the run
// in another replica, which replays the first step and runs the rest: the
// chat ends with the answer, the stream log holds the first step once, and
// the cut-off second step is reset before it streams again.
func TestRunner_ARecoveredRunTakesItsStreamOverAndLogsNoStepTwice(t *testing.T) {
	st := newStore(t)
	a, fa := newRunnerReplica(t, st, simtest.NewModel(weatherScript()...), jsWeatherTool(t))
	b, fb := newRunnerReplica(t, st, simtest.NewModel(weatherScript()...), jsWeatherTool(t))
	client, runID := runUntilTheProcessDies(t, a, fa)

	// A reloaded page resumes the stream, on b; meanwhile the engine
	// recovers the run on b: it runs it again from its input, replaying
	// the first step.
	following := make(chan struct{})
	var once sync.Once
	resumer := &aisdktest.ChatClient{URL: b.ChatURL(), ChatID: "c", OnChunk: func(int, json.RawMessage) { once.Do(func() { close(following) }) }}
	resumer.SetMessages(client.Messages()[:1])
	go func() {
		<-following
		recoverRun(t, st, b, fb, runID)
	}()
	resumed, err := resumer.Resume(context.Background())
	require.NoError(t, err)
	require.True(t, resumed)
	msgs := resumer.Messages()
	require.Len(t, msgs, 2)
	var texts []string
	for _, p := range msgs[1].Parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	assert.Equal(t, []string{"Checking the weather.", "It is sunny in Oslo."}, texts)
	h := servetest.History(t, st, "c")
	assert.Equal(t, "It is sunny in Oslo.", h[len(h)-1].Text())

	var types []string
	for c, err := range st.ReadStream(context.Background(), strings.TrimPrefix(runID, "c/"), 0) {
		require.NoError(t, err)
		types = append(types, chunkType(c.Data))
	}
	count := map[string]int{}
	for _, typ := range types {
		count[typ]++
	}
	assert.Equal(t, 1, count["start"], "%q", types)
	assert.Equal(t, 1, count["reset-step"], "%q", types)
	assert.Equal(t, 2, count["start-step"], "%q", types)
	assert.Equal(t, 1, count["tool-output-available"], "%q", types)
	assert.Equal(t, "finish", types[len(types)-1])
}

// clock is a settable clock for a store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A process dies mid-run and its stream's lease runs out before the
// engine recovers the run elsewhere: the run goes on in a new stream of
// the chat, logged from its start, and the chat ends with the answer.
func TestRunner_ARunRecoveredAfterItsLeaseRanOutGoesOnInANewStream(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)}
	st := memstore.New(memstore.Options{Now: c.Now})
	t.Cleanup(func() { _ = st.Close() })
	a, fa := newRunnerReplica(t, st, simtest.NewModel(weatherScript()...), jsWeatherTool(t))
	b, fb := newRunnerReplica(t, st, simtest.NewModel(weatherScript()...), jsWeatherTool(t))
	_, runID := runUntilTheProcessDies(t, a, fa)
	c.Add(time.Hour) // the lease runs out

	recoverRun(t, st, b, fb, runID)
	h := servetest.History(t, st, "c")
	assert.Equal(t, "It is sunny in Oslo.", h[len(h)-1].Text())
	assert.Equal(t, aisdk.RunFinished, lastRun(t, b, "c"))

	d, err := st.GetDoc(context.Background(), "c", "aisdk.stream")
	require.NoError(t, err)
	var rec struct{ Stream string }
	require.NoError(t, json.Unmarshal(d.Data, &rec))
	require.NotEqual(t, strings.TrimPrefix(runID, "c/"), rec.Stream, "a new stream")
	count := map[string]int{}
	for c, err := range st.ReadStream(context.Background(), rec.Stream, 0) {
		require.NoError(t, err)
		count[chunkType(c.Data)]++
	}
	assert.Equal(t, map[string]int{"start": 1, "start-step": 2, "finish-step": 2, "reset-step": 0, "finish": 1}, map[string]int{
		"start": count["start"], "start-step": count["start-step"], "finish-step": count["finish-step"], "reset-step": count["reset-step"], "finish": count["finish"]})
}

// A request that continues a message (here with an approval) gets only
// the new parts, as without a Runner: the parts the log restates after the
// start chunk, for resuming clients, are the client's already.
func TestRunner_ARequestThatContinuesAMessageGetsOnlyItsNewParts(t *testing.T) {
	del, err := agentloop.NewTool("delete_record", "Deletes a record.", func(context.Context, struct{}) (string, error) { return "deleted", nil })
	require.NoError(t, err)
	del.NeedsApproval = true
	r, _ := newRunnerReplica(t, newStore(t), simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Deleting."), simtest.Call("d", "delete_record", map[string]any{})}},
		simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"d": "deleted"}}, Reply: []simtest.Step{simtest.Text("Deleted.")}},
	), del)
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", Approve: func(string, json.RawMessage) (bool, string) { return true, "" }}
	msgs, err := client.Send(context.Background(), "Delete it")
	require.NoError(t, err, "a restated part would be a second part of one tool call")
	require.Len(t, msgs, 2)
	assert.Equal(t, 1, strings.Count(fmt.Sprint(msgs[1].Parts), "Deleting."))
	assert.Contains(t, fmt.Sprint(msgs[1].Parts), "Deleted.")
}

// A run that Shutdown hands over (the engine then cancels it) keeps its
// stream's lease, for this process started again, or, with
// ReleaseOnShutdown, releases it: the chat has no active stream at once,
// and Abandoned says that a live replica may take the run over.
func TestRunner_ReleaseOnShutdownReleasesTheLeaseOfARunHandedOver(t *testing.T) {
	for _, release := range []bool{false, true} {
		t.Run(fmt.Sprint(release), func(t *testing.T) {
			started := make(chan struct{})
			slow, err := agentloop.NewTool("slow", "Takes its time.", func(ctx context.Context, _ struct{}) (string, error) {
				close(started)
				<-ctx.Done()
				return "", ctx.Err()
			})
			require.NoError(t, err)
			st := newStore(t)
			r, f := newRunnerReplica(t, st, simtest.NewModel(
				simtest.Turn{Reply: []simtest.Step{simtest.Call("s", "slow", map[string]any{})}},
			), slow)
			r.Server.ReleaseOnShutdown = release
			client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
			sent := make(chan error, 1)
			go func() {
				_, err := client.Send(context.Background(), "Go")
				sent <- err
			}()
			<-started
			require.NoError(t, r.Server.Shutdown(context.Background()))
			<-sent
			require.Len(t, f.ids, 1)
			f.Stop(f.ids[0], context.Canceled) // the engine shuts down
			f.wg.Wait()

			_, err = st.ActiveStream(context.Background(), "c")
			abandoned, aerr := r.Server.Abandoned(context.Background(), f.ids[0])
			require.NoError(t, aerr)
			if release {
				assert.ErrorIs(t, err, store.ErrNotFound, "the stream is still leased")
				assert.True(t, abandoned)
			} else {
				assert.NoError(t, err, "the stream's lease was released")
				assert.False(t, abandoned)
			}
		})
	}
}
