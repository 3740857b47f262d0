// Package anthropic is an [agentloop.Model] for the Anthropic Messages API,
// streaming over Server-Sent Events.
//
// It streams text, tool_use blocks (input_json_delta fragments as
// ToolCallDelta, the whole call as ToolCall at content_block_stop; an empty
// input is {}), thinking (thinking_delta as ReasoningDelta, then
// ReasoningEnd with the block's signature), redacted_thinking (a
// ReasoningEnd with Redacted and no deltas), usage and the stop reason
// (end_turn and stop_sequence → stop, tool_use → tool_calls, max_tokens →
// length, refusal → content_filter, anything else → other). max_tokens
// after tool_use blocks whose input is whole JSON is tool_calls (see the
// providers package doc). A tool_use block keeps the server's id; one
// without an id is yielded with an empty id, which the loop fills. ping
// events are ignored; error events and non-2xx answers become
// *providers.APIError.
//
// Reasoning parts of the history are sent back unchanged, as thinking or
// redacted_thinking blocks before the message's text and tool_use blocks, as
// the API requires when thinking is on. All tool results that follow an
// assistant message go back in one user message. Requests are retried on
// 429, 5xx and 529 before the body starts streaming, honouring Retry-After.
// A stream that ends before message_stop is an error wrapping
// io.ErrUnexpectedEOF; a server that cannot be reached, one wrapping
// providers.ErrUnreachable.
//
// Config.CachePrompts turns on prompt caching with stable breakpoints (see
// its doc). Usage counts cache_read_input_tokens and
// cache_creation_input_tokens in Input, as agentloop.Usage says, and reports
// them as CacheRead and CacheWrite. A server_tool_use block (a tool the API
// runs itself) is not a tool call.
//
// Settings.ResponseFormat uses the API's native structured output: it is
// sent as output_config.format {"type":"json_schema"}, which constrains the
// final text and leaves tool calls free. Servers that only imitate the API
// may ignore it (Ollama's /v1/messages does); [agentloop.Structured] then
// still validates the answer.
//
// Ollama's /v1/messages ignores a thinking request for a model that cannot
// think (it relaxes it to no thinking), where the other APIs refuse it.
package anthropic

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

// Defaults.
const (
	// DefaultBaseURL is the API root used when Config.BaseURL is empty;
	// "/v1/messages" is appended.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultMaxTokens is sent as max_tokens (which the API requires) when
	// neither Settings.MaxTokens nor Config.MaxTokens is set.
	DefaultMaxTokens = 4096
	// APIVersion is the anthropic-version header sent.
	APIVersion = "2023-06-01"
)

// Config configures a [Model]. Only Model is required.
type Config struct {
	// Model is the model name, e.g. "claude-sonnet-4-5". Required.
	Model string
	// BaseURL is the API root; "" means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-api-key; "" sends none (a proxy may add it).
	APIKey string
	// HTTPClient sends the requests; nil means a client with no timeout over
	// http.DefaultTransport. Its Transport is wrapped with the retrying
	// transport; the client itself is not modified.
	HTTPClient *http.Client
	// Header holds extra headers sent with every request (for example
	// anthropic-beta).
	Header http.Header
	// MaxAttempts bounds the tries of one request; 0 means 3, 1 disables
	// retries.
	MaxAttempts int
	// MaxTokens is max_tokens when Settings.MaxTokens is 0; 0 means
	// DefaultMaxTokens.
	MaxTokens int
	// CachePrompts turns on prompt caching: each request marks cache
	// breakpoints (cache_control) on the last tool, the system prompt and
	// the conversation so far, so that later turns read the prefix they
	// share from the cache at a fraction of the input price. The first
	// request of a prefix pays for the cache write. Usage reports both
	// (CacheWrite, CacheRead); false sends no breakpoint.
	CachePrompts bool
	// ThinkingBudget, when > 0, turns on extended thinking with this many
	// budget_tokens (the API wants at least 1024 and less than max_tokens).
	ThinkingBudget int
}

// ConfigFromEnv returns a Config for model with APIKey from
// ANTHROPIC_API_KEY and BaseURL from ANTHROPIC_BASE_URL (empty when unset,
// so the default).
func ConfigFromEnv(model string) Config {
	return Config{Model: model, APIKey: os.Getenv("ANTHROPIC_API_KEY"), BaseURL: os.Getenv("ANTHROPIC_BASE_URL")}
}

// Model is an agentloop.Model that calls the Messages API. It is safe for
// concurrent use; its configuration cannot change after New.
type Model struct {
	cfg Config
	ep  *httpx.Endpoint
}

var (
	_ agentloop.Model          = (*Model)(nil)
	_ agentloop.ModelDescriber = (*Model)(nil)
)

// New checks cfg and returns a Model. The error names the field at fault.
func New(cfg Config) (*Model, error) {
	if err := httpx.CheckModel("anthropic", cfg.Model); err != nil {
		return nil, err
	}
	base, err := httpx.BaseURL("anthropic", "Config.BaseURL", cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: Config.MaxTokens %d is negative", cfg.MaxTokens)
	}
	if cfg.ThinkingBudget < 0 {
		return nil, fmt.Errorf("anthropic: Config.ThinkingBudget %d is negative", cfg.ThinkingBudget)
	}
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	ep, err := httpx.NewEndpoint(httpx.EndpointConfig{
		Provider:    "anthropic",
		URL:         base + "/messages",
		HTTPClient:  cfg.HTTPClient,
		MaxAttempts: cfg.MaxAttempts,
		Header:      httpx.StreamHeader(cfg.Header, map[string]string{"anthropic-version": APIVersion, "x-api-key": cfg.APIKey}),
	})
	if err != nil {
		return nil, err
	}
	cfg.Header = nil // kept by the endpoint
	return &Model{cfg: cfg, ep: ep}, nil
}

// ModelInfo names the provider ("anthropic") and Config.Model, for
// telemetry.
func (m *Model) ModelInfo() agentloop.ModelInfo {
	return agentloop.ModelInfo{Provider: "anthropic", Model: m.cfg.Model}
}

// Stream sends req and yields the reply as it streams. See the package doc
// for what is mapped; a failure is yielded once, last, as an error that
// starts with "anthropic:" or is a *providers.APIError.
func (m *Model) Stream(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	return httpx.StreamChunks(ctx, m.ep, m, req, (*Model).requestBody, func(r io.Reader, yield func(agentloop.Chunk, error) bool) error {
		return new(decoder).run(r, yield)
	})
}
