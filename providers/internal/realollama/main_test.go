package realollama_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers/internal/realollama"
	"go.uber.org/goleak"
)

// The server every test of the suite uses, started by the first test that
// needs it and stopped by TestMain.
var (
	srvOnce sync.Once
	srv     *realollama.Server
	srvErr  error
)

func TestMain(m *testing.M) {
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

// server returns the running server, starting it on first use, or skips
// the test (fails it when CI=true) when no binary was given. The variable
// is read here, inside a test, so that go test's cache knows the result
// depends on it.
func server(t *testing.T) *realollama.Server {
	t.Helper()
	bin := os.Getenv(realollama.EnvBinary)
	if bin == "" {
		msg := "the real-Ollama suite needs a server binary: run " +
			realollama.EnvBinary + "=$(bash .ci/ollama.sh) go test ./providers/internal/realollama " +
			"(the first build of the server takes several minutes; it is cached by version)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	srvOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		srv, srvErr = realollama.Start(ctx, bin)
	})
	if srvErr != nil {
		t.Fatal(srvErr)
	}
	return srv
}
