package ctxwindow_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store/memstore"
)

func TestNew_RefusesABadConfigNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		cfg  ctxwindow.Config
		want string
	}{
		{ctxwindow.Config{}, "ContextWindow must be positive"},
		{ctxwindow.Config{ContextWindow: 1000, OutputReserve: 1000}, "OutputReserve (1000) must be at least 0 and less than ContextWindow (1000)"},
		{ctxwindow.Config{ContextWindow: 1000, OutputReserve: -1}, "OutputReserve (-1)"},
		{ctxwindow.Config{ContextWindow: 1000, Strategies: []ctxwindow.Strategy{nil}}, "nil strategy (Config.Strategies[0])"},
		{ctxwindow.Config{ContextWindow: 1000, Strategies: []ctxwindow.Strategy{ctxwindow.SlidingWindow{}, (*ctxwindow.Summarize)(nil)}}, "nil strategy (Config.Strategies[1])"},
		{ctxwindow.Config{ContextWindow: 1000, Strategies: []ctxwindow.Strategy{ctxwindow.ShortenResults{Keep: -1}}}, "ShortenResults.Preview (0) and Keep (-1) must not be negative"},
		{ctxwindow.Config{ContextWindow: 100_000, Strategies: []ctxwindow.Strategy{ctxwindow.Summarize{Recent: 1}}}, "Summarize.Recent (1) must be at least 0 and less than 1"},
		{ctxwindow.Config{ContextWindow: 100_000, Strategies: []ctxwindow.Strategy{&ctxwindow.Summarize{MaxTokens: 5000, ContextWindow: 4000}}}, "Summarize.MaxTokens (5000) must be less than the summarizing model's context window (4000)"},
		{ctxwindow.Config{ContextWindow: 1000, LargeResults: &ctxwindow.LargeResults{Limit: 100, Preview: 100}}, "LargeResults.Preview (100) must be less than Limit (100)"},
	} {
		_, err := ctxwindow.New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v; want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}

func TestManager_BudgetIsTheWindowMinusTheLargerOfReserveAndMaxTokens(t *testing.T) {
	for _, tc := range []struct {
		reserve, maxTokens, want int
	}{
		{0, 0, 100_000 - ctxwindow.DefaultOutputReserve},
		{2000, 0, 98_000},
		{0, 3000, 97_000},
		{2000, 5000, 95_000},
		{5000, 2000, 95_000},
	} {
		var rep ctxwindow.Report
		m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 100_000, OutputReserve: tc.reserve,
			OnReport: func(_ context.Context, r ctxwindow.Report) { rep = r }})
		if err != nil {
			t.Fatal(err)
		}
		req := &agentloop.Request{Messages: agentloop.History{user("hi")}, Settings: agentloop.Settings{MaxTokens: tc.maxTokens}}
		if err := m.Hooks().BeforeModelCall(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if rep.Budget != tc.want {
			t.Errorf("reserve %d, MaxTokens %d: Budget = %d, want %d", tc.reserve, tc.maxTokens, rep.Budget, tc.want)
		}
	}
}

func TestManager_NoBudgetLeftAfterTheReserveIsAnError(t *testing.T) {
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 4000})
	if err != nil {
		t.Fatal(err)
	}
	req := &agentloop.Request{Messages: agentloop.History{user("hi")}, Settings: agentloop.Settings{MaxTokens: 4000}}
	err = m.Hooks().BeforeModelCall(t.Context(), req)
	var ob *ctxwindow.OverBudgetError
	if !errors.As(err, &ob) || ob.Budget != 0 || ob.OutputReserve != 4000 {
		t.Fatalf("err = %v; want an *OverBudgetError with budget 0 and reserve 4000", err)
	}
}

// A run whose pinned messages do not fit is cancelled before the model is
// called, with an error that says so; its history is intact.
func TestManager_OverBudgetCancelsTheRunBeforeTheModelCall(t *testing.T) {
	model := simtest.NewModel()
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 1000, OutputReserve: 500})
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentloop.Agent{Model: model, Hooks: m.Hooks()}
	history := agentloop.History{user(filler(4000))}
	_, err = agentloop.Drain(agent.Stream(t.Context(), history, nil))
	var ce *agentloop.CancelledError
	var ob *ctxwindow.OverBudgetError
	if !errors.As(err, &ce) || !errors.As(err, &ob) || !errors.Is(err, ctxwindow.ErrOverBudget) {
		t.Fatalf("err = %v; want a *CancelledError caused by an *OverBudgetError", err)
	}
	if ob.Tokens != tokens(history...) || ob.Budget != 500 || ob.ContextWindow != 1000 || ob.OutputReserve != 500 {
		t.Fatalf("OverBudgetError = %+v", ob)
	}
	if !strings.Contains(ob.Error(), fmt.Sprintf("needs about %d tokens after every strategy, over its budget of 500 (context window 1000 - output reserve 500)", ob.Tokens)) {
		t.Fatalf("message = %q", ob.Error())
	}
	if model.Calls() != 0 || len(ce.History) != 1 {
		t.Fatalf("model calls %d, history %d messages; want 0 and the 1 given", model.Calls(), len(ce.History))
	}
}

// The provider's input count corrects the estimate: a count twice the
// estimate halves what fits, a count below MinCorrection times the
// estimate is ignored, one above MaxCorrection is capped, a failed call
// teaches nothing, and a new run starts from what the Manager learned last.
func TestManager_LearnsTheCorrectionFromTheProvidersInputCounts(t *testing.T) {
	var reps []ctxwindow.Report
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 100_000, OutputReserve: 1000,
		OnReport: func(_ context.Context, r ctxwindow.Report) { reps = append(reps, r) }})
	if err != nil {
		t.Fatal(err)
	}
	// Each turn reports input = factor × the estimate of what was sent.
	factors := []float64{2, 0.1, 10, 0.75}
	turn := 0
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		f := factors[turn]
		turn++
		steps := []simtest.Step{simtest.Usage(int(f*float64(requestTokens(req, ctxwindow.Bytes{}))), 1)}
		if turn == len(factors) {
			return append(steps, simtest.Text("done")), nil
		}
		return append(steps, simtest.Call("", "noop", nil)), nil
	})
	noop, _ := agentloop.NewTool("noop", "Does nothing.", func(context.Context, struct{}) (string, error) { return "ok", nil })
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{noop}, Hooks: m.Hooks()}
	if _, err := agentloop.Text(agent.Stream(t.Context(), agentloop.History{user("go")}, nil)); err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 2, 2, ctxwindow.MaxCorrection}
	for i, r := range reps {
		if math.Abs(r.Correction-want[i]) > 0.02 {
			t.Errorf("call %d: Correction = %v, want %v", i+1, r.Correction, want[i])
		}
		if raw := requestTokens(model.Requests()[i], ctxwindow.Bytes{}); r.After != int(math.Round(float64(raw)*r.Correction)) {
			t.Errorf("call %d: After = %d, want the estimate %d × %v", i+1, r.After, raw, r.Correction)
		}
	}
	if c := m.Correction(); math.Abs(c-0.75) > 0.02 {
		t.Fatalf("Correction() = %v after the last call, want 0.75", c)
	}

	// A failed call teaches nothing; the next run starts from 0.75.
	failing := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Usage(1_000_000, 1), simtest.Fail("boom")}})
	agent.Model = failing
	if _, err := agentloop.Drain(agent.Stream(t.Context(), agentloop.History{user("again")}, nil)); err == nil {
		t.Fatal("the failing model's run succeeded")
	}
	if c := reps[len(reps)-1].Correction; math.Abs(c-0.75) > 0.02 {
		t.Fatalf("a new run started with Correction %v, want 0.75", c)
	}
	if c := m.Correction(); math.Abs(c-0.75) > 0.02 {
		t.Fatalf("Correction() = %v after a failed call, want 0.75 still", c)
	}
}

// A corrected estimate shapes more: with a factor of 2, a history that fits
// by the raw estimate is over budget.
func TestManager_TheCorrectionChangesWhatFits(t *testing.T) {
	h := agentloop.History{user("task"), assistant(text(filler(2000))), user("now")}
	var reps []ctxwindow.Report
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: tokens(h...) + 110, OutputReserve: 100,
		OnReport: func(_ context.Context, r ctxwindow.Report) { reps = append(reps, r) }})
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Usage(2*requestTokens(req, ctxwindow.Bytes{}), 1), simtest.Text("ok")}, nil
	})
	agent := &agentloop.Agent{Model: model, Hooks: m.Hooks()}
	for range 2 {
		if _, err := agentloop.Text(agent.Stream(t.Context(), h, nil)); err != nil {
			t.Fatal(err)
		}
	}
	second := texts(model.Requests()[1].Messages)
	if reps[0].Sent != 3 || len(second) != 3 || second[0] != "task" || second[1] != "[1 earlier message of this conversation is left out here to fit the context window.]" || second[2] != "now" {
		t.Fatalf("sent %d messages, then %q; want all 3, then, corrected ×2, the answer left out", reps[0].Sent, second)
	}
}

// One Manager serves concurrent runs of different conversations; each keeps
// its own summary under its own id.
func TestManager_ServesConcurrentRuns(t *testing.T) {
	docs := memstore.New(memstore.Options{})
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: 3000, OutputReserve: 500, Docs: docs,
		Strategies: []ctxwindow.Strategy{ctxwindow.Summarize{Model: summarizer()}, ctxwindow.SlidingWindow{}}})
	if err != nil {
		t.Fatal(err)
	}
	model := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text("ok")}, nil
	})
	agent := &agentloop.Agent{Model: model, Hooks: m.Hooks()}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := newGen(uint64(i)).history(12)
			_, errs[i] = agentloop.Text(agent.Stream(context.Background(), append(h, user("go on")), &agentloop.RunOptions{ConversationID: fmt.Sprint("chat-", i)}))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if _, ok, _ := ctxwindow.LoadSummary(t.Context(), docs, fmt.Sprint("chat-", i)); !ok {
			t.Fatalf("run %d saved no summary", i)
		}
	}
}
