package ctxwindow_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"github.com/agentloop/agentloop/simtest"
	"github.com/google/go-cmp/cmp"
)

func TestManager_RequestThatFitsIsSentUnchanged(t *testing.T) {
	h := agentloop.History{user("hi"), assistant(thought(filler(500)), call("c1")), result("c1", filler(3000)), user("more")}
	req, rep, err := shapeWith(t, h, tokens(h...), ctxwindow.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h, req.Messages); diff != "" {
		t.Fatalf("a request that fits was changed (-want +got):\n%s", diff)
	}
	if rep.Applied != nil || rep.Before != rep.After || rep.Sent != len(h) || rep.Messages != len(h) {
		t.Fatalf("report = %+v; want nothing applied, Before == After, every message sent", rep)
	}
}

func TestDropReasoning_LeavesOutOldReasoningOldestFirstAndKeepsTheTurnInProgress(t *testing.T) {
	h := agentloop.History{
		user("one"), assistant(thought(filler(2000)), text("a1")),
		user("two"), assistant(thought(filler(2000))), // reasoning only
		assistant(thought(filler(2000)), text("a2")),
		user("three"), assistant(thought(filler(2000)), call("c1")), result("c1", "r"),
	}
	only := []ctxwindow.Strategy{ctxwindow.DropReasoning{}}
	hasReasoning := func(m agentloop.Message) bool {
		return slices.ContainsFunc(m.Parts, func(p agentloop.Part) bool { return p.Type == agentloop.PartReasoning })
	}

	// Just over budget: only the oldest reasoning goes.
	req, rep, err := shapeWith(t, h, tokens(h...)-10, ctxwindow.Config{Strategies: only})
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Messages; len(got) != len(h) || hasReasoning(got[1]) || !hasReasoning(got[3]) || !hasReasoning(got[4]) {
		t.Fatalf("sent %q; want only the first answer's reasoning left out", texts(got))
	}
	if len(rep.Applied) != 1 || rep.Applied[0] != (ctxwindow.DropReasoning{}) {
		t.Fatalf("Applied = %v, want DropReasoning", rep.Applied)
	}

	// Far over budget: all reasoning before the newest user message goes,
	// the message that held only reasoning too; the turn in progress keeps
	// its reasoning, and the request stays over budget.
	req, _, err = shapeWith(t, h, 100, ctxwindow.Config{Strategies: only})
	if !errors.Is(err, ctxwindow.ErrOverBudget) {
		t.Fatalf("err = %v, want ErrOverBudget", err)
	}
	want := []string{"one", "a1", "two", "a2", "three", "", "tool:c1"}
	if diff := cmp.Diff(want, texts(req.Messages)); diff != "" {
		t.Fatalf("sent messages (-want +got):\n%s", diff)
	}
	for i, m := range req.Messages[:4] {
		if hasReasoning(m) {
			t.Fatalf("message %d still has reasoning", i)
		}
	}
	if !hasReasoning(req.Messages[5]) {
		t.Fatal("the reasoning of the turn in progress was left out")
	}
}

func TestShortenResults_SendsOldResultsAsPreviewsAndTheNewestWhole(t *testing.T) {
	big := func(c byte) string { return strings.Repeat(string(c), 5000) + "END" }
	h := agentloop.History{
		user("go"),
		assistant(call("c1")), result("c1", big('a')),
		assistant(call("c2")), result("c2", big('b')),
		assistant(call("c3")), result("c3", big('c')),
	}
	content := func(req *agentloop.Request, i int) string { return req.Messages[i].Parts[0].ToolResult.Content }

	// A little over budget: the oldest result alone is shortened.
	req, _, err := shapeWith(t, h, tokens(h...)-100, ctxwindow.Config{Strategies: []ctxwindow.Strategy{ctxwindow.ShortenResults{Preview: 300}}})
	if err != nil {
		t.Fatal(err)
	}
	c1 := content(req, 2)
	if !strings.HasPrefix(c1, strings.Repeat("a", 200)) || !strings.HasSuffix(c1, "aEND") || len(c1) > 500 {
		t.Fatalf("c1 = %q; want its first 200 and last 100 bytes around a marker", c1)
	}
	if !strings.Contains(c1, "[… 4703 bytes left out here to save context: bytes 200 to 4903 of 5003 …]") {
		t.Fatalf("c1's marker = %q", c1)
	}
	if content(req, 4) != big('b') || content(req, 6) != big('c') {
		t.Fatal("newer results were shortened although the oldest one was enough")
	}

	// Far over budget: every result but the newest turn's is shortened.
	req, _, err = shapeWith(t, h, 100, ctxwindow.Config{Strategies: []ctxwindow.Strategy{ctxwindow.ShortenResults{}}})
	if !errors.Is(err, ctxwindow.ErrOverBudget) {
		t.Fatalf("err = %v, want ErrOverBudget", err)
	}
	if len(content(req, 2)) > 1500 || len(content(req, 4)) > 1500 || content(req, 6) != big('c') {
		t.Fatalf("result lengths %d, %d, %d; want the first two shortened to about 1 KB and the newest whole",
			len(content(req, 2)), len(content(req, 4)), len(content(req, 6)))
	}

	// Keep 2 keeps the two newest turns' results whole.
	req, _, _ = shapeWith(t, h, 100, ctxwindow.Config{Strategies: []ctxwindow.Strategy{ctxwindow.ShortenResults{Keep: 2}}})
	if len(content(req, 2)) > 1500 || content(req, 4) != big('b') {
		t.Fatalf("with Keep 2: result lengths %d, %d", len(content(req, 2)), len(content(req, 4)))
	}
}

func TestWindow_KeepsThePinnedMessagesAndNotesTheGap(t *testing.T) {
	h := agentloop.History{
		agentloop.SystemMessage("rules"),
		user("the task"), assistant(text("a1")),
		user(filler(400)), assistant(text(filler(400)), call("c1")), result("c1", filler(400)),
		user("newest"), assistant(text("working"), call("c2")), result("c2", "r2"),
	}
	req, rep, err := shapeWith(t, h, tokens(h[0], h[1], h[6], h[7], h[8])+40, ctxwindow.Config{Strategies: []ctxwindow.Strategy{ctxwindow.SlidingWindow{}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"rules", "the task", "[4 earlier messages of this conversation are left out here to fit the context window.]", "newest", "working", "tool:c2"}
	if diff := cmp.Diff(want, texts(req.Messages)); diff != "" {
		t.Fatalf("sent messages (-want +got):\n%s", diff)
	}
	if rep.Sent != 6 || rep.Messages != 9 || rep.After > rep.Budget {
		t.Fatalf("report = %+v", rep)
	}
}

func TestWindow_LeavesOutTheOldestTurnsFirst(t *testing.T) {
	h := agentloop.History{user("one task")}
	for i := range 10 {
		id := string(rune('a' + i))
		h = append(h, assistant(text("step "+id), call(id)), result(id, filler(200)))
	}
	budget := tokens(h[0]) + tokens(h[15:]...) + 40 // the last three turns
	req, _, err := shapeWith(t, h, budget, ctxwindow.Config{Strategies: []ctxwindow.Strategy{ctxwindow.SlidingWindow{}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"one task", "[14 earlier messages of this conversation are left out here to fit the context window.]",
		"step h", "tool:h", "step i", "tool:i", "step j", "tool:j"}
	if diff := cmp.Diff(want, texts(req.Messages)); diff != "" {
		t.Fatalf("sent messages (-want +got):\n%s", diff)
	}
}

func TestWindow_AloneFitsAnyHistoryWhosePinnedMessagesFit(t *testing.T) {
	for seed := range 30 {
		g := newGen(uint64(1000 + seed))
		h := g.history(1 + g.r.IntN(10))
		budget := pinnedTokens(h, ctxwindow.Bytes{}) + 100
		if _, _, err := shapeWith(t, h, budget, ctxwindow.Config{Strategies: []ctxwindow.Strategy{ctxwindow.SlidingWindow{}}}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

func TestManager_AnEmptyStrategyListShapesNothing(t *testing.T) {
	h := agentloop.History{user("one"), assistant(text(filler(4000))), user("two")}
	req, rep, err := shapeWith(t, h, 100, ctxwindow.Config{Strategies: []ctxwindow.Strategy{}})
	if !errors.Is(err, ctxwindow.ErrOverBudget) || len(req.Messages) != 3 || rep.Applied != nil {
		t.Fatalf("err %v, %d messages sent, applied %v; want ErrOverBudget and nothing changed", err, len(req.Messages), rep.Applied)
	}
}

// When even the verbatim tail after a summary is too long, the window
// leaves out the oldest of its turns and keeps the summary.
func TestWindow_KeepsTheSummary(t *testing.T) {
	h := agentloop.History{user("the task")}
	for i := range 12 {
		id := string(rune('a' + i))
		h = append(h, assistant(text("step "+id), call(id)), result(id, filler(800)))
	}
	wordy := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text("A long summary: " + filler(1200))}, nil
	})
	s := ctxwindow.Summarize{Model: wordy, Recent: 0.8, MaxTokens: 400}
	req, rep, err := shapeWith(t, h, 1000, ctxwindow.Config{Strategies: []ctxwindow.Strategy{s, ctxwindow.SlidingWindow{}}})
	if err != nil {
		t.Fatal(err)
	}
	got := texts(req.Messages)
	if rep.Summary == nil || len(got) < 4 || !strings.HasPrefix(got[1], "[Summary of the earlier part") || !strings.Contains(got[2], "earlier messages of this conversation are left out") {
		t.Fatalf("sent %q; want the task, the summary, a note, then the newest turns", got)
	}
	if last := got[len(got)-1]; last != "tool:l" {
		t.Fatalf("the latest turn is missing: %q", got)
	}
}
