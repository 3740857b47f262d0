package main

import (
	"fmt"

	"github.com/agentloop/agentloop"
)

// realModel returns the provider model named by -model.
func realModel(name string) (agentloop.Model, string, error) {
	return nil, "", fmt.Errorf("-model %q: real models are not available in this build yet (no provider package); use -script or the built-in demo", name)
}
