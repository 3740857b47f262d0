package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agentloop/agentloop"
)

// providerModel builds the model named by -provider.
func providerModel(ctx context.Context, cfg modelConfig) (agentloop.Model, string, error) {
	return nil, "", fmt.Errorf("-provider %q: no provider packages are built yet", cfg.provider)
}

// detectOllama returns an Ollama model when a server is reachable.
func detectOllama(ctx context.Context, stderr io.Writer) (agentloop.Model, string, bool) {
	return nil, "", false
}
