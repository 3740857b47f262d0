package ctxwindow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
)

// chat is a conversation of n turns, each a user message and an answer of
// about 2 KB, ending with a user message.
func chat(n int) agentloop.History {
	var h agentloop.History
	for i := range n {
		h = append(h, user("question "+string(rune('A'+i%26))), assistant(text("answer "+string(rune('A'+i%26))+": "+filler(2000))))
	}
	return append(h, user("and now?"))
}

// answering is an agent model that answers every call with "ok".
func answering() *simtest.Model {
	return simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text("ok")}, nil
	})
}

// runWith runs agent over h in conversation id and returns the reports of
// its model calls.
func runWith(t *testing.T, cfg ctxwindow.Config, model agentloop.Model, h agentloop.History, id string) ([]ctxwindow.Report, *ctxwindow.Manager) {
	t.Helper()
	var reps []ctxwindow.Report
	cfg.OnReport = func(_ context.Context, r ctxwindow.Report) { reps = append(reps, r) }
	m, err := ctxwindow.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentloop.Agent{Model: model, Hooks: m.Hooks()}
	if _, err := agentloop.Text(agent.Stream(t.Context(), h, &agentloop.RunOptions{ConversationID: id})); err != nil {
		t.Fatal(err)
	}
	return reps, m
}

// A summary is made once, kept in the store under the conversation's id,
// and used by the next run of that conversation without summarizing again;
// another conversation gets its own.
func TestSummarize_KeptPerConversationAndReusedByLaterRuns(t *testing.T) {
	docs := memstore.New(memstore.Options{})
	sum := summarizer()
	cfg := ctxwindow.Config{ContextWindow: 4000, OutputReserve: 500, Docs: docs,
		Strategies: []ctxwindow.Strategy{ctxwindow.Summarize{Model: sum}, ctxwindow.SlidingWindow{}}}
	h := chat(8)

	reps, _ := runWith(t, cfg, answering(), h, "c1")
	if reps[0].ConversationID != "c1" || reps[0].Turn != 1 {
		t.Fatalf("report names conversation %q, turn %d; want c1, 1", reps[0].ConversationID, reps[0].Turn)
	}
	if sum.Calls() != 1 || !reps[0].NewSummary || reps[0].Summary == nil {
		t.Fatalf("summarizer calls %d, report %+v; want one new summary", sum.Calls(), reps[0])
	}
	stored, ok, err := ctxwindow.LoadSummary(t.Context(), docs, "c1")
	if err != nil || !ok || stored != *reps[0].Summary {
		t.Fatalf("stored %+v, %v, %v; want the report's summary %+v", stored, ok, err, *reps[0].Summary)
	}
	if stored.From != 1 || stored.Through <= stored.From || stored.Through >= len(h)-1 {
		t.Fatalf("summary replaces [%d, %d); want from after the first user message to before the newest", stored.From, stored.Through)
	}

	// The next run of c1, one turn longer, reuses it.
	longer := append(h.Clone(), assistant(text("ok")), user("more?"))
	reps, _ = runWith(t, cfg, answering(), longer, "c1")
	if sum.Calls() != 1 || reps[0].NewSummary || reps[0].Summary == nil || *reps[0].Summary != stored {
		t.Fatalf("summarizer calls %d, report %+v; want the stored summary reused", sum.Calls(), reps[0])
	}

	// Another conversation is summarized on its own.
	runWith(t, cfg, answering(), h, "c2")
	if sum.Calls() != 2 {
		t.Fatalf("summarizer calls %d, want 2", sum.Calls())
	}
}

// When the conversation outgrows its summary, the new one is made from the
// old summary and the messages after it only.
func TestSummarize_FoldsThePreviousSummaryWithTheNewerMessagesOnly(t *testing.T) {
	docs := memstore.New(memstore.Options{})
	sum := summarizer()
	cfg := ctxwindow.Config{ContextWindow: 4000, OutputReserve: 500, Docs: docs,
		Strategies: []ctxwindow.Strategy{ctxwindow.Summarize{Model: sum}, ctxwindow.SlidingWindow{}}}
	h := chat(8)
	runWith(t, cfg, answering(), h, "c1")
	first, _, _ := ctxwindow.LoadSummary(t.Context(), docs, "c1")

	longer := chat(16)
	copy(longer, h) // the same start
	reps, _ := runWith(t, cfg, answering(), longer, "c1")
	second := reps[0].Summary
	if !reps[0].NewSummary || second.From != first.From || second.Through <= first.Through {
		t.Fatalf("second summary %+v after %+v; want a new one reaching further", second, first)
	}
	in := sum.Requests()[1].Messages[0].Text()
	if !strings.Contains(in, first.Text) {
		t.Fatalf("the second summarizing call does not fold in the first summary:\n%.300s", in)
	}
	if strings.Contains(in, "question A") || !strings.Contains(in, longer[first.Through].Text()) {
		t.Fatalf("the second summarizing call should hold the messages from %d on only:\n%.300s", first.Through, in)
	}
}

// A stored summary that does not fit the history's start (edited,
// regenerated, another chat's) is not used: a new one replaces it.
func TestSummarize_AStaleSummaryIsNotUsed(t *testing.T) {
	docs := memstore.New(memstore.Options{})
	stale := ctxwindow.Summary{Text: "They talked about cats.", From: 1, Through: 5, Digest: "not this history"}
	if err := ctxwindow.SaveSummary(t.Context(), docs, "c1", stale); err != nil {
		t.Fatal(err)
	}
	sum := summarizer()
	reps, _ := runWith(t, ctxwindow.Config{ContextWindow: 4000, OutputReserve: 500, Docs: docs,
		Strategies: []ctxwindow.Strategy{ctxwindow.Summarize{Model: sum}, ctxwindow.SlidingWindow{}}}, answering(), chat(8), "c1")
	if sum.Calls() != 1 || !reps[0].NewSummary || reps[0].Summary.Text == stale.Text {
		t.Fatalf("summarizer calls %d, report %+v; want a new summary", sum.Calls(), reps[0])
	}
	if got, _, _ := ctxwindow.LoadSummary(t.Context(), docs, "c1"); got.Text == stale.Text {
		t.Fatal("the stale summary was kept in the store")
	}
}

// When the summarizer fails, the window shapes the request, the failure is
// reported and logged, and the run goes on.
func TestSummarize_AFailureFallsBackToTheWindowAndIsReported(t *testing.T) {
	for name, s := range map[string]ctxwindow.Summarize{
		"model error": {Model: failingSummarizer()},
		"empty answer": {Model: simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
			return []simtest.Step{simtest.Text("   ")}, nil
		})},
		"timeout": {Model: simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
			return []simtest.Step{simtest.Hang()}, nil
		}), Timeout: time.Minute}, // fake time: the subtests run in a synctest bubble
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs bytes.Buffer
				var reps []ctxwindow.Report
				m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 4000, OutputReserve: 500, Strategies: []ctxwindow.Strategy{s},
					OnReport: func(_ context.Context, r ctxwindow.Report) { reps = append(reps, r) }})
				require.NoError(t, err)
				model := answering()
				agent := &agentloop.Agent{Model: model, Hooks: m.Hooks(), Logger: slog.New(slog.NewTextHandler(&logs, nil))}
				_, err = agentloop.Text(agent.Stream(t.Context(), chat(8), nil))
				require.NoError(t, err)
				require.NotEmpty(t, reps)
				r := reps[0]
				assert.ErrorIs(t, r.Err, ctxwindow.ErrSummarize)
				assert.Nil(t, r.Summary)
				assert.LessOrEqual(t, r.After, r.Budget, "the request is within budget")
				assert.Contains(t, texts(model.Requests()[0].Messages)[1], "earlier messages of this conversation are left out", "the window's note")
				assert.Contains(t, logs.String(), "summarizing failed", "the failure is logged")
			})
		})
	}
}

// errStore fails every call.
// errStore fails every call, like a database on fire, and counts them.
type errStore struct{ calls int }

func (s *errStore) GetDoc(context.Context, string, string) (*store.Doc, error) {
	s.calls++
	return nil, errors.New("disk on fire")
}

func (s *errStore) PutDoc(context.Context, *store.Doc) error {
	s.calls++
	return errors.New("disk on fire")
}

func (*errStore) DeleteDoc(context.Context, string, string, int64) error {
	return errors.New("disk on fire")
}

// A store that fails is reported; the summary lasts for the run, so the
// run's later model calls reuse it.
func TestSummarize_AFailingStoreIsReportedAndTheSummaryLastsForTheRun(t *testing.T) {
	docs := &errStore{}
	sum := summarizer()
	turn := 0
	model := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		turn++
		if turn < 3 {
			return []simtest.Step{simtest.Call("", "noop", nil)}, nil
		}
		return []simtest.Step{simtest.Text("done")}, nil
	})
	noop, _ := agentloop.NewTool("noop", "Does nothing.", func(context.Context, struct{}) (string, error) { return "ok", nil })
	var reps []ctxwindow.Report
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 4000, OutputReserve: 500, Docs: docs,
		Strategies: []ctxwindow.Strategy{ctxwindow.Summarize{Model: sum}, ctxwindow.SlidingWindow{}},
		OnReport:   func(_ context.Context, r ctxwindow.Report) { reps = append(reps, r) }})
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{noop}, Hooks: m.Hooks()}
	if _, err := agentloop.Text(agent.Stream(t.Context(), chat(8), &agentloop.RunOptions{ConversationID: "c1"})); err != nil {
		t.Fatal(err)
	}
	if err := reps[0].Err; err == nil || !strings.Contains(err.Error(), `loading the summary of conversation "c1": disk on fire`) ||
		!strings.Contains(err.Error(), `saving the summary of conversation "c1": disk on fire`) {
		t.Fatalf("first report's Err = %v; want the load and the save failure", err)
	}
	// One load (the first call that needs a summary) and one save, each
	// failing at its first read.
	if docs.calls != 2 || sum.Calls() != 1 || len(reps) != 3 || reps[2].Summary == nil || reps[2].NewSummary {
		t.Fatalf("store calls %d, summarizer calls %d, reports %+v; want one summary, reused by the later calls", docs.calls, sum.Calls(), reps)
	}
}

// Cancelling the run while it summarizes cancels the run (no fallback).
func TestSummarize_CancellingTheRunWhileSummarizingCancelsIt(t *testing.T) {
	entered := make(chan struct{})
	hanging := agentloop.ModelFunc(func(ctx context.Context, _ *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			close(entered)
			<-ctx.Done()
			yield(nil, ctx.Err())
		}
	})
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 4000, OutputReserve: 500, Strategies: []ctxwindow.Strategy{ctxwindow.Summarize{Model: hanging}, ctxwindow.SlidingWindow{}}})
	if err != nil {
		t.Fatal(err)
	}
	model := answering()
	agent := &agentloop.Agent{Model: model, Hooks: m.Hooks()}
	ctx, cancel := context.WithCancelCause(t.Context())
	go func() {
		<-entered
		cancel(agentloop.Cancel("user pressed stop"))
	}()
	_, err = agentloop.Drain(agent.Stream(ctx, chat(8), nil))
	var ce *agentloop.CancelledError
	if !errors.As(err, &ce) || ce.Reason != "user pressed stop" || model.Calls() != 0 {
		t.Fatalf("err = %v, model calls %d; want the run cancelled with the user's reason before any model call", err, model.Calls())
	}
}

// A part too long for the summarizer's own window is summarized in several
// calls, each within that window and each folding in the summary so far.
func TestSummarize_ALongPartIsSummarizedInSeveralCallsWithinTheSummarizersWindow(t *testing.T) {
	sum := summarizer()
	s := ctxwindow.Summarize{Model: sum, ContextWindow: 1500, MaxTokens: 200}
	reps, _ := runWith(t, ctxwindow.Config{ContextWindow: 20_000, OutputReserve: 500, Strategies: []ctxwindow.Strategy{s, ctxwindow.SlidingWindow{}}}, answering(), chat(60), "")
	if !reps[0].NewSummary || sum.Calls() < 3 {
		t.Fatalf("%d summarizing calls; want several", sum.Calls())
	}
	for i, req := range sum.Requests() {
		if got := requestTokens(req, ctxwindow.Bytes{}) + req.Settings.MaxTokens; got > 1500 {
			t.Errorf("summarizing call %d needs %d tokens with its output, over the summarizer's window of 1500", i, got)
		}
		if req.System != ctxwindow.DefaultSummaryPrompt || len(req.Tools) != 0 || req.Settings.MaxTokens != 200 {
			t.Errorf("summarizing call %d: system %.40q, %d tools, MaxTokens %d", i, req.System, len(req.Tools), req.Settings.MaxTokens)
		}
		if in := req.Messages[0].Text(); i > 0 && !strings.HasPrefix(in, "Summary of the conversation so far:\nThe user and the assistant exchanged") {
			t.Errorf("summarizing call %d does not start from the summary so far: %.100q", i, in)
		}
	}
	if got := reps[0].SummaryUsage.Output; got != 20*sum.Calls() {
		t.Errorf("SummaryUsage.Output = %d, want the calls' sum %d", got, 20*sum.Calls())
	}
}

// Without a Model, Summarize asks the agent's own model.
func TestSummarize_WithoutAModelUsesTheAgentsModel(t *testing.T) {
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		if req.System == ctxwindow.DefaultSummaryPrompt {
			return []simtest.Step{simtest.Text("A summary by the agent's model.")}, nil
		}
		return []simtest.Step{simtest.Text("ok")}, nil
	})
	reps, _ := runWith(t, ctxwindow.Config{ContextWindow: 4000, OutputReserve: 500, Strategies: []ctxwindow.Strategy{ctxwindow.Summarize{}, ctxwindow.SlidingWindow{}}}, model, chat(8), "")
	if reps[0].Summary == nil || reps[0].Summary.Text != "A summary by the agent's model." || model.Calls() != 2 {
		t.Fatalf("report %+v, model calls %d", reps[0], model.Calls())
	}
	sent := model.Requests()[1].Messages
	if !strings.Contains(sent[1].Text(), "A summary by the agent's model.") || !strings.HasPrefix(sent[1].Text(), "[Summary of the earlier part of this conversation (") {
		t.Fatalf("the request after summarizing does not carry the summary where the messages were: %q", texts(sent))
	}
}

func TestSummary_JSONFormIsStable(t *testing.T) {
	b, err := json.Marshal(ctxwindow.Summary{Text: "t", From: 1, Through: 9, Digest: "ab"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"text":"t","from":1,"through":9,"digest":"ab"}` {
		t.Fatalf("JSON = %s", got)
	}
}

// The summarizer gets the messages as text: what was said, which tools
// were called with what, what they returned (long results shortened) and
// the approval decisions, without the reasoning.
func TestSummarize_TheSummarizerGetsTheMessagesAsTextWithoutReasoning(t *testing.T) {
	h := agentloop.History{
		user("the task"),
		assistant(thought("SECRET THOUGHTS"), text("Let me look."), call("c1")),
		result("c1", strings.Repeat("x", 5000)+"TAIL"),
		{Role: agentloop.RoleTool, Parts: []agentloop.Part{{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c1", Reason: "too risky"}}}},
		assistant(text(filler(3000))),
		user("newest"),
	}
	sum := summarizer()
	_, rep, err := shapeWith(t, h, tokens(h[0], h[5])+200, ctxwindow.Config{Strategies: []ctxwindow.Strategy{ctxwindow.Summarize{Model: sum, MaxTokens: 100, ContextWindow: 10_000}, ctxwindow.SlidingWindow{}}})
	if err != nil || rep.Summary == nil {
		t.Fatalf("err %v, report %+v", err, rep)
	}
	in := sum.Requests()[0].Messages[0].Text()
	for _, want := range []string{"Messages to summarize:\n", "Assistant: Let me look.\n", "Assistant called the tool search (call c1) with {}\n",
		"The tool search (call c1) returned: xxx", "TAIL\n", "The user denied the call c1 (too risky)\n"} {
		if !strings.Contains(in, want) {
			t.Errorf("the summarizer's input lacks %q:\n%s", want, in)
		}
	}
	if strings.Contains(in, "SECRET") || strings.Contains(in, "the task") || strings.Contains(in, "newest") || len(in) > 6000 {
		t.Errorf("the summarizer's input holds reasoning, the pinned messages or a whole long result (%d bytes):\n%.500s", len(in), in)
	}
}

func TestSummaryDoc_KeepsTheSummaryAsTheChatsDocument(t *testing.T) {
	ctx := t.Context()
	ms := memstore.New(memstore.Options{})
	chat := &store.Chat{ID: "a"}
	require.NoError(t, ms.PutChat(ctx, chat))
	_, ok, err := ctxwindow.LoadSummary(ctx, ms, "a")
	require.NoError(t, err)
	require.False(t, ok, "no summary yet")
	for _, text := range []string{"A", "A2"} {
		require.NoError(t, ctxwindow.SaveSummary(ctx, ms, "a", ctxwindow.Summary{Text: text, From: 1, Through: 3, Digest: "d"}))
	}
	got, ok, err := ctxwindow.LoadSummary(ctx, ms, "a")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, ctxwindow.Summary{Text: "A2", From: 1, Through: 3, Digest: "d"}, got, "the last save wins")
	doc, err := ms.GetDoc(ctx, "a", ctxwindow.SummaryDoc)
	require.NoError(t, err)
	assert.JSONEq(t, `{"text":"A2","from":1,"through":3,"digest":"d"}`, string(doc.Data))

	// A conversation that is no chat keeps its summary as a document of no chat.
	_, ok, err = ctxwindow.LoadSummary(ctx, ms, "b")
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, ctxwindow.SaveSummary(ctx, ms, "b", ctxwindow.Summary{Text: "B"}))
	got, ok, err = ctxwindow.LoadSummary(ctx, ms, "b")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "B", got.Text)
	_, err = ms.GetDoc(ctx, "", store.ChatlessName("b", ctxwindow.SummaryDoc))
	assert.NoError(t, err, "b's summary is a document of no chat")

	// A corrupt document is an error, and the next save replaces it.
	doc.Data = []byte("{")
	require.NoError(t, ms.PutDoc(ctx, doc))
	_, ok, err = ctxwindow.LoadSummary(ctx, ms, "a")
	require.ErrorContains(t, err, `conversation "a"`)
	require.False(t, ok)
	require.NoError(t, ctxwindow.SaveSummary(ctx, ms, "a", ctxwindow.Summary{Text: "A3"}))
	got, ok, err = ctxwindow.LoadSummary(ctx, ms, "a")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "A3", got.Text, "after the repair")

	// Deleting the chat deletes its summary.
	require.NoError(t, ms.DeleteChat(ctx, "a", chat.Version))
	_, ok, err = ctxwindow.LoadSummary(ctx, ms, "a")
	require.NoError(t, err)
	assert.False(t, ok, "the summary outlived its chat")
}
