package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/syncbuf"
	"github.com/agentloop/agentloop/simtest"
)

// Ctrl-C during an answer stops that answer, says so, and returns to the
// prompt; the next message runs as usual.
func TestInteractive_CtrlCStopsTheAnswerAndReturnsToThePrompt(t *testing.T) {
	var calls []*agentloop.Request
	var mu sync.Mutex
	answering := make(chan struct{}) // closed when the first answer's model call began
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, req)
		if len(calls) == 1 {
			close(answering)
			return []simtest.Step{simtest.Text("Thinking about"), simtest.Hang()}, nil
		}
		return []simtest.Step{simtest.Text("Second answer.")}, nil
	})
	lines, interrupts := make(chan string), make(chan os.Signal)
	var stdout, stderr syncbuf.Buffer
	errc := make(chan error, 1)
	go func() {
		errc <- interactive(t.Context(), &agentloop.Agent{Model: model}, lines, interrupts, &stdout, &stderr)
	}()
	lines <- "first"
	<-answering                // a Ctrl-C before the model call would stop nothing yet
	interrupts <- os.Interrupt // only the running answer receives now
	lines <- "second"          // the prompt is back
	close(lines)
	require.NoError(t, <-errc)
	// How much of "Thinking about" was printed before the Ctrl-C is up to
	// the scheduler; the answer that follows shows the prompt came back.
	assert.Contains(t, stdout.String(), "Second answer.")
	assert.True(t, strings.HasSuffix(stdout.String(), "> \n"), "ends at an empty prompt: %q", stdout.String())
	assert.Equal(t, "(answer stopped: Ctrl-C)\n", stderr.String())
	require.Len(t, calls, 2)
	assert.Contains(t, calls[1].Messages[len(calls[1].Messages)-1].Text(), "second")
}

// Ctrl-C at the prompt ends the program cleanly.
func TestInteractive_CtrlCAtThePromptQuits(t *testing.T) {
	lines, interrupts := make(chan string), make(chan os.Signal)
	var stdout syncbuf.Buffer
	errc := make(chan error, 1)
	go func() {
		errc <- interactive(t.Context(), &agentloop.Agent{Model: simtest.NewModel()}, lines, interrupts, &stdout, io.Discard)
	}()
	interrupts <- os.Interrupt
	require.NoError(t, <-errc)
	assert.True(t, strings.HasSuffix(stdout.String(), "> \n"), "%q", stdout.String())
}

// A bad flag's error is printed once, by the flag package with the usage,
// and exits 2.
func TestQuickstart_ABadFlagPrintsItsErrorOnce(t *testing.T) {
	_, errOut, err := runQuickstart(t, "", "-bogus")
	require.Error(t, err)
	var exitOut bytes.Buffer
	assert.Equal(t, 2, exitCode(err, &exitOut))
	all := errOut + exitOut.String()
	assert.Equal(t, 1, strings.Count(all, "flag provided but not defined: -bogus"), all)
	assert.Contains(t, errOut, "-prompt", "with the usage")
}

// A malformed OLLAMA_HOST is an error that says so, rather than a quiet
// switch to the simulator.
func TestQuickstart_AMalformedOllamaHostIsRefused(t *testing.T) {
	for _, host := range []string{"localhost:abc", "127.0.0.1:99999", "htp://localhost:11434", "http://", "local host:11434", "::1:2:x"} {
		t.Setenv("OLLAMA_HOST", host)
		_, errOut, err := runQuickstart(t, "", "-prompt", "hi")
		require.Error(t, err, "OLLAMA_HOST=%q", host)
		assert.Contains(t, err.Error(), "is not an Ollama address", "OLLAMA_HOST=%q", host)
		assert.NotContains(t, errOut, "simulator", "OLLAMA_HOST=%q", host)
		_, _, err = runQuickstart(t, "", "-provider", "ollama", "-model", "m", "-prompt", "hi")
		assert.ErrorContains(t, err, "is not an Ollama address", "-provider ollama, OLLAMA_HOST=%q", host)
	}
	for _, host := range []string{"127.0.0.1:1", "localhost:1", "[::1]:1", "http://127.0.0.1:1/"} {
		t.Setenv("OLLAMA_HOST", host)
		_, errOut, err := runQuickstart(t, "", "-prompt", "hi")
		require.NoError(t, err, "OLLAMA_HOST=%q", host)
		assert.Contains(t, errOut, "simulator", "OLLAMA_HOST=%q", host)
	}
}
