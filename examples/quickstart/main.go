// Command quickstart is a terminal agent that streams a run item by item.
//
//	go run ./examples/quickstart                      # chat; uses Ollama when reachable, else the simulator
//	go run ./examples/quickstart -prompt "2 + 3?"     # one run, then exit (non-zero if the run fails)
//	go run ./examples/quickstart -script turns.json   # a scripted model (simtest JSON format)
//	go run ./examples/quickstart -record s.json       # record the session as a script for -script
//	go run ./examples/quickstart -provider openai -model gpt-4.1-mini
//	go run ./examples/quickstart -mcp "npx -y @modelcontextprotocol/server-everything"
//	go run ./examples/quickstart -mcp-url http://127.0.0.1:3001/mcp
//
// -record FILE writes every model call of the session, with what the agent
// sent, to FILE as a simtest script when the program ends; -script FILE
// replays it with no server, and fails a changed prompt naming the first
// difference.
//
// -mcp "COMMAND ARGS" (repeatable) adds the tools of an MCP server started
// over stdio, -mcp-url URL those of one reached over streamable HTTP.
//
// With no -model, Ollama runs qwen3:4b (ollama pull qwen3:4b) when the server
// has it, else the first model the server lists, and says so. OpenAI (Chat
// Completions with -provider openai, the Responses API with -provider
// openai-responses) and Anthropic read their keys from OPENAI_API_KEY and
// ANTHROPIC_API_KEY, Gemini (-provider gemini) from GEMINI_API_KEY or
// GOOGLE_API_KEY (or Vertex AI's settings, as the genai SDK reads them).
// When the model's price is known (pricing.Default), a run's cost is printed
// after its token counts.
//
// Traces: OTEL_TRACES_EXPORTER=console prints each run's OpenTelemetry spans
// to stderr, and OTEL_EXPORTER_OTLP_ENDPOINT sends them to a collector
// (telemetry.go).
//
// With no LLM configured and no Ollama server reachable it runs a built-in
// simulator (the simtest scripted model) that calls a tool and answers, and
// says so; a malformed OLLAMA_HOST (a port that is not a number, a scheme
// other than http or https) is an error rather than a reason to use the
// simulator. At a terminal it chats: Ctrl-C stops the answer being written
// and returns to the prompt, Ctrl-C at the prompt or Ctrl-D quits. With no
// -prompt and no terminal on stdin it reads the prompts from stdin, one per
// line, as one conversation, and stops at the first failed run; empty
// stdin runs one demo prompt.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"golang.org/x/term"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/examples/internal/mcpflags"
	"github.com/agentloop/agentloop/pricing"
)

const demoPrompt = "What is the weather in Paris, and what is 2 + 3?"

// systemPrompt is the agent's system prompt.
const systemPrompt = "You are a helpful assistant. Use the tools when they help, then answer briefly."

func main() {
	os.Exit(exitCode(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr), os.Stderr))
}

// exitCode reports err and returns the process's exit status: 0 for none
// and for -help (whose usage was printed), 2 for a bad flag (whose error
// the flag package printed, with the usage), 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	var bad flagError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &bad):
		return 2
	}
	fmt.Fprintln(stderr, "quickstart:", err)
	return 1
}

// flagError is an error of the flag package, which printed it already.
type flagError struct{ error }

func (e flagError) Unwrap() error { return e.error }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg modelConfig
	prompt := fs.String("prompt", "", "run this one prompt, print each item, and exit")
	fs.StringVar(&cfg.script, "script", "", "use a scripted model from this simtest JSON file")
	record := fs.String("record", "", "record the session's model calls into this simtest JSON file (play it back with -script)")
	fs.StringVar(&cfg.provider, "provider", "", "ollama, openai (Chat Completions), openai-responses, anthropic or gemini (default: Ollama when reachable, else the simulator)")
	fs.StringVar(&cfg.model, "model", "", "model name for -provider")
	fs.StringVar(&cfg.baseURL, "base-url", "", "server URL for -provider (default: the provider's own, or OLLAMA_HOST / OPENAI_BASE_URL / ANTHROPIC_BASE_URL)")
	mcpServers := mcpflags.Register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return flagError{err}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (did you mean -prompt %q?)", fs.Args(), strings.Join(fs.Args(), " "))
	}

	model, describe, err := chooseModel(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, describe)
	if *record != "" {
		rec, save, err := recordTo(*record, model, stderr)
		if err != nil {
			return err
		}
		defer save()
		model = rec
	}
	tools, err := demoTools()
	if err != nil {
		return err
	}
	defer mcpServers.Close()
	if tools, err = mcpServers.Tools(ctx, tools, stderr); err != nil {
		return err
	}
	agent := &agentloop.Agent{
		Model:  model,
		System: systemPrompt,
		Tools:  tools,
	}
	flush, err := traceAgent(ctx, agent, stderr)
	if err != nil {
		return err
	}
	defer flush()

	if *prompt != "" || !isTerminal(stdin) {
		// Ctrl-C cancels the run, which fails.
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
		if *prompt != "" {
			_, err := converse(ctx, agent, nil, *prompt, stdout)
			return err
		}
		return piped(ctx, agent, stdin, stdout)
	}
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)
	lines, readErr := readLines(stdin)
	if err := interactive(ctx, agent, lines, interrupts, stdout, stderr); err != nil {
		return err
	}
	return *readErr
}

// readLines sends the lines of r on the channel, which it closes at the
// end of r; the error that ended r, if any, is then in *err.
func readLines(r io.Reader) (<-chan string, *error) {
	lines := make(chan string)
	var err error
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		err = sc.Err()
	}()
	return lines, &err
}

// interactive runs the lines typed at a terminal as one conversation,
// keeping the history across prompts. An interrupt (Ctrl-C) during an
// answer cancels that answer and returns to the prompt; at the prompt it
// ends the program, as the end of the input (Ctrl-D) does. A failed run
// is reported on stderr, and the next prompt goes on from the history the
// failure left.
func interactive(ctx context.Context, agent *agentloop.Agent, lines <-chan string, interrupts <-chan os.Signal, stdout, stderr io.Writer) error {
	fmt.Fprintf(stdout, "Type a message (try: %s).\nCtrl-C stops an answer; Ctrl-C at the prompt, or Ctrl-D, quits.\n", demoPrompt)
	var history agentloop.History
	for {
		fmt.Fprint(stdout, "> ")
		var line string
		select {
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(stdout)
				return nil
			}
			line = strings.TrimSpace(l)
		case <-interrupts:
			fmt.Fprintln(stdout)
			return nil
		case <-ctx.Done():
			fmt.Fprintln(stdout)
			return ctx.Err()
		}
		if line == "" {
			continue
		}
		runCtx, cancel := context.WithCancel(ctx)
		done, interrupted := make(chan struct{}), make(chan bool, 1)
		go func() {
			select {
			case <-interrupts:
				cancel()
				interrupted <- true
			case <-done:
				interrupted <- false
			}
		}()
		h, err := converse(runCtx, agent, history, line, stdout)
		close(done)
		cancel()
		if stopped := <-interrupted; stopped {
			fmt.Fprintln(stderr, "(answer stopped: Ctrl-C)")
		} else if err != nil {
			fmt.Fprintln(stderr, "error:", err)
		}
		history = h
	}
}

// piped runs the prompts read from stdin, one per line, as one
// conversation, and stops at the first failed run. Empty stdin runs the demo
// prompt.
func piped(ctx context.Context, agent *agentloop.Agent, stdin io.Reader, stdout io.Writer) error {
	var history agentloop.History
	prompts := 0
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		prompts++
		fmt.Fprintf(stdout, "> %s\n", line)
		h, err := converse(ctx, agent, history, line, stdout)
		if err != nil {
			return err
		}
		history = h
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading prompts from stdin: %w", err)
	}
	if prompts == 0 {
		fmt.Fprintf(stdout, "> %s\n", demoPrompt)
		_, err := converse(ctx, agent, nil, demoPrompt, stdout)
		return err
	}
	return nil
}

// converse runs one prompt, printing every item, and returns the history to
// continue from (on failure, the history the error carries).
func converse(ctx context.Context, agent *agentloop.Agent, history agentloop.History, prompt string, out io.Writer) (agentloop.History, error) {
	history = append(history[:len(history):len(history)], agentloop.UserMessage(prompt))
	p := printer{out: out, prices: pricing.Default()}
	if d, ok := agent.Model.(agentloop.ModelDescriber); ok {
		p.model = d.ModelInfo()
	}
	for item, err := range agent.Stream(ctx, history, nil) {
		if err != nil {
			fmt.Fprintln(out)
			if h, ok := agentloop.HistoryOf(err); ok {
				return h, err
			}
			return history, err
		}
		p.print(item)
		switch it := item.(type) {
		case agentloop.Final:
			return it.History, nil
		case agentloop.Pending:
			return it.History, errors.New("the model called a client tool, which this terminal program does not provide")
		}
	}
	return history, nil
}

// printer writes a run's items as a terminal transcript.
type printer struct {
	out         io.Writer
	prices      pricing.Table       // prices the run when it knows model
	model       agentloop.ModelInfo // the agent's model
	midLine     bool                // the last write did not end a line
	inReasoning bool
}

// line starts a new line unless the cursor is at the start of one.
func (p *printer) line() {
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
}

func (p *printer) print(item agentloop.Item) {
	switch it := item.(type) {
	case agentloop.ReasoningDelta:
		if !p.inReasoning {
			p.line()
			fmt.Fprint(p.out, "(thinking) ")
			p.inReasoning = true
		}
		fmt.Fprint(p.out, it.Text)
		p.midLine = true
	case agentloop.ReasoningEnd:
		p.inReasoning = false
		p.line()
	case agentloop.TextDelta:
		fmt.Fprint(p.out, it.Text)
		p.midLine = true
	case agentloop.ToolCallReady:
		p.line()
		fmt.Fprintf(p.out, "→ %s(%s)\n", it.Call.Name, it.Call.Args)
	case agentloop.ToolProgress:
		fmt.Fprintf(p.out, "… %s\n", it.Content)
	case agentloop.ToolResultReady:
		mark := "←"
		if it.Result.IsError {
			mark = "← error:"
		}
		fmt.Fprintf(p.out, "%s %s\n", mark, it.Result.Content)
	case agentloop.Final:
		p.line()
		var cost string
		if c, ok := p.prices.Cost(p.model, it.Usage); ok {
			cost = fmt.Sprintf(", $%.4f at %s list prices", c, pricing.DefaultDate)
		}
		fmt.Fprintf(p.out, "[%s, %d input + %d output tokens%s]\n", count(it.Turns, "turn", "turns"), it.Usage.Input, it.Usage.Output, cost)
	}
}

// isTerminal reports whether r is an interactive terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// count returns n with the singular or plural noun: "1 turn", "2 turns".
func count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
