package simtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// live stands in for a real model: it reasons, calls get_weather, then
// answers from the result.
func live() *simtest.Model {
	return simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{
			simtest.Reasoning("The user wants the weather."), simtest.Signature("sig-1"),
			simtest.Text("Let me look."),
			simtest.Call("call_a1", "get_weather", `{"city":"Paris"}`),
			simtest.Usage(30, 9), simtest.Finish(agentloop.FinishToolCalls),
		}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("It is sunny in Paris."), simtest.Usage(50, 7), simtest.Finish(agentloop.FinishStop)}},
	)
}

func weatherTool(t *testing.T, name string) *agentloop.Tool {
	t.Helper()
	tool, err := agentloop.NewTool(name, "Forecast for a city.", func(ctx context.Context, a struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + a.City, nil
	})
	require.NoError(t, err)
	return tool
}

func weatherAgent(t *testing.T, m agentloop.Model) *agentloop.Agent {
	return &agentloop.Agent{Model: m, System: "Be brief.", Tools: []*agentloop.Tool{weatherTool(t, "get_weather")}}
}

// items runs the agent and returns its items (with the Final's history
// left out, as ids may differ) and its error.
func items(t *testing.T, a *agentloop.Agent, prompt string) ([]agentloop.Item, error) {
	t.Helper()
	var out []agentloop.Item
	for it, err := range a.Stream(t.Context(), agentloop.History{agentloop.UserMessage(prompt)}, nil) {
		if err != nil {
			return out, err
		}
		if f, ok := it.(agentloop.Final); ok {
			f.History = nil
			it = f
		}
		out = append(out, it)
	}
	return out, nil
}

// record runs the weather agent against live() through a Recorder and
// returns the script, through its JSON form.
func record(t *testing.T, redact func(string) string) *simtest.Script {
	t.Helper()
	rec := &simtest.Recorder{Model: live(), Redact: redact}
	_, err := items(t, weatherAgent(t, rec), "Weather in Paris?")
	require.NoError(t, err)
	data, err := json.Marshal(rec.Script())
	require.NoError(t, err)
	s, err := simtest.ParseScript(data)
	require.NoError(t, err, "a recorded script parses back: %s", data)
	return s
}

func TestRecorder_TheReplayGivesTheSameItemsWithNoModel(t *testing.T) {
	want, err := items(t, weatherAgent(t, live()), "Weather in Paris?")
	require.NoError(t, err)

	script := record(t, nil)
	require.Len(t, script.Turns, 2)
	replay := script.Model()
	got, err := items(t, weatherAgent(t, replay), "Weather in Paris?")
	require.NoError(t, err)
	assert.Empty(t, cmp.Diff(want, got), "replayed items")
	assert.Zero(t, replay.Remaining())
}

func TestRecorder_RecordsWhatTheAgentSentAsTheExpectation(t *testing.T) {
	script := record(t, nil)
	first, second := script.Turns[0].Expect, script.Turns[1].Expect
	assert.Equal(t, "Be brief.", first.System)
	assert.Equal(t, []string{"get_weather"}, first.Tools)
	assert.Equal(t, []simtest.Message{{Role: agentloop.RoleUser, Text: "Weather in Paris?"}}, first.Messages)
	require.Len(t, second.Messages, 3)
	assert.JSONEq(t, `{"city": "Paris"}`, string(second.Messages[1].Calls[0].Args))
	assert.Equal(t, []simtest.MessageResult{{Name: "get_weather", Content: "sunny in Paris"}}, second.Messages[2].Results)
}

func TestReplay_AChangedAgentFailsNamingTheFirstDifference(t *testing.T) {
	cases := map[string]struct {
		agent  func(a *agentloop.Agent)
		prompt string
		want   string
	}{
		"system prompt": {func(a *agentloop.Agent) { a.System = "Be verbose." }, "Weather in Paris?",
			`simtest: turn 1: system prompt: want "Be brief.", got "Be verbose."`},
		"renamed tool": {func(a *agentloop.Agent) { a.Tools = []*agentloop.Tool{weatherTool(t, "forecast")} }, "Weather in Paris?",
			"simtest: turn 1: tools offered: want [get_weather], got [forecast]"},
		"user message": {func(a *agentloop.Agent) {}, "Weather in Rome?",
			`simtest: turn 1: message 1 (user) text: want "Weather in Paris?", got "Weather in Rome?"`},
	}
	script := record(t, nil)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := weatherAgent(t, script.Model())
			tc.agent(a)
			_, err := items(t, a, tc.prompt)
			var ee *simtest.ExpectationError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tc.want, ee.Error())
		})
	}
}

func TestReplay_ADifferentToolResultIsCaughtOnTheNextTurn(t *testing.T) {
	script := record(t, nil)
	a := weatherAgent(t, script.Model())
	a.Tools = []*agentloop.Tool{mustTool(t, "get_weather", "rainy")}
	_, err := items(t, a, "Weather in Paris?")
	assert.ErrorContains(t, err, `simtest: turn 2: message 3 (tool) result 1: want get_weather: "sunny in Paris", got get_weather: "rainy"`)
}

func mustTool(t *testing.T, name, result string) *agentloop.Tool {
	t.Helper()
	tool, err := agentloop.NewTool(name, "Forecast for a city.", func(ctx context.Context, a struct {
		City string `json:"city"`
	}) (string, error) {
		return result, nil
	})
	require.NoError(t, err)
	return tool
}

func TestRecorder_RedactKeepsSecretsOutOfTheFileAndAnyKeepsTheReplayMatching(t *testing.T) {
	const secret = "sk-live-123"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, simtest.Any) }
	rec := &simtest.Recorder{Model: live(), Redact: redact}
	a := weatherAgent(t, rec)
	a.System = "Be brief. Your key is " + secret + "."
	_, err := items(t, a, "Weather in Paris?")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, rec.Script().WriteFile(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(data), secret)

	script, err := simtest.LoadScript(path)
	require.NoError(t, err)
	a.Model = script.Model()
	a.System = "Be brief. Your key is sk-other-456."
	_, err = items(t, a, "Weather in Paris?")
	assert.NoError(t, err, "the redacted part matches any key")
}

func TestExpect_AnyMatchesIdsAndTimestamps(t *testing.T) {
	cases := []struct {
		want, got string
		match     bool
	}{
		{"at " + simtest.Any + " UTC", "at 2026-11-25T21:00:00 UTC", true},
		{"at " + simtest.Any + " UTC", "at noon CET", false},
		{simtest.Any, "", true},
		{"a" + simtest.Any + "b" + simtest.Any + "c", "a1b2c", true},
		{"a" + simtest.Any + "b" + simtest.Any + "c", "a1c2b", false},
		{"exact", "exact ", false},
	}
	for _, tc := range cases {
		m := simtest.NewModel(simtest.Turn{Expect: simtest.Expect{Messages: []simtest.Message{{Role: agentloop.RoleUser, Text: tc.want}}}})
		_, err := stream(t, m, &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage(tc.got)}})
		assert.Equal(t, tc.match, err == nil, "%q against %q: %v", tc.want, tc.got, err)
	}
	args := func(want, got string) error {
		call := agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "x", Name: "f", Args: json.RawMessage(got)}}}}
		m := simtest.NewModel(simtest.Turn{Expect: simtest.Expect{Messages: []simtest.Message{{Role: agentloop.RoleAssistant, Calls: []simtest.MessageCall{{Name: "f", Args: json.RawMessage(want)}}}}}})
		_, err := stream(t, m, &agentloop.Request{Messages: agentloop.History{call}})
		return err
	}
	assert.NoError(t, args(`{"a":1,"b":"x"}`, `{"b": "x", "a": 1}`), "key order and spacing do not matter")
	assert.NoError(t, args(`{"id":"{{any}}"}`, `{"id": 42}`), "Any as a value matches any value")
	assert.ErrorContains(t, args(`{"a":1}`, `{"a":2}`), `message 1 (assistant) call 1: want f({"a":1}), got f({"a":2})`)
}

func TestTurnsByConversation_EveryConversationAndEveryModelPlaysTheSameTurn(t *testing.T) {
	script, err := simtest.ParseScript([]byte(`{"turns_by": "conversation", "turns": [
	  {"reply": [{"tool_call": {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}}]},
	  {"expect": {"tool_results": {"c1": "sunny"}}, "reply": [{"text": "Sunny."}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, simtest.TurnsByConversation, script.TurnsBy)
	m := script.Model()
	a := weatherAgent(t, m)
	for i := range 3 {
		text, err := agentloop.Text(a.Stream(t.Context(), agentloop.History{agentloop.UserMessage(fmt.Sprint("chat ", i))}, nil))
		require.NoError(t, err)
		assert.Equal(t, "Sunny.", text)
	}

	// A run interrupted after its tool call goes on in another process
	// (another model from the same script) at the second turn.
	history := agentloop.History{agentloop.UserMessage("first"), {Role: agentloop.RoleAssistant, Parts: []agentloop.Part{{Type: agentloop.PartText, Text: "Sunny."}}},
		agentloop.UserMessage("again")}
	first := weatherAgent(t, script.Model())
	first.MaxTurns = 1
	partial, err := agentloop.Drain(first.Stream(t.Context(), history, nil))
	require.Error(t, err, "one turn only: the run stops after the call")
	h, ok := agentloop.HistoryOf(err)
	require.True(t, ok, "%v (%v)", err, partial)
	other := script.Model()
	text, err := agentloop.Text(weatherAgent(t, other).Stream(t.Context(), h, nil))
	require.NoError(t, err)
	assert.Equal(t, "Sunny.", text)
	assert.Equal(t, 1, other.Remaining(), "the other model played only the second turn")
}

func TestTurnsByConversation_PastTheScriptSaysHowManyRepliesThereWere(t *testing.T) {
	script, err := simtest.ParseScript([]byte(`{"turns_by": "conversation", "turns": [{"reply": [{"text": "a"}]}]}`))
	require.NoError(t, err)
	history := agentloop.History{agentloop.UserMessage("q"), {Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("a")}}}
	_, err = stream(t, script.Model(), &agentloop.Request{Messages: history})
	require.ErrorIs(t, err, simtest.ErrScriptExhausted)
	assert.ErrorContains(t, err, "turn 2 (1 model replies since the last user message), but the script has 1 turns")
}

func TestParseScript_TurnsByAcceptsCallAndConversationOnly(t *testing.T) {
	s, err := simtest.ParseScript([]byte(`{"turns_by": "call", "turns": []}`))
	require.NoError(t, err)
	assert.Equal(t, simtest.TurnsByCall, s.TurnsBy)
	_, err = simtest.ParseScript([]byte(`{"turns_by": "chat", "turns": []}`))
	require.ErrorIs(t, err, simtest.ErrBadScript)
	assert.ErrorContains(t, err, `"turns_by": "chat" (want "call" or "conversation")`)
}

// fakeTB records what Replay does to a test.
type fakeTB struct {
	testing.TB
	failed   bool
	errors   []string
	logs     []string
	cleanups []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Failed() bool      { return f.failed }
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.failed = true
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Error(args ...any) {
	f.failed = true
	f.errors = append(f.errors, fmt.Sprint(args...))
}
func (f *fakeTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	panic(errors.New("fatal"))
}
func (f *fakeTB) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestReplay_RecordsWithTheEnvVarThenReplaysWithoutTheLiveModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weather.json")
	noLive := func() agentloop.Model { t.Fatal("live model used in a replay"); return nil }

	t.Setenv(simtest.EnvRecord, "1")
	rec := &fakeTB{}
	_, err := items(t, weatherAgent(t, simtest.Replay(rec, path, func() agentloop.Model { return live() })), "Weather in Paris?")
	require.NoError(t, err)
	rec.cleanup()
	require.Empty(t, rec.errors)
	require.FileExists(t, path)

	t.Setenv(simtest.EnvRecord, "")
	replay := &fakeTB{}
	got, err := items(t, weatherAgent(t, simtest.Replay(replay, path, noLive)), "Weather in Paris?")
	require.NoError(t, err)
	assert.Equal(t, "It is sunny in Paris.", got[len(got)-1].(agentloop.Final).Text)
	replay.cleanup()
	assert.Empty(t, replay.errors)

	changed := &fakeTB{}
	_, err = items(t, weatherAgent(t, simtest.Replay(changed, path, noLive)), "Weather in Rome?")
	require.Error(t, err)
	changed.failed = true // the test's own check of err
	changed.cleanup()
	require.Len(t, changed.logs, 1)
	assert.Contains(t, changed.logs[0], "accept the change by recording again with SIMTEST_RECORD=1")

	unplayed := &fakeTB{}
	simtest.Replay(unplayed, path, noLive)
	unplayed.cleanup()
	require.Len(t, unplayed.errors, 1)
	assert.Contains(t, unplayed.errors[0], "left 2 of 2 turns unplayed")
}
