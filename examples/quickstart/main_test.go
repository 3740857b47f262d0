package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runQuickstart(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), args, strings.NewReader(stdin), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func TestQuickstart_PromptRunsSimulatorAndPrintsEachItem(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1") // nothing listens there: use the simulator
	out, errOut, err := runQuickstart(t, "", "-prompt", "What is the weather in Oslo and 2 + 3?")
	require.NoError(t, err)
	assert.Contains(t, errOut, "built-in simulator")
	assert.Contains(t, out, `→ get_weather({"city":"Oslo"})`)
	assert.Contains(t, out, `→ add({"a":2,"b":3})`)
	assert.Contains(t, out, `← {"sum":5}`)
	assert.Contains(t, out, "(This answer comes from the built-in simulator, not an LLM.)")
	assert.Contains(t, out, "[2 turns,")
}

func TestQuickstart_NoTerminalRunsTheDemoPrompt(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	out, _, err := runQuickstart(t, "")
	require.NoError(t, err)
	assert.Contains(t, out, "> "+demoPrompt)
	assert.Contains(t, out, `← {"sum":5}`)
}

func TestQuickstart_ScriptAnswers(t *testing.T) {
	out, errOut, err := runQuickstart(t, "", "-script", "testdata/answer.json", "-prompt", "2 + 3?")
	require.NoError(t, err)
	assert.Contains(t, errOut, "scripted (testdata/answer.json, 2 turns)")
	assert.Contains(t, out, "2 + 3 = 5.")
}

func TestQuickstart_ScriptedErrorFailsTheRun(t *testing.T) {
	out, _, err := runQuickstart(t, "", "-script", "testdata/failing.json", "-prompt", "hi")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "upstream model crashed")
	assert.Contains(t, out, "Working on it")
}

func TestQuickstart_UnmetExpectationFailsTheRun(t *testing.T) {
	_, _, err := runQuickstart(t, "", "-script", "testdata/answer.json", "-prompt", "something else")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `latest user text: want text containing "2 + 3"`)
}

func TestQuickstart_BadFlagsAreErrors(t *testing.T) {
	_, _, err := runQuickstart(t, "", "hello", "world")
	require.ErrorContains(t, err, `did you mean -prompt "hello world"`)
	_, _, err = runQuickstart(t, "", "-script", "testdata/nope.json")
	require.ErrorContains(t, err, "no such file")
	_, _, err = runQuickstart(t, "", "-script", "testdata/answer.json", "-provider", "openai")
	require.ErrorContains(t, err, "exclude each other")
}
