package realollama_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/eval"
	"github.com/agentloop/agentloop/providers/internal/tinyollama"
	"github.com/agentloop/agentloop/simtest"
)

// A session with the real server, recorded by simtest's Recorder, replays
// with no server: the same tool call (the server's id included), result,
// answer and usage. A replay whose agent changed fails naming the first
// difference.
func TestRecordReplay_TheServersSessionReplaysOfflineAndAChangedAgentIsCaught(t *testing.T) {
	root := server(t).URL
	var w weatherTool
	rec := &simtest.Recorder{Model: allProviders[0].model(t, root, tinyollama.Tiny, false)}
	agent := &agentloop.Agent{Model: rec, System: "Be brief.", Tools: []*agentloop.Tool{w.tool(t)}}
	live := stream(t, agent)
	require.NoError(t, live.Err)
	require.Len(t, live.Calls, 1)
	path := filepath.Join(t.TempDir(), "session.json")
	require.NoError(t, rec.Script().WriteFile(path))

	script, err := simtest.LoadScript(path)
	require.NoError(t, err)
	require.Len(t, script.Turns, 2, "the call, then the answer")
	replay := script.Model()
	agent.Model = replay
	again := stream(t, agent)
	require.NoError(t, again.Err)
	assert.Equal(t, live.Calls, again.Calls, "the same call, with the server's id")
	assert.Equal(t, live.Results, again.Results)
	assert.Equal(t, tinyollama.Answer, again.Final.Text)
	assert.Equal(t, live.Final.Usage, again.Final.Usage)
	assert.Equal(t, live.finishes(), again.finishes())
	assert.Equal(t, []string{"Paris", "Paris"}, w.called(), "the tool ran in the replay too")
	assert.Zero(t, replay.Remaining())

	agent.Model = script.Model()
	agent.System = "Be very brief."
	changed := stream(t, agent)
	var ee *simtest.ExpectationError
	require.ErrorAs(t, changed.Err, &ee)
	assert.Equal(t, `simtest: turn 1: system prompt: want "Be brief.", got "Be very brief."`, ee.Error())

	agent.Model, agent.System = script.Model(), "Be brief."
	_, err = agentloop.Text(agent.Stream(t.Context(), agentloop.History{agentloop.UserMessage("What is the weather in Rome?")}, nil))
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, `simtest: turn 1: message 1 (user) text: want "What is the weather in Paris?", got "What is the weather in Rome?"`, ee.Error())
}

// The quickstart's agent (its system prompt and a get_weather tool) on the
// real server, evaluated over a small dataset: the tiny model always looks
// up Paris, so the Paris case passes and the Rome case fails on its
// trajectory, and the report measures the server's real usage and latency.
func TestEval_TheQuickstartAgentOnTheRealServer(t *testing.T) {
	root := server(t).URL
	var w weatherTool
	agent := &agentloop.Agent{
		Model:  allProviders[0].model(t, root, tinyollama.Tiny, false),
		System: "You are a helpful assistant. Use the tools when they help, then answer briefly.",
		Tools:  []*agentloop.Tool{w.tool(t)},
	}
	judge := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text(`{"score": 1, "reason": "An answer was given."}`)}, nil
	})
	weather := func(city string) eval.Scorer {
		return eval.Trajectory(eval.Call{Name: tinyollama.CallName, Args: json.RawMessage(`{"city": "` + city + `"}`)})
	}
	dataset := &eval.Dataset{
		Name:    "quickstart on ollama",
		Scorers: []eval.Scorer{eval.Contains("hello"), &eval.Judge{Model: judge, Rubric: "The assistant answers."}},
		Cases: []eval.Case{
			{Name: "paris", Input: agentloop.History{agentloop.UserMessage("What is the weather in Paris?")}, Scorers: []eval.Scorer{weather("Paris")}},
			{Name: "rome", Input: agentloop.History{agentloop.UserMessage("What is the weather in Rome?")}, Scorers: []eval.Scorer{weather("Rome")}},
		},
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*runTimeout)
	defer cancel()
	report, err := dataset.Run(ctx, agent, &eval.Options{Price: eval.Price{Input: 1, Output: 2}})
	require.NoError(t, err)
	require.Len(t, report.Cases, 2)
	paris, rome := report.Cases[0], report.Cases[1]
	assert.True(t, paris.Pass, "%+v", paris)
	assert.Equal(t, tinyollama.Answer, paris.Output)
	assert.False(t, rome.Pass)
	assert.InDelta(t, 2.0/3, rome.Score, 1e-9, "contains and judge pass, the trajectory does not")
	assert.Contains(t, rome.Scores[2].Reason, `call 1: want get_weather({"city": "Rome"}), got get_weather(`)
	assert.Contains(t, rome.Scores[2].Reason, "Paris")
	assert.Equal(t, 2, paris.Turns, "the call, then the answer")
	assert.Greater(t, paris.Usage.Output, answerTokens, "the call's tokens and the answer's")
	assert.Positive(t, paris.Usage.Input)
	assert.Positive(t, paris.LatencyMS)
	assert.InDelta(t, (float64(report.Usage.Input)+2*float64(report.Usage.Output))/1e6, report.Cost, 1e-12)
	t.Logf("report: score %.2f, %d/%d passed, %d+%d tokens, %.0f ms", report.Score, report.Passed, len(report.Cases), report.Usage.Input, report.Usage.Output, report.LatencyMS)
	if dir := os.Getenv(eval.EnvDir); dir != "" { // for CI's gate (.ci/run)
		require.NoError(t, report.WriteFile(filepath.Join(dir, t.Name()+".json")))
	}
}

// The real server as the judge: its verdict comes through Structured, so
// it is validated. The tiny model's grammar-constrained JSON ignores the
// schema's range and often holds a score like 4 or 8: the judge then
// scores 0 and says why, instead of passing a run on a number out of
// range.
func TestEval_TheRealServerAsTheJudgeIsHeldToTheVerdictSchema(t *testing.T) {
	root := server(t).URL
	judge := &eval.Judge{Model: allProviders[0].model(t, root, tinyollama.Tiny, false), Rubric: "The answer names the city."}
	ctx, cancel := context.WithTimeout(t.Context(), 2*runTimeout)
	defer cancel()
	s := judge.Score(ctx, &eval.Run{Case: &eval.Case{Input: agentloop.History{agentloop.UserMessage("Weather in Paris?")}}, Text: "Sunny in Paris."})
	assert.Equal(t, "judge", s.Scorer)
	if s.Value == 0 {
		assert.Contains(t, s.Reason, "the judge failed: ")
		assert.Contains(t, s.Reason, "the answer breaks the schema")
	} else {
		assert.LessOrEqual(t, s.Value, 1.0, "a verdict in range")
	}
	t.Logf("verdict: %.2f %s", s.Value, s.Reason)
}
