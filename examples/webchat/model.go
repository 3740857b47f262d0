package main

import (
	"fmt"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/ollama"
)

// realModel returns the Ollama model named by -model. The server is
// OLLAMA_HOST, or Ollama's default address; the model is not contacted
// until the first chat request.
func realModel(name string) (agentloop.Model, string, error) {
	m, err := ollama.New(ollama.Config{Model: name})
	if err != nil {
		return nil, "", fmt.Errorf("-model %q: %w", name, err)
	}
	return m, fmt.Sprintf("Ollama model %q", name), nil
}
