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

// chooseModel picks the model from the flags and says which one it is.
func chooseModel(ctx context.Context, cfg modelConfig, stderr io.Writer) (agentloop.Model, string, error) {
	if cfg.script != "" {
		if cfg.provider != "" {
			return nil, "", fmt.Errorf("-script and -provider exclude each other")
		}
		turns, err := simtest.LoadScript(cfg.script)
		if err != nil {
			return nil, "", err
		}
		return simtest.NewModel(turns...), fmt.Sprintf("model: scripted (%s, %s)", cfg.script, count(len(turns), "turn", "turns")), nil
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
