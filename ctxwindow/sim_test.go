package ctxwindow_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store/memstore"
)

// fetchTool returns about 2 KB of text per call.
func fetchTool(t *testing.T) *agentloop.Tool {
	t.Helper()
	tool, err := agentloop.NewTool("fetch", "Fetch a page.", func(ctx context.Context, in struct {
		Page int `json:"page"`
	}) (string, error) {
		return fmt.Sprintf("page %d: %s", in.Page, strings.Repeat("lorem ipsum dolor sit amet ", 80)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// trueTokens is what the fake provider says a request costs: a quarter
// more than the default estimate, so the Manager must learn the correction.
func trueTokens(req *agentloop.Request) int {
	return int(math.Ceil(1.25 * float64(requestTokens(req, ctxwindow.Bytes{}))))
}

// A run of 200 model calls, each calling a tool that returns 2 KB, sends
// every request within the budget (by the provider's own count, which is a
// quarter above the estimate), while the run's history keeps all 200 turns
// and every result whole.
func TestLongRun_200TurnsStayUnderBudgetAndHistoryKeepsAll(t *testing.T) {
	for _, tc := range []struct {
		name       string
		strategies func(sum agentloop.Model) []ctxwindow.Strategy
	}{
		{"default strategies", func(agentloop.Model) []ctxwindow.Strategy { return nil }},
		{"with summaries", func(sum agentloop.Model) []ctxwindow.Strategy {
			return []ctxwindow.Strategy{ctxwindow.DropReasoning{}, ctxwindow.Summarize{Model: sum}, ctxwindow.SlidingWindow{}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const turns, window, reserve = 200, 8000, 1000
			budget := window - reserve
			calls := 0
			maxSeen := 0
			model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
				calls++
				used := trueTokens(req)
				maxSeen = max(maxSeen, used)
				if used > budget {
					t.Errorf("model call %d: the request costs %d tokens, over the budget of %d", calls, used, budget)
				}
				checkSent(t, req.Messages, req.Messages)
				steps := []simtest.Step{simtest.Reasoning(fmt.Sprintf("Turn %d: %s", calls, strings.Repeat("thinking ", 40))), simtest.Usage(used, 50)}
				if calls == turns {
					return append(steps, simtest.Text("Done: read 199 pages.")), nil
				}
				return append(steps, simtest.Text(fmt.Sprintf("Reading page %d.", calls)), simtest.Call("", "fetch", map[string]int{"page": calls})), nil
			})
			sum := summarizer()
			var reports []ctxwindow.Report
			m, err := ctxwindow.New(ctxwindow.Config{
				ContextWindow: window, OutputReserve: reserve,
				Strategies: tc.strategies(sum),
				Docs:       memstore.New(memstore.Options{}),
				OnReport:   func(_ context.Context, r ctxwindow.Report) { reports = append(reports, r) },
			})
			if err != nil {
				t.Fatal(err)
			}
			agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{fetchTool(t)}, Hooks: m.Hooks(), MaxTurns: turns, System: "You read pages."}
			history := agentloop.History{agentloop.UserMessage("Read pages 1 to 199, one at a time, then say done.")}
			last, err := agentloop.Drain(agent.Stream(t.Context(), history, &agentloop.RunOptions{ConversationID: "chat-1"}))
			if err != nil {
				t.Fatal(err)
			}
			final := last.(agentloop.Final)
			assistants, results := 0, 0
			for _, msg := range final.History {
				switch msg.Role {
				case agentloop.RoleAssistant:
					assistants++
				case agentloop.RoleTool:
					for _, p := range msg.Parts {
						if !strings.HasPrefix(p.ToolResult.Content, "page ") || strings.Contains(p.ToolResult.Content, "left out") {
							t.Fatalf("stored result was changed: %.80q", p.ToolResult.Content)
						}
						results++
					}
				}
			}
			if final.Turns != turns || assistants != turns || results != turns-1 {
				t.Fatalf("turns %d, assistant messages %d, results %d; want %d, %d, %d", final.Turns, assistants, results, turns, turns, turns-1)
			}
			if len(reports) != turns {
				t.Fatalf("%d reports, want one per model call (%d)", len(reports), turns)
			}
			if c := m.Correction(); math.Abs(c-1.25) > 0.01 {
				t.Errorf("Correction() = %v, want about 1.25", c)
			}
			summaries, reused := 0, 0
			for _, r := range reports {
				switch {
				case r.NewSummary:
					summaries++
				case r.Summary != nil:
					reused++
				}
			}
			t.Logf("largest request %d of %d tokens; stored history %d messages, last request %d; %d summaries made (%d summarizer calls), reused by %d calls",
				maxSeen, budget, len(final.History), reports[len(reports)-1].Sent, summaries, sum.Calls(), reused)
			if tc.name == "with summaries" && (summaries == 0 || reused < 2*summaries) {
				t.Errorf("%d summaries were made and reused by %d model calls; want each reused by several calls until the conversation outgrows it", summaries, reused)
			}
		})
	}
}
