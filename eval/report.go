package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/agentloop/agentloop"
)

// Report is the result of a dataset's run. Its JSON form is what
// eval/cmd/evalreport reads.
type Report struct {
	// Dataset is the dataset's name; Model the model's, when it names
	// itself ([agentloop.ModelDescriber]).
	Dataset string `json:"dataset"`
	Model   string `json:"model,omitempty"`
	// Threshold is the score a case needed to pass.
	Threshold float64 `json:"threshold"`
	// Score is the mean of the cases' scores; Passed counts the cases that
	// passed.
	Score  float64 `json:"score"`
	Passed int     `json:"passed"`
	// Usage, Cost and LatencyMS sum the cases'.
	Usage     agentloop.Usage `json:"usage"`
	Cost      float64         `json:"cost"`
	LatencyMS float64         `json:"latency_ms"`
	// Cases are the cases' results, in the dataset's order.
	Cases []CaseResult `json:"cases"`

	price Price
}

// CaseResult is one case's run and scores.
type CaseResult struct {
	// Name is the case's name.
	Name string `json:"name"`
	// Score is the mean of Scores (0 for a failed run); Pass says whether
	// it reached the threshold.
	Score float64 `json:"score"`
	Pass  bool    `json:"pass"`
	// Scores are the scorers' verdicts: the dataset's, then the case's.
	Scores []Score `json:"scores"`
	// Output is the final answer; Calls the tool calls, in order.
	Output string `json:"output"`
	Calls  []Call `json:"calls"`
	// Usage, Turns, Cost and LatencyMS measure the run.
	Usage     agentloop.Usage `json:"usage"`
	Turns     int             `json:"turns"`
	Cost      float64         `json:"cost"`
	LatencyMS float64         `json:"latency_ms"`
	// Error is the run's error; "" when it ended with an answer.
	Error string `json:"error,omitempty"`
}

func newReport(agent *agentloop.Agent, d *Dataset, opts *Options) *Report {
	r := &Report{Dataset: d.Name, Threshold: threshold(d), Cases: []CaseResult{}}
	if md, ok := agent.Model.(agentloop.ModelDescriber); ok {
		info := md.ModelInfo()
		r.Model = info.Provider + "/" + info.Model
	}
	if opts != nil {
		r.price = opts.Price
	}
	return r
}

// add appends a case's result and updates the totals.
func (r *Report) add(c CaseResult) {
	r.Cases = append(r.Cases, c)
	sum := 0.0
	for _, c := range r.Cases {
		sum += c.Score
	}
	r.Score = sum / float64(len(r.Cases))
	if c.Pass {
		r.Passed++
	}
	r.Usage = r.Usage.Add(c.Usage)
	r.Cost += c.Cost
	r.LatencyMS += c.LatencyMS
}

// WriteTable writes r as a table: one row per case (score, pass, tokens,
// latency, cost, and the reasons of the scores below 1), then the totals.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tSCORE\tPASS\tTOKENS\tLATENCY\tCOST\tNOTES")
	for _, c := range r.Cases {
		var notes []string
		if c.Error != "" {
			notes = append(notes, "error: "+c.Error)
		}
		for _, s := range c.Scores {
			if s.Value < 1 {
				notes = append(notes, fmt.Sprintf("%s %.2f: %s", s.Scorer, s.Value, s.Reason))
			}
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%d+%d\t%.0fms\t%.4f\t%s\n", c.Name, c.Score, yes(c.Pass),
			c.Usage.Input, c.Usage.Output, c.LatencyMS, c.Cost, oneLine(strings.Join(notes, "; ")))
	}
	fmt.Fprintf(tw, "TOTAL\t%.2f\t%d/%d\t%d+%d\t%.0fms\t%.4f\t%s\n", r.Score, r.Passed, len(r.Cases),
		r.Usage.Input, r.Usage.Output, r.LatencyMS, r.Cost, fmt.Sprintf("threshold %.2f", r.Threshold))
	return tw.Flush()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// WriteFile writes r's JSON form to path.
func (r *Report) WriteFile(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// ReadReport reads a report that [Report.WriteFile] wrote.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", path, err)
	}
	return &r, nil
}

// Change is a case whose result differs between two reports.
type Change struct {
	// Name is the case's name.
	Name string `json:"name"`
	// Base and Head are its scores in the two reports; -1 where the case
	// is missing.
	Base float64 `json:"base"`
	Head float64 `json:"head"`
	// Regression is true when the case passed in base and does not pass
	// (or is missing) in head.
	Regression bool `json:"regression"`
}

// Compare returns the cases whose score differs between base and head,
// in head's order, then those only in base.
func Compare(base, head *Report) []Change {
	old := make(map[string]CaseResult, len(base.Cases))
	for _, c := range base.Cases {
		old[c.Name] = c
	}
	var out []Change
	seen := make(map[string]bool, len(head.Cases))
	for _, c := range head.Cases {
		seen[c.Name] = true
		b, ok := old[c.Name]
		switch {
		case !ok:
			out = append(out, Change{Name: c.Name, Base: -1, Head: c.Score})
		case b.Score != c.Score || b.Pass != c.Pass:
			out = append(out, Change{Name: c.Name, Base: b.Score, Head: c.Score, Regression: b.Pass && !c.Pass})
		}
	}
	for _, c := range base.Cases {
		if !seen[c.Name] {
			out = append(out, Change{Name: c.Name, Base: c.Score, Head: -1, Regression: c.Pass})
		}
	}
	return out
}
