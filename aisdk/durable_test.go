package aisdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/aisdk/internal/servetest"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
)

// These tests play the stored mode's promises end to end over HTTP: runs
// outlive their clients and are saved, streams resume on any replica, a
// stop or a newer request stops a run wherever it runs.

func newStore(t *testing.T) *memstore.Store {
	s := memstore.New(memstore.Options{})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// results returns the tool results of h by call id.
func results(h agentloop.History) map[string]agentloop.ToolResult {
	out := map[string]agentloop.ToolResult{}
	for _, m := range h {
		for _, p := range m.Parts {
			if p.Type == agentloop.PartToolResult {
				out[p.ToolResult.CallID] = *p.ToolResult
			}
		}
	}
	return out
}

func chunkType(data json.RawMessage) string {
	var c struct{ Type string }
	_ = json.Unmarshal(data, &c)
	return c.Type
}

func isChunk(data json.RawMessage, typ, callID string) bool {
	var c struct{ Type, ToolCallID string }
	_ = json.Unmarshal(data, &c)
	return c.Type == typ && (callID == "" || c.ToolCallID == callID)
}

// weatherThenWait is a script: check the weather, say so and wait at the
// gate, then answer; then answer the next message.
func weatherThenWait() []simtest.Turn {
	return []simtest.Turn{
		{Reply: []simtest.Step{simtest.Text("Checking the weather."), simtest.Call("w", "get_weather", map[string]string{"city": "Oslo"})}},
		{Expect: simtest.Expect{ToolResults: map[string]string{"w": "sunny"}},
			Reply: []simtest.Step{simtest.Text("It is sunny in Oslo; one more thing."), simtest.Call("g", "wait_for_it", map[string]string{})}},
		{Reply: []simtest.Step{simtest.Text("All done.")}},
		{Expect: simtest.Expect{User: "Thanks"}, Reply: []simtest.Step{simtest.Text("You are welcome.")}},
	}
}

// The disconnect case, 20 times: a client that drops after a
// server tool ran used to lose the run (nothing saved) and get a 409 for
// its next request. Now the run goes on without it and is saved; the
// client resumes the stream to see the rest, and its next request, which
// carries the partial message it saw, is reconciled.
func TestStored_AClientThatGoesAwayLosesNothingAndItsNextRequestIsReconciled(t *testing.T) {
	for i := range 20 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			st := newStore(t)
			g := servetest.NewGate(t)
			defer g.Open() // before the server's Close, should the test fail
			defer g.Open() // before the server's Close, should the test fail
			r := servetest.NewReplica(t, st, simtest.NewModel(weatherThenWait()...), jsWeatherTool(t), g.Tool)
			ctx, drop := context.WithCancel(context.Background())
			client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", OnChunk: func(_ int, data json.RawMessage) {
				if isChunk(data, "tool-output-available", "w") {
					drop() // the page reloads after the server tool ran
				}
			}}
			if _, err := client.Send(ctx, "Weather?"); !errors.Is(err, context.Canceled) {
				t.Fatalf("the client should have dropped: %v", err)
			}
			partial := client.Messages()[1]
			if partial.Role != "assistant" || len(partial.Parts) == 0 {
				t.Fatalf("the partial message %+v", partial)
			}

			// A client on the reloaded page resumes the stream: it is
			// replayed from its start and followed to its end.
			resumer := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", OnChunk: func(_ int, data json.RawMessage) {
				if isChunk(data, "tool-input-available", "g") {
					g.Open()
				}
			}}
			resumer.SetMessages(client.Messages()[:1])
			resumed, err := resumer.Resume(context.Background())
			if err != nil || !resumed {
				t.Fatalf("resume: %v, %v", resumed, err)
			}
			msgs := resumer.Messages()
			if len(msgs) != 2 || msgs[1].ID != partial.ID || !strings.Contains(fmt.Sprint(msgs[1].Parts), "All done.") {
				t.Fatalf("the resumed chat: %+v", msgs)
			}

			// The dropped client goes on with the partial message it saw.
			if _, err := client.Send(context.Background(), "Thanks"); err != nil {
				t.Fatalf("the next request was refused: %v", err)
			}
			h := servetest.History(t, st, "c")
			res := results(h)
			if !strings.Contains(res["w"].Content, "sunny") || res["g"].Content != `{"waited":true}` {
				t.Errorf("results lost: %+v", res)
			}
			var texts []string
			for _, m := range h {
				if s := m.Text(); s != "" {
					texts = append(texts, s)
				}
			}
			want := []string{"Weather?", "Checking the weather.", "It is sunny in Oslo; one more thing.", "All done.", "Thanks", "You are welcome."}
			if fmt.Sprint(texts) != fmt.Sprint(want) {
				t.Errorf("stored texts %q, want %q", texts, want)
			}
		})
	}
}

// The same client sends its next message while the run it left goes on:
// the newest request wins, the old run is stopped and saved first, and the
// new one continues from it.
func TestStored_ANewRequestWhileTheRunGoesOnStopsItAndContinuesFromIt(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open() // before the server's Close, should the test fail
	turns := weatherThenWait()
	turns = append(turns[:2], simtest.Turn{
		Expect: simtest.Expect{User: "Thanks", ToolResults: map[string]string{"g": "cancelled"}},
		Reply:  []simtest.Step{simtest.Text("Stopped waiting.")},
	})
	r := servetest.NewReplica(t, st, simtest.NewModel(turns...), jsWeatherTool(t), g.Tool)
	ctx, drop := context.WithCancel(context.Background())
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", OnChunk: func(_ int, data json.RawMessage) {
		if isChunk(data, "tool-input-available", "g") {
			drop()
		}
	}}
	if _, err := client.Send(ctx, "Weather?"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the client should have dropped: %v", err)
	}
	<-g.Started // the run goes on without its client
	if _, err := client.Send(context.Background(), "Thanks"); err != nil {
		t.Fatal(err)
	}
	h := servetest.History(t, st, "c")
	if got := h.LastAssistantText(); got != "Stopped waiting." {
		t.Errorf("last answer %q", got)
	}
	if r := results(h)["g"]; !r.IsError || !strings.Contains(r.Content, "cancelled") {
		t.Errorf("the stopped call's result %+v", r)
	}
	if err := h.Validate(); err != nil {
		t.Error(err)
	}
}

// A resumed stream is, byte for byte, the response its first client got.
func TestStored_AResumedStreamIsTheResponseByteForByte(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open() // before the server's Close, should the test fail
	r := servetest.NewReplica(t, st, simtest.NewModel(weatherThenWait()...), jsWeatherTool(t), g.Tool)
	first := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	done := make(chan error, 1)
	go func() {
		_, err := first.Send(context.Background(), "Weather?")
		done <- err
	}()
	<-g.Started
	second := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", OnChunk: func(_ int, data json.RawMessage) {
		if isChunk(data, "tool-input-available", "g") {
			g.Open()
		}
	}}
	if resumed, err := second.Resume(context.Background()); err != nil || !resumed {
		t.Fatalf("resume: %v, %v", resumed, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	a, b := first.Transcript()[0], second.Transcript()[0]
	if !a.Done || !b.Done || len(a.Chunks) != len(b.Chunks) {
		t.Fatalf("the response has %d chunks (done %v), the replay %d (done %v)", len(a.Chunks), a.Done, len(b.Chunks), b.Done)
	}
	for i := range a.Chunks {
		if string(a.Chunks[i]) != string(b.Chunks[i]) {
			t.Errorf("chunk %d: response %s, replay %s", i, a.Chunks[i], b.Chunks[i])
		}
	}
	// Once it ended there is nothing to resume.
	if resumed, err := second.Resume(context.Background()); err != nil || resumed {
		t.Errorf("resume after the end: %v, %v (want 204)", resumed, err)
	}
}

// A continuation (here after an approval) goes on with a message the
// client already has; a client that resumes it starts that message afresh
// at the start chunk, so the log restates the message's earlier parts:
// the resumed message is the whole message.
func TestStored_AResumedContinuationRebuildsTheWholeMessage(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open() // before the server's Close, should the test fail
	del, runs := newDeleteRecord(t)
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Reasoning("The user wants it gone."), simtest.Text("Deleting."),
			simtest.Call("w", "get_weather", map[string]string{"city": "Oslo"}), simtest.Call("d", "delete_record", map[string]int{"id": 7})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Deleted; waiting."), simtest.Call("g", "wait_for_it", map[string]string{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Done.")}},
	)
	r := servetest.NewReplica(t, st, model, jsWeatherTool(t), del, g.Tool)
	first := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c",
		Approve: func(string, json.RawMessage) (bool, string) { return true, "fine" }}
	done := make(chan error, 1)
	go func() {
		_, err := first.Send(context.Background(), "Delete record 7")
		done <- err
	}()
	<-g.Started // the continuation runs, and waits

	// A reloaded page has the stored messages, then resumes.
	view := getJSON[aisdk.ChatView](t, r.HTTP.URL+"/api/chats/c")
	if !view.Streaming || len(view.Messages) != 2 {
		t.Fatalf("the chat while it runs: %+v", view)
	}
	second := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", OnChunk: func(_ int, data json.RawMessage) {
		if isChunk(data, "tool-input-available", "g") {
			g.Open()
		}
	}}
	second.SetMessages(view.Messages)
	if resumed, err := second.Resume(context.Background()); err != nil || !resumed {
		t.Fatalf("resume: %v, %v", resumed, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(first.Messages()[1])
	got, _ := json.Marshal(second.Messages()[1])
	if string(got) != string(want) {
		t.Errorf("resumed chat\n%s\nwant the first client's\n%s", got, want)
	}
	if runs.Load() != 1 {
		t.Errorf("the approved tool ran %d times", runs.Load())
	}
	// And the stored chat renders the same.
	view = getJSON[aisdk.ChatView](t, r.HTTP.URL+"/api/chats/c")
	if view.Streaming || len(view.Messages) != 2 || len(view.Messages[1].Parts) != len(first.Messages()[1].Parts) {
		t.Errorf("the stored chat after the run: %+v", view)
	}
}

func getJSON[T any](t *testing.T, url string) T {
	t.Helper()
	var v T
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Two replicas share a store: a stop sent to one cancels the run on the
// other, whose response ends with an abort chunk; the chat is saved
// consistent and runs again on either.
func TestStored_AStopSentToAnyReplicaCancelsTheRun(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open() // before the server's Close, should the test fail
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Waiting."), simtest.Call("g", "wait_for_it", map[string]string{})}},
		simtest.Turn{Expect: simtest.Expect{User: "again", ToolResults: map[string]string{"g": "cancelled"}}, Reply: []simtest.Step{simtest.Text("Here again.")}},
	)
	a := servetest.NewReplica(t, st, model, g.Tool)
	b := servetest.NewReplica(t, st, model, g.Tool)
	onA := &aisdktest.ChatClient{URL: a.ChatURL(), ChatID: "c"}
	done := make(chan error, 1)
	go func() {
		_, err := onA.Send(context.Background(), "wait")
		done <- err
	}()
	<-g.Started
	onB := &aisdktest.ChatClient{URL: b.ChatURL(), ChatID: "c"}
	if err := onB.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("a stopped run is not an error for its client: %v", err)
	}
	chunks := onA.Transcript()[0].Chunks
	if last := chunks[len(chunks)-1]; chunkType(last) != "abort" {
		t.Errorf("the stopped response ends with %s", last)
	}
	h := servetest.History(t, st, "c")
	if r := results(h)["g"]; !r.IsError || !strings.Contains(r.Content, "cancelled") {
		t.Errorf("the stopped call's result %+v", r)
	}
	var he *aisdktest.HTTPStatusError
	if err := onB.Stop(context.Background()); !errors.As(err, &he) || he.Status != http.StatusNotFound {
		t.Errorf("a stop with no run in progress: %v", err)
	}
	if _, err := onA.Send(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	if got := servetest.History(t, st, "c").LastAssistantText(); got != "Here again." {
		t.Errorf("after the stop the chat answered %q", got)
	}
}

// Every save of a run leaves a history in which every tool call has a
// result (InterruptedResult for those still running), except the paused
// state, whose waiting calls are what the client answers: a replica that
// dies at any point leaves a chat the next request can continue.
func TestStored_EverySaveDuringARunIsConsistent(t *testing.T) {
	rec := &recordingStore{ChatStore: newStore(t)}
	form, err := agentloop.NewClientTool("form", "A form.", nil)
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Two things."),
			simtest.Call("w1", "get_weather", map[string]string{"city": "Oslo"}), simtest.Call("w2", "get_weather", map[string]string{"city": "Rome"})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Call("f", "form", map[string]string{})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Thanks for the form.")}},
	)
	r := servetest.NewReplica(t, rec, model, jsWeatherTool(t), form)
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", Tools: map[string]aisdktest.ClientToolFunc{
		"form": func(json.RawMessage) (any, error) { return map[string]string{"name": "Ada"}, nil },
	}}
	if _, err := client.Send(context.Background(), "Weather and a form?"); err != nil {
		t.Fatal(err)
	}
	saves := rec.histories()
	if len(saves) < 6 {
		t.Fatalf("%d saves; want the user message, each turn end and tool result, the pause and the answer", len(saves))
	}
	sawInterrupted := false
	for i, h := range saves {
		if err := h.Validate(); err != nil {
			t.Errorf("save %d: %v", i, err)
		}
		for _, r := range results(h) {
			sawInterrupted = sawInterrupted || r.Content == aisdk.InterruptedResult
		}
		if unanswered := h.Unanswered(); len(unanswered) > 0 && h[len(h)-1].Role != agentloop.RoleUser {
			if len(unanswered) != 1 || unanswered[0].Name != "form" {
				t.Errorf("save %d leaves %v unanswered", i, unanswered)
			}
		}
	}
	if !sawInterrupted {
		t.Error("no save marked a running call interrupted")
	}
	if len(saves[0]) != 1 || saves[0][0].Text() != "Weather and a form?" {
		t.Errorf("the first save is %+v; want the user message, before the run", saves[0])
	}
}

// recordingStore records the history of every PutChat.
type recordingStore struct {
	aisdk.ChatStore
	mu    sync.Mutex
	saved []agentloop.History
}

func (s *recordingStore) PutChat(ctx context.Context, c *store.Chat) error {
	err := s.ChatStore.PutChat(ctx, c)
	if err == nil {
		s.mu.Lock()
		s.saved = append(s.saved, c.History.Clone())
		s.mu.Unlock()
	}
	return err
}

func (s *recordingStore) histories() []agentloop.History {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saved
}

// A replica that died mid-run left an active stream and a history saved
// at a turn end. Once the lease runs out, the next request works on any
// replica, from a history in which the call in flight was interrupted.
func TestStored_AChatLeftByADeadReplicaWorksOnceItsLeaseRunsOut(t *testing.T) {
	clock := &testClock{}
	st := memstore.New(memstore.Options{Now: clock.Now})
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	// What the dead replica left: the user message, the turn that called a
	// tool (saved with the call interrupted), and its stream.
	dead := agentloop.History{
		{ID: "u1", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("Weather?")}},
		{ID: "m1", Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("Checking."),
			{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "w", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}}}},
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "w", Name: "get_weather", Content: aisdk.InterruptedResult, IsError: true}}}},
	}
	if err := st.PutChat(ctx, &store.Chat{ID: "c", History: dead}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartStream(ctx, "c", aisdk.DefaultStreamLease); err != nil {
		t.Fatal(err)
	}
	model := simtest.NewModel(simtest.Turn{Expect: simtest.Expect{User: "again", ToolResults: map[string]string{"w": "interrupted"}}, Reply: []simtest.Step{simtest.Text("Sorry, trying again later.")}})
	r := servetest.NewReplica(t, st, model, jsWeatherTool(t))
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	client.SetMessages(aisdk.FromHistory(dead))

	clock.Advance(aisdk.DefaultStreamLease + 1) // the lease runs out
	if resumed, err := client.Resume(ctx); err != nil || resumed {
		t.Fatalf("resume of a dead stream: %v, %v (want 204)", resumed, err)
	}
	if _, err := client.Send(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	if got := servetest.History(t, st, "c").LastAssistantText(); got != "Sorry, trying again later." {
		t.Errorf("answer %q", got)
	}
}

// testClock is a settable clock for a store's leases.
type testClock struct {
	mu sync.Mutex
	d  time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).Add(c.d)
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.d += d
	c.mu.Unlock()
}

// The client saw part of a turn that is not saved yet (the model is still
// writing it) when it sends its next message: the run is stopped first,
// which saves the turn, and the request then fits the stored chat.
func TestStored_ANewMessageDuringATurnInFlightKeepsWhatTheClientSaw(t *testing.T) {
	st := newStore(t)
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Working on a long answer"), simtest.Call("w", "get_weather", map[string]string{"city": "Oslo"}), simtest.Hang()}},
		simtest.Turn{Expect: simtest.Expect{User: "next"}, Reply: []simtest.Step{simtest.Text("Next.")}},
	)
	r := servetest.NewReplica(t, st, model, jsWeatherTool(t))
	ctx, drop := context.WithCancel(context.Background())
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", OnChunk: func(_ int, data json.RawMessage) {
		if isChunk(data, "tool-input-available", "w") {
			drop() // the model is still streaming: nothing of this turn is saved
		}
	}}
	if _, err := client.Send(ctx, "Go"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the client should have dropped: %v", err)
	}
	if _, err := client.Send(context.Background(), "next"); err != nil {
		t.Fatal(err)
	}
	h := servetest.History(t, st, "c")
	if h[1].Text() != "Working on a long answer" || h.LastAssistantText() != "Next." {
		t.Errorf("stored %+v", h)
	}
}

// Shutdown cancels the runs that outlive their clients, which save their
// history first, and refuses new requests with 503.
func TestStored_ShutdownEndsTheRunsInProgressAndRefusesNewOnes(t *testing.T) {
	st := newStore(t)
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Working"), simtest.Hang()}})
	r := servetest.NewReplica(t, st, model)
	ctx, drop := context.WithCancel(context.Background())
	client := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c", OnChunk: func(_ int, data json.RawMessage) {
		if chunkType(data) == "text-delta" {
			drop() // the run goes on without its client, hanging
		}
	}}
	if _, err := client.Send(ctx, "Go"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the client should have dropped: %v", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound, should the run not end
	defer cancel()
	if err := r.Server.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ActiveStream(context.Background(), "c"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the run's stream is still active after Shutdown: %v", err)
	}
	if h := servetest.History(t, st, "c"); len(h) != 2 || h[1].Text() != "Working" {
		t.Errorf("stored %+v, want the run's partial answer", h)
	}
	_, err := (&aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "d"}).Send(context.Background(), "Hi")
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a request after Shutdown: %v, want a 503", err)
	}
	resp, err := http.Get(r.HTTP.URL + "/api/chat/c/stream")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a resume after Shutdown: %d, want 503", resp.StatusCode)
	}
}

// Every run gets the chat id as its conversation id (for telemetry and
// ctxwindow), in both modes.
func TestHandler_RunsGetTheChatIDAsTheirConversationID(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) {
			got := make(chan string, 1)
			agent := &agentloop.Agent{
				Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Hi.")}}),
				Hooks: &agentloop.Hooks{OnRunStart: func(ctx context.Context, rs agentloop.RunStart) (context.Context, error) {
					got <- rs.ConversationID
					return ctx, nil
				}},
			}
			var h http.Handler = &aisdk.Handler{Agent: agent, Logger: slog.New(slog.DiscardHandler)}
			if stored {
				h = &aisdk.ChatServer{Agent: agent, Store: newStore(t), Logger: slog.New(slog.DiscardHandler)}
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			if _, err := (&aisdktest.ChatClient{URL: srv.URL, ChatID: "chat-7"}).Send(context.Background(), "Hello"); err != nil {
				t.Fatal(err)
			}
			if id := <-got; id != "chat-7" {
				t.Errorf("conversation id %q, want chat-7", id)
			}
		})
	}
}

// The chat's view tells how its last run ended, so that a reloaded page
// in any browser keeps a stopped reply's mark.
func TestStored_TheChatViewTellsHowTheLastRunEnded(t *testing.T) {
	st := newStore(t)
	g := servetest.NewGate(t)
	defer g.Open()
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Waiting."), simtest.Call("g", "wait_for_it", map[string]string{})}},
		simtest.Turn{Expect: simtest.Expect{User: "again", ToolResults: map[string]string{"g": "cancelled"}}, Reply: []simtest.Step{simtest.Text("Here again.")}},
	)
	r := servetest.NewReplica(t, st, model, g.Tool)
	c := &aisdktest.ChatClient{URL: r.ChatURL(), ChatID: "c"}
	done := make(chan error, 1)
	go func() {
		_, err := c.Send(context.Background(), "wait")
		done <- err
	}()
	<-g.Started
	if v := getJSON[aisdk.ChatView](t, r.HTTP.URL+"/api/chats/c"); !v.Streaming || v.LastRun != "" {
		t.Errorf("while the run goes on: streaming %v, last run %q", v.Streaming, v.LastRun)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := getJSON[aisdk.ChatView](t, r.HTTP.URL+"/api/chats/c").LastRun; got != aisdk.RunStopped {
		t.Errorf("after a stop: last run %q", got)
	}
	if _, err := c.Send(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	if got := getJSON[aisdk.ChatView](t, r.HTTP.URL+"/api/chats/c").LastRun; got != aisdk.RunFinished {
		t.Errorf("after a finished run: last run %q", got)
	}
}
