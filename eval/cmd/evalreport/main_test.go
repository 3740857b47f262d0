package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/eval"
)

func write(t *testing.T, r *eval.Report) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), r.Dataset+".json")
	require.NoError(t, r.WriteFile(path))
	return path
}

func evalreport(args ...string) (int, string, string) {
	var out, errOut strings.Builder
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestEvalreport_PrintsTheTableAndGatesOnTheScore(t *testing.T) {
	path := write(t, &eval.Report{Dataset: "weather", Model: "ollama/tiny", Threshold: 1, Score: 0.5, Passed: 1, Cases: []eval.CaseResult{
		{Name: "paris", Score: 1, Pass: true}, {Name: "rome", Score: 0},
	}})
	code, out, _ := evalreport(path)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, `(dataset "weather", model ollama/tiny)`)
	assert.Regexp(t, `(?m)^rome +0\.00 +NO`, out)
	assert.Regexp(t, `(?m)^TOTAL +0\.50 +1/2`, out)

	code, _, errOut := evalreport("-min", "0.5", path)
	assert.Equal(t, 0, code, "the score reaches -min")
	code, _, errOut = evalreport("-min", "0.9", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "score below -min: score 0.50, want at least 0.90")
}

func TestEvalreport_ComparesTwoRunsAndFailsOnARegression(t *testing.T) {
	base := write(t, &eval.Report{Dataset: "base", Score: 1, Passed: 2, Cases: []eval.CaseResult{{Name: "paris", Score: 1, Pass: true}, {Name: "rome", Score: 1, Pass: true}}})
	same := write(t, &eval.Report{Dataset: "same", Score: 1, Passed: 2, Cases: []eval.CaseResult{{Name: "paris", Score: 1, Pass: true}, {Name: "rome", Score: 1, Pass: true}}})
	worse := write(t, &eval.Report{Dataset: "worse", Score: 0.75, Passed: 1, Cases: []eval.CaseResult{{Name: "paris", Score: 1, Pass: true}, {Name: "rome", Score: 0.5}}})

	code, out, _ := evalreport("-base", base, same)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "no case changed")

	code, out, errOut := evalreport("-base", base, worse)
	assert.Equal(t, 1, code)
	assert.Regexp(t, `(?m)^rome +1\.00 +0\.50 +REGRESSION$`, out)
	assert.Contains(t, out, "score 1.00 → 0.75, passed 2/2 → 1/2")
	assert.Contains(t, errOut, "regression: 1 case(s) passed in "+base)
}

func TestEvalreport_BadUsageAndUnreadableReportsExit2(t *testing.T) {
	code, _, errOut := evalreport()
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "give the report files")
	code, _, _ = evalreport("-base", "a.json", "b.json", "c.json")
	assert.Equal(t, 2, code)
	code, _, errOut = evalreport(filepath.Join(t.TempDir(), "missing.json"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "missing.json")
	code, _, _ = evalreport("-help")
	assert.Equal(t, 0, code)
}
