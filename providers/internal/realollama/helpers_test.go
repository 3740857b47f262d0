package realollama_test

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/internal/tinyollama"
	"github.com/agentloop/agentloop/providers/ollama"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/agentloop/agentloop/providers/openairesponses"
	"github.com/stretchr/testify/require"
)

// provider builds a Model of one provider for a model name on a server
// root URL.
type provider struct {
	name string
	// apiName is the provider's name in its errors (providers.APIError).
	apiName string
	// endpoint names the API it speaks on the server.
	endpoint string
	// Differences of Ollama's endpoints, documented in the providers'
	// package docs: whether the endpoint reports a length-limited reply
	// as such, refuses thinking for a model that cannot think, and the
	// API has stop sequences.
	reportsLength, refusesThinking, hasStop bool
	// model makes the Model; think asks for thinking the provider's way.
	model func(t *testing.T, root, name string, think bool) agentloop.Model
}

var allProviders = []provider{
	{"ollama", "ollama", "/api/chat", true, true, true, func(t *testing.T, root, name string, think bool) agentloop.Model {
		cfg := ollama.Config{Model: name, Host: root}
		if think {
			cfg.Think = ollama.ThinkOn
		}
		m, err := ollama.New(cfg)
		require.NoError(t, err)
		return m
	}},
	{"openai", "openai", "/v1/chat/completions", true, true, true, func(t *testing.T, root, name string, think bool) agentloop.Model {
		cfg := openai.Config{Model: name, BaseURL: root + "/v1"}
		if think {
			cfg.ReasoningEffort = "high"
		}
		m, err := openai.New(cfg)
		require.NoError(t, err)
		return m
	}},
	{"anthropic", "anthropic", "/v1/messages", true, false, true, func(t *testing.T, root, name string, think bool) agentloop.Model {
		cfg := anthropic.Config{Model: name, BaseURL: root}
		if think {
			cfg.ThinkingBudget = 1024
		}
		m, err := anthropic.New(cfg)
		require.NoError(t, err)
		return m
	}},
	{"openairesponses", "openai", "/v1/responses", false, false, false, func(t *testing.T, root, name string, think bool) agentloop.Model {
		cfg := openairesponses.Config{Model: name, BaseURL: root + "/v1"}
		if think {
			cfg.ReasoningEffort = "high"
		}
		m, err := openairesponses.New(cfg)
		require.NoError(t, err)
		return m
	}},
}

// lengthFinish is the finish reason p reports for a reply cut by the
// length limit.
func (p provider) lengthFinish() agentloop.FinishReason {
	if p.reportsLength {
		return agentloop.FinishLength
	}
	return agentloop.FinishStop
}

// eachProvider runs f as a subtest per provider against the server.
func eachProvider(t *testing.T, f func(t *testing.T, p provider, root string)) {
	root := server(t).URL
	for _, p := range allProviders {
		t.Run(p.name, func(t *testing.T) { f(t, p, root) })
	}
}

// run is what one agent run yielded.
type run struct {
	Text       string // all text deltas
	TextDeltas int
	Calls      []agentloop.ToolCallReady
	Results    []agentloop.ToolResultReady
	TurnEnds   []agentloop.TurnEnd
	Final      *agentloop.Final
	Err        error
}

func (r run) finishes() []agentloop.FinishReason {
	var out []agentloop.FinishReason
	for _, e := range r.TurnEnds {
		out = append(out, e.FinishReason)
	}
	return out
}

// runTimeout bounds one agent run of the suite, so that a hung server
// fails the test with its log instead of stalling the whole package.
const runTimeout = time.Minute

// stream runs agent on one user message and collects what it yields.
func stream(t *testing.T, agent *agentloop.Agent) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	var r run
	for item, err := range agent.Stream(ctx, agentloop.History{agentloop.UserMessage("What is the weather in Paris?")}, nil) {
		if err != nil {
			r.Err = err
			break
		}
		switch it := item.(type) {
		case agentloop.TextDelta:
			r.Text += it.Text
			r.TextDeltas++
		case agentloop.ToolCallReady:
			r.Calls = append(r.Calls, it)
		case agentloop.ToolResultReady:
			r.Results = append(r.Results, it)
		case agentloop.TurnEnd:
			r.TurnEnds = append(r.TurnEnds, it)
		case agentloop.Final:
			r.Final = &it
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("the run did not end within %v: %v\nserver log:\n%s", runTimeout, r.Err, serverLog())
	}
	return r
}

// serverLog returns the end of the server's log, for failure messages.
func serverLog() string {
	if srv == nil {
		return "(no server)"
	}
	b, _ := os.ReadFile(srv.Log)
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

type weatherArgs struct {
	City string `json:"city" jsonschema:"description=The city"`
}

// weatherTool is get_weather; it records the cities it was called for.
type weatherTool struct {
	mu     sync.Mutex
	cities []string
}

func (w *weatherTool) tool(t *testing.T) *agentloop.Tool {
	tl, err := agentloop.NewTool(tinyollama.CallName, "Get the weather of a city.", func(_ context.Context, a weatherArgs) (string, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.cities = append(w.cities, a.City)
		return "sunny in " + a.City, nil
	})
	require.NoError(t, err)
	return tl
}

func (w *weatherTool) called() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.cities...)
}

// jsonEq reports whether two JSON texts are the same value.
func jsonEq(t *testing.T, want string, got json.RawMessage) {
	t.Helper()
	require.JSONEq(t, want, string(got))
}
