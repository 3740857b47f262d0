package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

type modelConfig struct {
	script   string
	provider string
	model    string
	baseURL  string
}

// recordTo wraps model in a recorder whose save writes the session to
// path. It writes an empty script at once, so that a path that cannot be
// written fails before the session.
func recordTo(path string, model agentloop.Model, stderr io.Writer) (agentloop.Model, func(), error) {
	rec := &simtest.Recorder{Model: model}
	if err := rec.Script().WriteFile(path); err != nil {
		return nil, nil, fmt.Errorf("-record: %w", err)
	}
	save := func() {
		s := rec.Script()
		if err := s.WriteFile(path); err != nil {
			fmt.Fprintln(stderr, "quickstart: -record:", err)
			return
		}
		fmt.Fprintf(stderr, "recorded %s to %s (replay: -script %s)\n", count(len(s.Turns), "model call", "model calls"), path, path)
	}
	return rec, save, nil
}

// chooseModel picks the model from the flags and says which one it is.
func chooseModel(ctx context.Context, cfg modelConfig, stderr io.Writer) (agentloop.Model, string, error) {
	if cfg.script != "" {
		if cfg.provider != "" {
			return nil, "", fmt.Errorf("-script and -provider exclude each other")
		}
		script, err := simtest.LoadScript(cfg.script)
		if err != nil {
			return nil, "", err
		}
		return script.Model(), fmt.Sprintf("model: scripted (%s, %s)", cfg.script, count(len(script.Turns), "turn", "turns")), nil
	}
	if cfg.provider != "" {
		return providerModel(ctx, cfg, stderr)
	}
	m, desc, ok, err := detectOllama(ctx, cfg, stderr)
	if err != nil {
		return nil, "", err
	}
	if ok {
		return m, desc, nil
	}
	return simulator(), "model: the built-in simulator (no LLM configured and no Ollama server reachable; see -provider)", nil
}
