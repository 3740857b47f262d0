package realollama_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers/internal/realollama"
	"go.uber.org/goleak"
)

// srv is the server every test of the suite uses; nil when no binary was
// given.
var srv *realollama.Server

func TestMain(m *testing.M) {
	if bin := os.Getenv(realollama.EnvBinary); bin != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		s, err := realollama.Start(ctx, bin)
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "realollama:", err)
			os.Exit(1)
		}
		srv = s
	}
	code := m.Run()
	if srv != nil {
		if err := srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "realollama:", err)
			code = 1
		}
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "realollama: leaked goroutines:", err)
		code = 1
	}
	os.Exit(code)
}

// server returns the running server, or skips the test (fails it when
// CI=true) when no binary was given.
func server(t *testing.T) *realollama.Server {
	t.Helper()
	if srv != nil {
		return srv
	}
	msg := "the real-Ollama suite needs a server binary: run " +
		realollama.EnvBinary + "=$(bash .ci/ollama.sh) go test ./providers/internal/realollama " +
		"(the first build of the server takes several minutes; it is cached by version)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return nil
}
