package eval_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/eval"
	"github.com/agentloop/agentloop/simtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func call(name, args string) agentloop.ToolCall {
	return agentloop.ToolCall{ID: "x", Name: name, Args: json.RawMessage(args)}
}

func score(t *testing.T, s eval.Scorer, run *eval.Run) eval.Score {
	t.Helper()
	if run.Case == nil {
		run.Case = &eval.Case{Name: "c", Input: agentloop.History{agentloop.UserMessage("q")}}
	}
	return s.Score(t.Context(), run)
}

func TestTrajectory_ScoresWhichToolsInWhichOrderWithWhichArguments(t *testing.T) {
	want := eval.Trajectory(eval.Call{Name: "get_weather", Args: json.RawMessage(`{"city": "Paris"}`)}, eval.Call{Name: "add"})
	cases := map[string]struct {
		calls  []agentloop.ToolCall
		value  float64
		reason string
	}{
		"same":              {[]agentloop.ToolCall{call("get_weather", `{"city":"Paris"}`), call("add", `{"a":1}`)}, 1, ""},
		"extra arg keys":    {[]agentloop.ToolCall{call("get_weather", `{"city":"Paris","unit":"C"}`), call("add", `{}`)}, 1, ""},
		"other argument":    {[]agentloop.ToolCall{call("get_weather", `{"city":"Rome"}`), call("add", `{}`)}, 0.5, `call 1: want get_weather({"city": "Paris"}), got get_weather({"city":"Rome"})`},
		"swapped order":     {[]agentloop.ToolCall{call("add", `{}`), call("get_weather", `{"city":"Paris"}`)}, 0, `call 1: want get_weather({"city": "Paris"}), got add({})`},
		"missing call":      {[]agentloop.ToolCall{call("get_weather", `{"city":"Paris"}`)}, 0.5, "call 2: want add(…), got no call"},
		"one call too many": {[]agentloop.ToolCall{call("get_weather", `{"city":"Paris"}`), call("add", `{}`), call("add", `{}`)}, 2.0 / 3, "call 3: want no call, got add({})"},
		"no call":           {nil, 0, `call 1: want get_weather({"city": "Paris"}), got no call`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := score(t, want, &eval.Run{Calls: tc.calls})
			assert.Equal(t, "trajectory", s.Scorer)
			assert.InDelta(t, tc.value, s.Value, 1e-9)
			assert.Equal(t, tc.reason, s.Reason)
		})
	}
	assert.Equal(t, 1.0, score(t, eval.Trajectory(), &eval.Run{}).Value, "no call wanted, none made")
	assert.Equal(t, 0.0, score(t, eval.Trajectory(), &eval.Run{Calls: []agentloop.ToolCall{call("add", `{}`)}}).Value)
}

func TestOutputScorers_ExactContainsSchemaAndCheck(t *testing.T) {
	schema, err := agentloop.SchemaFor[struct {
		City string `json:"city"`
		Temp int    `json:"temp"`
	}]()
	require.NoError(t, err)
	bySchema, err := eval.Schema(schema)
	require.NoError(t, err)
	check := eval.Check("short", func(run *eval.Run) error {
		if len(run.Text) > 20 {
			return errors.New("longer than 20 bytes")
		}
		return nil
	})
	cases := []struct {
		scorer eval.Scorer
		text   string
		value  float64
		reason string
	}{
		{eval.Exact("Sunny."), " Sunny.\n", 1, ""},
		{eval.Exact("Sunny."), "sunny.", 0, `want "Sunny.", got "sunny."`},
		{eval.Contains("Paris", "sunny"), "Paris is sunny", 1, ""},
		{eval.Contains("Paris", "sunny"), "Paris is rainy", 0, `want text containing ["Paris" "sunny"], got "Paris is rainy"`},
		{bySchema, `{"city": "Paris", "temp": 21}`, 1, ""},
		{bySchema, "```json\n{\"city\": \"Paris\", \"temp\": 21}\n```", 1, ""},
		{bySchema, `{"city": "Paris", "temp": "warm"}`, 0, "the answer breaks the schema"},
		{bySchema, `Paris, 21°`, 0, "the answer is not JSON"},
		{check, "Sunny.", 1, ""},
		{check, "Sunny all day long in Paris.", 0, "longer than 20 bytes"},
	}
	for _, tc := range cases {
		s := score(t, tc.scorer, &eval.Run{Text: tc.text})
		assert.Equal(t, tc.value, s.Value, "%s on %q: %s", s.Scorer, tc.text, s.Reason)
		assert.Contains(t, s.Reason, tc.reason)
	}
	_, err = eval.Schema(json.RawMessage(`{"type": 5}`))
	assert.ErrorContains(t, err, "eval: invalid schema")
}

func TestJudge_GradesWithAnyModelAgainstTheRubric(t *testing.T) {
	judge := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text(`{"score": 0.5, "reason": "Half right."}`)}})
	run := &eval.Run{
		Case:    &eval.Case{Input: agentloop.History{agentloop.UserMessage("Weather in Paris?")}},
		Text:    "Sunny.",
		Calls:   []agentloop.ToolCall{call("get_weather", `{"city":"Paris"}`)},
		Results: []agentloop.ToolResult{{CallID: "x", Name: "get_weather", Content: "sunny in Paris"}},
	}
	s := (&eval.Judge{Model: judge, Rubric: "Names the city."}).Score(t.Context(), run)
	assert.Equal(t, eval.Score{Scorer: "judge", Value: 0.5, Reason: "Half right."}, s)

	req := judge.Requests()[0]
	assert.Equal(t, eval.JudgeSystem, req.System)
	prompt := req.Messages[0].Text()
	for _, want := range []string{"Rubric:\nNames the city.", "user: Weather in Paris?", `get_weather({"city":"Paris"}) -> sunny in Paris`, "Final answer:\nSunny."} {
		assert.Contains(t, prompt, want)
	}
	require.NotNil(t, req.Settings.ResponseFormat, "the verdict is asked for as structured output")
}

func TestJudge_AFailingJudgeScoresZeroAndSaysWhy(t *testing.T) {
	judge := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Text("Looks fine to me!")}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text(`{"score": 3, "reason": "Great."}`)}},
	)
	s := score(t, &eval.Judge{Model: judge, Rubric: "r"}, &eval.Run{Text: "a"})
	assert.Equal(t, 0.0, s.Value)
	assert.Contains(t, s.Reason, "the judge failed")
	assert.Equal(t, 2, judge.Calls(), "a malformed verdict is asked for again once")
}

// weatherAgent answers "Weather in <city>?" with one get_weather call; its
// model fails on "crash".
func weatherAgent(t *testing.T) *agentloop.Agent {
	t.Helper()
	tool, err := agentloop.NewTool("get_weather", "Forecast.", func(ctx context.Context, a struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + a.City, nil
	})
	require.NoError(t, err)
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == agentloop.RoleTool:
			return []simtest.Step{simtest.Text("It is " + last.Parts[0].ToolResult.Content + "."), simtest.Usage(100, 10)}, nil
		case last.Text() == "crash":
			return []simtest.Step{simtest.Usage(5, 0), simtest.Fail("model down")}, nil
		}
		city := strings.TrimSuffix(strings.TrimPrefix(last.Text(), "Weather in "), "?")
		return []simtest.Step{simtest.Call("", "get_weather", map[string]string{"city": city}), simtest.Usage(50, 5)}, nil
	})
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{tool}}
}

func input(s string) agentloop.History { return agentloop.History{agentloop.UserMessage(s)} }

func TestRun_ScoresEachCaseAndSumsUsageCostAndLatency(t *testing.T) {
	d := &eval.Dataset{
		Name:      "weather",
		Threshold: 0.5,
		Scorers:   []eval.Scorer{eval.Contains("sunny")},
		Cases: []eval.Case{
			{Name: "paris", Input: input("Weather in Paris?"), Scorers: []eval.Scorer{eval.Trajectory(eval.Call{Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)})}},
			{Name: "half", Input: input("Weather in Rome?"), Scorers: []eval.Scorer{eval.Exact("Rainy.")}},
			{Name: "crash", Input: input("crash")},
		},
	}
	r, err := d.Run(t.Context(), weatherAgent(t), &eval.Options{Price: eval.Price{Input: 1, Output: 10}})
	require.NoError(t, err)
	require.Len(t, r.Cases, 3)
	paris, half, crash := r.Cases[0], r.Cases[1], r.Cases[2]

	assert.Equal(t, 1.0, paris.Score)
	assert.True(t, paris.Pass)
	assert.Equal(t, "It is sunny in Paris.", paris.Output)
	assert.Equal(t, []eval.Call{{Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}}, paris.Calls)
	assert.Equal(t, agentloop.Usage{Input: 150, Output: 15}, paris.Usage)
	assert.Equal(t, 2, paris.Turns)
	assert.InDelta(t, (150*1+15*10)/1e6, paris.Cost, 1e-12)
	assert.Positive(t, paris.LatencyMS)

	assert.Equal(t, 0.5, half.Score, "contains passes, exact fails")
	assert.True(t, half.Pass, "0.5 reaches the threshold")

	assert.Equal(t, 0.0, crash.Score, "a failed run scores 0")
	assert.False(t, crash.Pass)
	assert.Contains(t, crash.Error, "model down")

	assert.InDelta(t, 0.5, r.Score, 1e-9)
	assert.Equal(t, 2, r.Passed)
	assert.Equal(t, paris.Usage.Add(half.Usage).Add(crash.Usage), r.Usage)
	assert.InDelta(t, paris.Cost+half.Cost+crash.Cost, r.Cost, 1e-12)
	assert.Equal(t, 0.5, r.Threshold)
}

func TestRun_ZeroThresholdMeansEveryScorerFullySatisfied(t *testing.T) {
	d := &eval.Dataset{Cases: []eval.Case{{Name: "half", Input: input("Weather in Rome?"), Scorers: []eval.Scorer{eval.Contains("Rome"), eval.Exact("no")}}}}
	r, err := d.Run(t.Context(), weatherAgent(t), nil)
	require.NoError(t, err)
	assert.Equal(t, 1.0, r.Threshold)
	assert.False(t, r.Cases[0].Pass)
}

func TestRun_StopsWhenTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := (&eval.Dataset{Cases: []eval.Case{{Name: "a", Input: input("Weather in Rome?")}}}).Run(ctx, weatherAgent(t), nil)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestTest_OneSubtestPerCaseAndTheReportInTheEnvFolder(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(eval.EnvDir, dir)
	d := &eval.Dataset{Name: "weather", Scorers: []eval.Scorer{eval.Contains("sunny")}, Cases: []eval.Case{
		{Name: "paris", Input: input("Weather in Paris?")},
		{Name: "rome", Input: input("Weather in Rome?")},
	}}
	r := d.Test(t, weatherAgent(t), nil)
	assert.Equal(t, 2, r.Passed)
	saved, err := eval.ReadReport(filepath.Join(dir, "TestTest_OneSubtestPerCaseAndTheReportInTheEnvFolder.json"))
	require.NoError(t, err)
	want, err := json.Marshal(r)
	require.NoError(t, err)
	got, err := json.Marshal(saved)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
}

func TestReport_TableAndComparison(t *testing.T) {
	base := &eval.Report{Dataset: "d", Threshold: 1, Score: 0.75, Passed: 1, Cases: []eval.CaseResult{
		{Name: "a", Score: 1, Pass: true}, {Name: "b", Score: 0.5}, {Name: "gone", Score: 1, Pass: true},
	}}
	head := &eval.Report{Dataset: "d", Threshold: 1, Cases: []eval.CaseResult{
		{Name: "a", Score: 0.5, Scores: []eval.Score{{Scorer: "contains", Value: 0, Reason: `want "x"`}, {Scorer: "exact", Value: 1}}},
		{Name: "b", Score: 0.5}, {Name: "new", Score: 1, Pass: true, Error: "boom"},
	}}
	assert.Equal(t, []eval.Change{
		{Name: "a", Base: 1, Head: 0.5, Regression: true},
		{Name: "new", Base: -1, Head: 1},
		{Name: "gone", Base: 1, Head: -1, Regression: true},
	}, eval.Compare(base, head))

	var b strings.Builder
	require.NoError(t, head.WriteTable(&b))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 5)
	assert.Regexp(t, `^CASE +SCORE +PASS +TOKENS +LATENCY +COST +NOTES$`, lines[0])
	assert.Regexp(t, `^a +0\.50 +NO +0\+0 +0ms +0\.0000 +contains 0\.00: want "x"$`, lines[1])
	assert.Contains(t, lines[3], "error: boom")
	assert.Regexp(t, `^TOTAL +0\.00 +0/3 .*threshold 1\.00$`, lines[4])

	path := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, head.WriteFile(path))
	back, err := eval.ReadReport(path)
	require.NoError(t, err)
	assert.Equal(t, head.Cases[0].Scores, back.Cases[0].Scores)
	assert.Equal(t, head.Cases[2].Error, back.Cases[2].Error)
	require.NoError(t, os.WriteFile(path, []byte("{"), 0o644))
	_, err = eval.ReadReport(path)
	assert.ErrorContains(t, err, "eval: "+path)
}
