package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/pricing"
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

// Prompts piped on stdin are run one per line, as one conversation.
func TestQuickstart_PipedPromptsRunOnePerLine(t *testing.T) {
	out, _, err := runQuickstart(t, "first question\n\nsecond question\n", "-script", "testdata/two-prompts.json")
	require.NoError(t, err)
	assert.Equal(t, "> first question\nFirst answer.\n[1 turn, 0 input + 0 output tokens]\n"+
		"> second question\nSecond answer.\n[1 turn, 0 input + 0 output tokens]\n", out)
}

// -help prints the usage and is not a failure.
func TestQuickstart_HelpIsNotAnError(t *testing.T) {
	_, errOut, err := runQuickstart(t, "", "-help")
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, errOut, "-prompt")
	assert.Equal(t, 0, exitCode(err, io.Discard), "main exits 0 after -help")
	assert.Equal(t, 1, exitCode(errors.New("boom"), io.Discard))
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

// fakeOllama serves the two endpoints the quickstart uses on loopback: the
// model list, and a chat reply streamed as NDJSON.
func fakeOllama(t *testing.T, models ...string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		var list struct {
			Models []map[string]string `json:"models"`
		}
		list.Models = []map[string]string{}
		for _, m := range models {
			list.Models = append(list.Models, map[string]string{"name": m, "model": m})
		}
		_ = json.NewEncoder(w).Encode(list)
	})
	mux.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		fmt.Fprintf(w, `{"model":%q,"message":{"role":"assistant","content":"Hello from %s."},"done":false}`+"\n", req.Model, req.Model)
		fmt.Fprintf(w, `{"model":%q,"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":4}`+"\n", req.Model)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// The server lists another model first: the default is still the one used.
func TestQuickstart_UsesOllamaWhenReachableWithTheDefaultModel(t *testing.T) {
	srv := fakeOllama(t, "llama3.2", "qwen3:4b")
	t.Setenv("OLLAMA_HOST", srv.URL)
	out, errOut, err := runQuickstart(t, "", "-prompt", "hi")
	require.NoError(t, err)
	assert.Contains(t, errOut, "model: Ollama qwen3:4b at "+srv.URL)
	assert.NotContains(t, errOut, "simulator")
	assert.NotContains(t, errOut, "ollama pull")
	assert.Contains(t, out, "Hello from qwen3:4b.")
	assert.Contains(t, out, "[1 turn, 3 input + 4 output tokens]")
}

func TestQuickstart_DetectedOllamaWithoutTheDefaultModelUsesTheFirstAndSaysHowToPullIt(t *testing.T) {
	srv := fakeOllama(t, "llama3.2", "mistral")
	t.Setenv("OLLAMA_HOST", srv.URL)
	out, errOut, err := runQuickstart(t, "", "-prompt", "hi")
	require.NoError(t, err)
	assert.Contains(t, errOut, "the default model qwen3:4b is not pulled (`ollama pull qwen3:4b`); using llama3.2")
	assert.Contains(t, errOut, "model: Ollama llama3.2 at "+srv.URL)
	assert.Contains(t, out, "Hello from llama3.2.")
}

func TestQuickstart_OllamaWithoutModelsFallsBackToSimulator(t *testing.T) {
	srv := fakeOllama(t)
	t.Setenv("OLLAMA_HOST", srv.URL)
	out, errOut, err := runQuickstart(t, "", "-prompt", "What is 2 + 3?")
	require.NoError(t, err)
	assert.Contains(t, errOut, "has no models")
	assert.Contains(t, errOut, "built-in simulator")
	assert.Contains(t, out, `← {"sum":5}`)
}

func TestQuickstart_ProviderFlagPicksTheProvider(t *testing.T) {
	srv := fakeOllama(t, "qwen3:4b")
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1") // -base-url wins over the environment
	out, errOut, err := runQuickstart(t, "", "-provider", "ollama", "-model", "llama3.2", "-base-url", srv.URL, "-prompt", "hi")
	require.NoError(t, err)
	assert.Contains(t, errOut, "model: Ollama llama3.2 at "+srv.URL)
	assert.Contains(t, out, "Hello from llama3.2.")

	_, _, err = runQuickstart(t, "", "-provider", "mistral", "-prompt", "hi")
	require.ErrorContains(t, err, `-provider "mistral": want ollama, openai, openai-responses, anthropic or gemini`)
}

func TestQuickstart_ProviderOllamaWithoutTheDefaultModelSaysHowToPullIt(t *testing.T) {
	srv := fakeOllama(t, "llama3.2")
	out, errOut, err := runQuickstart(t, "", "-provider", "ollama", "-base-url", srv.URL, "-prompt", "hi")
	require.NoError(t, err)
	assert.Contains(t, errOut, "the default model qwen3:4b is not pulled (`ollama pull qwen3:4b`); using llama3.2")
	assert.Contains(t, out, "Hello from llama3.2.")

	empty := fakeOllama(t)
	_, _, err = runQuickstart(t, "", "-provider", "ollama", "-base-url", empty.URL, "-prompt", "hi")
	require.ErrorContains(t, err, "-provider ollama: the server has no models; pull the default with `ollama pull qwen3:4b`, or pass -model")
}

func TestQuickstart_HostedProviderWithoutAKeyNamesTheVariable(t *testing.T) {
	for provider, variable := range map[string]string{"openai": "OPENAI_API_KEY", "openai-responses": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"} {
		t.Setenv(variable, "")
		t.Setenv(strings.TrimSuffix(variable, "_API_KEY")+"_BASE_URL", "")
		_, _, err := runQuickstart(t, "", "-provider", provider, "-prompt", "hi")
		require.ErrorContains(t, err, "-provider "+provider+": set "+variable)
	}
	for _, v := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"} {
		t.Setenv(v, "")
	}
	_, _, err := runQuickstart(t, "", "-provider", "gemini", "-prompt", "hi")
	require.ErrorContains(t, err, "-provider gemini: set GEMINI_API_KEY or GOOGLE_API_KEY")
}

func TestQuickstart_ProviderOpenAIResponsesSpeaksTheResponsesAPI(t *testing.T) {
	paths := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hello from Responses.\"}\n\n"+
			"data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n")
	}))
	defer srv.Close()
	out, errOut, err := runQuickstart(t, "", "-provider", "openai-responses", "-model", "gpt-5-mini", "-base-url", srv.URL+"/v1", "-prompt", "hi")
	require.NoError(t, err)
	assert.Contains(t, errOut, "model: OpenAI Responses gpt-5-mini")
	assert.Contains(t, out, "Hello from Responses.")
	assert.Equal(t, "/v1/responses", <-paths)
}

// -record writes the session as a script; -script replays it with no
// model server and the same tool call and answer, and a changed prompt
// fails naming the difference.
func TestQuickstart_RecordThenReplayTheSameSession(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1") // the simulator stands in for the live model
	path := t.TempDir() + "/s.json"
	const prompt = "What is the weather in Paris?"
	live, errOut, err := runQuickstart(t, "", "-record", path, "-prompt", prompt)
	require.NoError(t, err)
	assert.Contains(t, errOut, "recorded 2 model calls to "+path)

	t.Setenv("OLLAMA_HOST", "127.0.0.1:2") // a replay needs no server at all
	replay, errOut, err := runQuickstart(t, "", "-script", path, "-prompt", prompt)
	require.NoError(t, err)
	assert.Contains(t, errOut, "scripted ("+path+", 2 turns)")
	assert.Equal(t, live, replay)
	assert.Contains(t, replay, `→ get_weather({"city":"Paris"})`)

	_, _, err = runQuickstart(t, "", "-script", path, "-prompt", "What is the weather in Rome?")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `turn 1: message 1 (user) text: want "What is the weather in Paris?", got "What is the weather in Rome?"`)
}

func TestQuickstart_RecordToAnUnwritablePathFailsBeforeTheSession(t *testing.T) {
	out, _, err := runQuickstart(t, "", "-script", "testdata/answer.json", "-record", t.TempDir()+"/no/such/dir/s.json", "-prompt", "2 + 3?")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-record:")
	assert.Empty(t, out)
}

func TestQuickstart_PrintsTheCostOfARunWhenTheModelsPriceIsKnown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Priced.\"}\n\n"+
			"data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":100000,\"output_tokens\":10000}}}\n\n")
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "test")
	out, _, err := runQuickstart(t, "", "-provider", "openai-responses", "-model", "gpt-5-mini", "-base-url", srv.URL+"/v1", "-prompt", "hi")
	require.NoError(t, err)
	// gpt-5-mini: 0.1M input at $0.25/M + 0.01M output at $2/M.
	assert.Contains(t, out, "[1 turn, 100000 input + 10000 output tokens, $0.0450 at "+pricing.DefaultDate+" list prices]")

	out, _, err = runQuickstart(t, "", "-provider", "openai-responses", "-model", "unpriced", "-base-url", srv.URL+"/v1", "-prompt", "hi")
	require.NoError(t, err)
	assert.Contains(t, out, "[1 turn, 100000 input + 10000 output tokens]")
}

func TestQuickstart_ProviderGeminiShowsTheAPIsOwnErrorMessage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`)
	}))
	defer srv.Close()
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "bad-key")
	_, errOut, err := runQuickstart(t, "", "-provider", "gemini", "-base-url", srv.URL, "-prompt", "hi")
	require.ErrorContains(t, err, "API key not valid. Please pass a valid API key.")
	assert.Contains(t, errOut, "model: Gemini gemini-2.5-flash")
}
