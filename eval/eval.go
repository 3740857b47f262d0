// Package eval measures an agent before it ships: it runs a [Dataset] of
// cases (an input, and scorers that say what a good run looks like)
// against an [agentloop.Agent] with any model, and reports each case's
// scores, output, tool calls, token usage, cost and latency, as a table
// and as JSON.
//
// Scorers judge the tool trajectory ([Trajectory]), the final output
// ([Exact], [Contains], [Schema], [Check] with a Go func) or the whole run
// against a rubric with an LLM ([Judge]; any model can judge, and a
// simtest model makes a deterministic judge for tests). A case's score is
// the mean of its scores, and it passes when that reaches the dataset's
// threshold.
//
// [Dataset.Test] runs a dataset inside go test, one subtest per case;
// [Dataset.Run] runs it anywhere. The command eval/cmd/evalreport prints a saved report, gates
// CI on its score and compares two runs.
package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
)

// Dataset is a set of cases and what a good run of each looks like.
type Dataset struct {
	// Name names the dataset in reports.
	Name string
	// Cases are run in order.
	Cases []Case
	// Scorers score every case, before the case's own scorers.
	Scorers []Scorer
	// Threshold is the score (0 to 1) a case needs to pass; 0 means 1:
	// every scorer fully satisfied.
	Threshold float64
}

// Case is one input and the scorers that judge its run.
type Case struct {
	// Name names the case; unique within its dataset.
	Name string
	// Input is the conversation the run starts from, usually one user
	// message.
	Input agentloop.History
	// Scorers score this case, after the dataset's.
	Scorers []Scorer
}

// Scorer scores one run. Implementations must be safe for concurrent use.
type Scorer interface {
	// Score judges run. It does not modify run.
	Score(ctx context.Context, run *Run) Score
}

// Score is one scorer's verdict on a run.
type Score struct {
	// Scorer names the scorer: "trajectory", "exact", "contains",
	// "schema", "judge", or the name given to [Check].
	Scorer string `json:"scorer"`
	// Value is between 0 (bad) and 1 (good).
	Value float64 `json:"value"`
	// Reason says why, in a few words; "" when Value is 1 and there is
	// nothing to say.
	Reason string `json:"reason,omitempty"`
}

// Run is what one case's run did, as scorers see it.
type Run struct {
	// Case is the case run.
	Case *Case
	// Text is the final answer ("" when the run failed).
	Text string
	// Calls are the tool calls the model made, in order.
	Calls []agentloop.ToolCall
	// Results are the tool results, in the order they were ready.
	Results []agentloop.ToolResult
	// History is the run's whole history (the input included).
	History agentloop.History
	// Usage counts the run's tokens; Turns its model calls.
	Usage agentloop.Usage
	Turns int
	// Latency is the run's wall-clock time.
	Latency time.Duration
	// Err is the run's error; nil when it ended with a Final.
	Err error
}

// Price is what a model's tokens cost, in any currency unit per million
// tokens. The zero value makes every cost 0.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Cost returns what u costs at p.
func (p Price) Cost(u agentloop.Usage) float64 {
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output) / 1e6
}

// Options tune [Dataset.Run] and [Dataset.Test]. The zero value (or nil) is useful.
type Options struct {
	// Price turns token usage into cost; zero means no cost.
	Price Price
}

// Run runs every case of d on agent, one after the other, and scores
// each. A failed run is a result (score 0), not an error; Run fails only
// when ctx is done. opts may be nil.
func (d *Dataset) Run(ctx context.Context, agent *agentloop.Agent, opts *Options) (*Report, error) {
	r := newReport(agent, d, opts)
	for i := range d.Cases {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		r.add(runCase(ctx, agent, d, &d.Cases[i], r.price))
	}
	return r, nil
}

// EnvDir names the environment variable whose folder [Test] writes its
// reports into, as <test name>.json, for eval/cmd/evalreport.
//
//	AGENTLOOP_EVAL_DIR=out go test ./... && go run ./eval/cmd/evalreport -min 0.9 out/*.json
const EnvDir = "AGENTLOOP_EVAL_DIR"

// Test runs d on agent inside a test: one subtest per case (named after
// it), which logs the case's scores and fails when the case is below the
// threshold. It returns the report. When the environment variable
// AGENTLOOP_EVAL_DIR names a folder, the report is written there as
// <test name>.json. opts may be nil.
func (d *Dataset) Test(t *testing.T, agent *agentloop.Agent, opts *Options) *Report {
	t.Helper()
	r := newReport(agent, d, opts)
	for i := range d.Cases {
		c := &d.Cases[i]
		t.Run(c.Name, func(t *testing.T) {
			res := runCase(t.Context(), agent, d, c, r.price)
			r.add(res)
			for _, s := range res.Scores {
				t.Log(strings.TrimSpace(fmt.Sprintf("%s: %.2f %s", s.Scorer, s.Value, s.Reason)))
			}
			if res.Error != "" {
				t.Logf("run failed: %s", res.Error)
			}
			if !res.Pass {
				t.Errorf("eval: case %q scored %.2f, below the threshold %.2f", c.Name, res.Score, r.Threshold)
			}
		})
	}
	if dir := os.Getenv(EnvDir); dir != "" {
		name := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_")
		if err := r.WriteFile(filepath.Join(dir, name+".json")); err != nil {
			t.Error(err)
		}
	}
	return r
}

// runCase runs one case and scores it.
func runCase(ctx context.Context, agent *agentloop.Agent, d *Dataset, c *Case, price Price) CaseResult {
	run := &Run{Case: c, History: c.Input}
	start := time.Now()
	for item, err := range agent.Stream(ctx, c.Input, nil) {
		if err != nil {
			run.Err = err
			if h, ok := agentloop.HistoryOf(err); ok {
				run.History = h
			}
			break
		}
		switch it := item.(type) {
		case agentloop.ToolCallReady:
			run.Calls = append(run.Calls, it.Call)
		case agentloop.ToolResultReady:
			run.Results = append(run.Results, it.Result)
		case agentloop.TurnEnd:
			run.Usage = run.Usage.Add(it.Usage)
			run.Turns++
		case agentloop.Final:
			run.Text, run.History = it.Text, it.History
		case agentloop.Pending:
			run.History = it.History
			run.Err = errors.New("eval: the run ended pending (client tools or approvals)")
		}
	}
	run.Latency = time.Since(start)

	res := CaseResult{
		Name: c.Name, Output: run.Text, Usage: run.Usage, Turns: run.Turns,
		LatencyMS: float64(run.Latency.Microseconds()) / 1000, Cost: price.Cost(run.Usage),
		Calls: make([]Call, len(run.Calls)),
	}
	for i, call := range run.Calls {
		res.Calls[i] = Call{Name: call.Name, Args: call.Args}
	}
	if run.Err != nil {
		res.Error = run.Err.Error()
	}
	scorers := append(d.Scorers[:len(d.Scorers):len(d.Scorers)], c.Scorers...)
	sum := 0.0
	for _, s := range scorers {
		sc := s.Score(ctx, run)
		sc.Value = min(max(sc.Value, 0), 1)
		res.Scores = append(res.Scores, sc)
		sum += sc.Value
	}
	switch {
	case run.Err != nil:
		res.Score = 0
	case len(scorers) > 0:
		res.Score = sum / float64(len(scorers))
	default:
		res.Score = 1
	}
	res.Pass = res.Score >= threshold(d)
	return res
}

func threshold(d *Dataset) float64 {
	if d.Threshold == 0 {
		return 1
	}
	return d.Threshold
}

// finalJSON returns text without the Markdown code fence models put around
// JSON.
func finalJSON(text string) string {
	raw := strings.TrimSpace(text)
	if body, ok := strings.CutPrefix(raw, "```"); ok {
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:]
		}
		if inner, ok := strings.CutSuffix(strings.TrimSpace(body), "```"); ok {
			raw = strings.TrimSpace(inner)
		}
	}
	return raw
}

// marshal is json.Marshal for values that cannot fail.
func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
