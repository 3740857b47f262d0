// Command evalreport prints eval reports as tables, gates CI on their
// score, and compares two runs.
//
//	AGENTLOOP_EVAL_DIR=out go test ./...             # the eval tests write out/<test>.json
//	go run ./eval/cmd/evalreport out/*.json          # print each report as a table
//	go run ./eval/cmd/evalreport -min 0.9 out/*.json # exit 1 when a report scores below 0.9
//	go run ./eval/cmd/evalreport -base old.json new.json
//
// With -base, it prints the cases whose score changed between the base
// report and the (single) report given, and exits 1 when a case that passed
// in the base does not pass any more. It exits 2 on bad usage or an
// unreadable report.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/agentloop/agentloop/eval"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// errGate and errRegression are reports that did not pass the gate.
var (
	errGate       = errors.New("score below -min")
	errRegression = errors.New("regression")
)

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("evalreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	minScore := fs.Float64("min", 0, "exit 1 when a report's score is below this (0 to 1)")
	base := fs.String("base", "", "compare the report with this base report; exit 1 on a regression")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 || *base != "" && fs.NArg() != 1 {
		fmt.Fprintln(stderr, "evalreport: give the report files (one with -base)")
		return 2
	}
	err := report(fs.Args(), *minScore, *base, stdout)
	switch {
	case errors.Is(err, errGate), errors.Is(err, errRegression):
		fmt.Fprintln(stderr, "evalreport:", err)
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "evalreport:", err)
		return 2
	}
	return 0
}

func report(paths []string, minScore float64, basePath string, stdout io.Writer) error {
	var failed []error
	for _, path := range paths {
		r, err := eval.ReadReport(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s (dataset %q", path, r.Dataset)
		if r.Model != "" {
			fmt.Fprintf(stdout, ", model %s", r.Model)
		}
		fmt.Fprintln(stdout, ")")
		if err := r.WriteTable(stdout); err != nil {
			return err
		}
		if r.Score < minScore {
			failed = append(failed, fmt.Errorf("%s: %w: score %.2f, want at least %.2f", path, errGate, r.Score, minScore))
		}
		if basePath != "" {
			b, err := eval.ReadReport(basePath)
			if err != nil {
				return err
			}
			if err := compare(b, r, basePath, path, stdout); err != nil {
				failed = append(failed, err)
			}
		}
	}
	return errors.Join(failed...)
}

func compare(base, head *eval.Report, basePath, headPath string, stdout io.Writer) error {
	changes := eval.Compare(base, head)
	fmt.Fprintf(stdout, "\n%s → %s: score %.2f → %.2f, passed %d/%d → %d/%d\n", basePath, headPath,
		base.Score, head.Score, base.Passed, len(base.Cases), head.Passed, len(head.Cases))
	if len(changes) == 0 {
		fmt.Fprintln(stdout, "no case changed")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tBASE\tHEAD\t")
	regressions := 0
	for _, c := range changes {
		mark := ""
		if c.Regression {
			mark = "REGRESSION"
			regressions++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, score(c.Base), score(c.Head), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if regressions > 0 {
		return fmt.Errorf("%s: %w: %d case(s) passed in %s and do not now", headPath, errRegression, regressions, basePath)
	}
	return nil
}

func score(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}
