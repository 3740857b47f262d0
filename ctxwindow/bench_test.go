package ctxwindow_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"github.com/agentloop/agentloop/simtest"
)

// benchHistory returns a random history of at least n messages.
func benchHistory(n int) agentloop.History {
	g := newGen(uint64(n))
	h := g.history(1)
	for len(h) < n {
		h = append(h, g.history(1)...)
	}
	return h
}

// BenchmarkStrategies measures what shaping one request costs, per model
// call, for histories of 1,000 and 10,000 messages whose budget is a
// quarter of what they need: each strategy alone (DropReasoning and
// ShortenResults then stay over budget, having done all they can), the
// default list, LargeResults on a history that fits, and Summarize both
// reusing its summary (the steady state of a conversation: the stored
// summary is checked against the history's start and sent) and making a
// new one (with a summarizer that answers at once, so only the Manager's
// work is measured). The Manager's work is one pass over the history, so
// the cost grows linearly: compare the two sizes.
func BenchmarkStrategies(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		h := benchHistory(n)
		total := requestTokens(&agentloop.Request{Messages: h}, ctxwindow.Bytes{})
		tight := total / 4
		cases := []struct {
			name       string
			budget     int
			strategies []ctxwindow.Strategy
			large      *ctxwindow.LargeResults
			reuse      bool // one run: the summary made on the first call is reused
		}{
			{name: "fits", budget: total + 1},
			{name: "LargeResults", budget: total + 1, large: &ctxwindow.LargeResults{}},
			{name: "DropReasoning", budget: tight, strategies: []ctxwindow.Strategy{ctxwindow.DropReasoning{}}},
			{name: "ShortenResults", budget: tight, strategies: []ctxwindow.Strategy{ctxwindow.ShortenResults{}}},
			{name: "SlidingWindow", budget: tight, strategies: []ctxwindow.Strategy{ctxwindow.SlidingWindow{}}},
			{name: "default", budget: tight},
			{name: "Summarize/new", budget: tight, strategies: []ctxwindow.Strategy{ctxwindow.Summarize{Model: quickSummarizer(), ContextWindow: 4 * total}, ctxwindow.SlidingWindow{}}},
			{name: "Summarize/reused", budget: tight, reuse: true, strategies: []ctxwindow.Strategy{ctxwindow.Summarize{Model: quickSummarizer(), ContextWindow: 4 * total}, ctxwindow.SlidingWindow{}}},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/%d", c.name, len(h)), func(b *testing.B) {
				m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: c.budget + 1000, OutputReserve: 1000, Strategies: c.strategies, LargeResults: c.large})
				if err != nil {
					b.Fatal(err)
				}
				hooks := m.Hooks()
				ctx := context.Background()
				if c.reuse {
					ctx, _ = hooks.OnRunStart(ctx, agentloop.RunStart{})
					if err := hooks.BeforeModelCall(ctx, &agentloop.Request{Messages: h}); err != nil {
						b.Fatal(err)
					}
				}
				sent := 0
				b.ReportAllocs()
				for b.Loop() {
					// The Manager never changes the messages it is given,
					// so every call can share h.
					req := &agentloop.Request{Messages: h}
					_ = hooks.BeforeModelCall(ctx, req)
					sent = len(req.Messages)
				}
				b.ReportMetric(float64(sent), "sent-msgs")
			})
		}
	}
}

// quickSummarizer answers every summarizing call at once.
func quickSummarizer() agentloop.Model {
	return simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text("A summary.")}, nil
	})
}
