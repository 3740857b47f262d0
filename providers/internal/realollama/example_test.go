package realollama_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/realollama"
	"github.com/agentloop/agentloop/providers/internal/tinyollama"
	"github.com/agentloop/agentloop/providers/ollama"
)

// Start a server with the tiny model's variants and run an agent on it.
// (Not run by go test: it needs the binary .ci/ollama.sh builds.)
func ExampleStart() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := realollama.Start(ctx, os.Getenv(realollama.EnvBinary))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	model, err := ollama.New(ollama.Config{Model: tinyollama.Tiny, Host: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	agent := &agentloop.Agent{Model: model}
	text, err := agentloop.Text(agent.Stream(ctx, agentloop.History{agentloop.UserMessage("Hi!")}, nil))
	fmt.Println(text, err)
	// The tiny model always answers:
	// The tiny model says hello from a real Ollama server. <nil>
}
