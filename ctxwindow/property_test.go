package ctxwindow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"github.com/agentloop/agentloop/simtest"
)

// summarizer answers every summarizing call with a short summary that
// names how much input it got.
func summarizer() *simtest.Model {
	return simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		in := req.Messages[len(req.Messages)-1].Text()
		return []simtest.Step{simtest.Text(fmt.Sprintf("The user and the assistant exchanged %d bytes of messages about words.", len(in))), simtest.Usage(len(in)/4, 20)}, nil
	})
}

// failingSummarizer fails every summarizing call.
func failingSummarizer() *simtest.Model {
	return simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Fail("overloaded")}, nil
	})
}

// strategyCombos are the strategy lists the property tests shape with, by
// name; those whose name ends in "+window" must always fit.
func strategyCombos() map[string][]ctxwindow.Strategy {
	return map[string][]ctxwindow.Strategy{
		"DropReasoning":                 {ctxwindow.DropReasoning{}},
		"ShortenResults":                {ctxwindow.ShortenResults{Preview: 200}},
		"Summarize":                     {ctxwindow.Summarize{Model: summarizer()}},
		"SlidingWindow+window":          {ctxwindow.SlidingWindow{}},
		"default+window":                nil,
		"all+window":                    {ctxwindow.DropReasoning{}, ctxwindow.ShortenResults{Preview: 300, Keep: 2}, ctxwindow.Summarize{Model: summarizer(), Recent: 0.3}, ctxwindow.SlidingWindow{}},
		"failed summary":                {ctxwindow.Summarize{Model: failingSummarizer()}},
		"failed summary, window+window": {ctxwindow.Summarize{Model: failingSummarizer()}, ctxwindow.SlidingWindow{}},
		"summarize first+window":        {ctxwindow.Summarize{Model: summarizer(), ContextWindow: 3000, MaxTokens: 200}, ctxwindow.DropReasoning{}, ctxwindow.SlidingWindow{}},
		"shorten, window+window":        {ctxwindow.ShortenResults{}, ctxwindow.SlidingWindow{}},
		"reasoning, window+window":      {ctxwindow.DropReasoning{}, ctxwindow.SlidingWindow{}},
	}
}

var testTools = []agentloop.ToolDef{
	{Name: "search", Description: "Search the web.", Schema: []byte(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)},
	{Name: ctxwindow.ReadResultToolName, Description: "Read more of a result.", Schema: []byte(`{"type":"object","properties":{"callId":{"type":"string"}},"required":["callId"]}`)},
}

// shapeOnce shapes one request for h with a fresh Manager and checks what
// every strategy promises; it returns the request and the hook's error.
func shapeOnce(t *testing.T, h agentloop.History, budget int, strategies []ctxwindow.Strategy, large *ctxwindow.LargeResults, tools []agentloop.ToolDef) (*agentloop.Request, error) {
	t.Helper()
	const reserve = 1000
	m, err := ctxwindow.New(ctxwindow.Config{ContextWindow: budget + reserve, OutputReserve: reserve, Strategies: strategies, LargeResults: large})
	if err != nil {
		t.Fatal(err)
	}
	req := &agentloop.Request{Turn: 1, System: "You are a test.", Messages: h.Clone(), Tools: tools}
	err = m.Hooks().BeforeModelCall(context.Background(), req)
	checkSent(t, h, req.Messages)
	if err == nil {
		if got := requestTokens(req, ctxwindow.Bytes{}); got > budget {
			t.Fatalf("the shaped request needs %d tokens, over the budget of %d", got, budget)
		}
	} else if !errors.Is(err, ctxwindow.ErrOverBudget) {
		t.Fatalf("BeforeModelCall: %v", err)
	}
	return req, err
}

// Over random histories, every strategy alone and in lists sends a valid
// transcript that the three providers' request builders, and servers that
// check what the real APIs check, accept; it keeps the newest user message;
// and every list that ends with the window fits the budget whenever what
// every request keeps fits.
func TestStrategies_RandomHistoriesStayValidFitAndAreAccepted(t *testing.T) {
	ps := newProviderServers(t)
	seeds := 16
	if testing.Short() {
		seeds = 6
	}
	sent := map[string]bool{} // requests already sent, by their JSON
	est := ctxwindow.Bytes{}
	for seed := range seeds {
		g := newGen(uint64(seed))
		h := g.history(1 + g.r.IntN(14))
		tools := testTools[:1+seed%2]
		full := &agentloop.Request{System: "You are a test.", Messages: h, Tools: tools}
		total := requestTokens(full, est)
		floor := requestTokens(&agentloop.Request{System: full.System, Tools: tools}, est) + pinnedTokens(h, est) + 300
		for name, strategies := range strategyCombos() {
			for _, budget := range []int{floor, (floor + total) / 2, total} {
				t.Run(fmt.Sprintf("seed%d/%s/budget%d", seed, name, budget), func(t *testing.T) {
					var large *ctxwindow.LargeResults
					if seed%3 == 0 {
						large = &ctxwindow.LargeResults{Limit: 8000, Preview: 1000}
					}
					req, err := shapeOnce(t, h, budget, strategies, large, tools)
					mustFit := len(name) > 7 && name[len(name)-7:] == "+window"
					if err != nil && (mustFit || budget > total) {
						t.Fatalf("over budget (%v); what every request keeps needs about %d of %d", err, floor-300, budget)
					}
					// Strategies often shape alike: send each request once.
					key, err := json.Marshal(req)
					if err != nil {
						t.Fatal(err)
					}
					if !sent[string(key)] {
						sent[string(key)] = true
						ps.send(t, req)
					}
				})
			}
		}
	}
}

// FuzzStrategies checks the promises of every strategy list on histories
// and budgets made from the fuzzer's input.
func FuzzStrategies(f *testing.F) {
	f.Add(uint64(1), uint8(5), uint16(100))
	f.Add(uint64(7), uint8(14), uint16(0))
	f.Add(uint64(42), uint8(1), uint16(65535))
	est := ctxwindow.Bytes{}
	combos := strategyCombos()
	f.Fuzz(func(t *testing.T, seed uint64, turns uint8, frac uint16) {
		g := newGen(seed)
		h := g.history(1 + int(turns%16))
		full := &agentloop.Request{System: "You are a test.", Messages: h, Tools: testTools}
		total := requestTokens(full, est)
		floor := requestTokens(&agentloop.Request{System: full.System, Tools: testTools}, est) + pinnedTokens(h, est) + 300
		budget := floor + int(float64(max(total-floor, 0))*float64(frac)/65535)
		for name, strategies := range combos {
			_, err := shapeOnce(t, h, budget, strategies, &ctxwindow.LargeResults{}, testTools)
			if err != nil && len(name) > 7 && name[len(name)-7:] == "+window" {
				t.Fatalf("%s: over budget: %v", name, err)
			}
		}
	})
}
