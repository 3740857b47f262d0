// Package openairesponses is an [agentloop.Model] for OpenAI's Responses
// API (POST /v1/responses), streaming over Server-Sent Events. Servers that
// imitate it (Ollama's /v1/responses, for one) work too.
//
// # What a model call yields
//
// Text (response.output_text.delta, and a refusal's text) streams as
// [agentloop.TextDelta]. Reasoning summaries (and the reasoning text some
// servers send) stream as [agentloop.ReasoningDelta], summary parts
// separated by a blank line; the reasoning item ends with an
// [agentloop.ReasoningEnd] whose Signature is the item's id ("rs_…") and
// whose Redacted is its encrypted_content, which is all the API needs to
// continue from it. Function calls stream as [agentloop.ToolCallDelta] and
// end as one [agentloop.ToolCall] each (call_id as the id; a call without
// one is yielded with an empty id, which the loop fills). Usage
// (input_tokens, output_tokens, input_tokens_details.cached_tokens as
// CacheRead, output_tokens_details.reasoning_tokens as Reasoning) and the finish reason come from the
// terminal event: response.completed is [agentloop.FinishToolCalls] when
// the reply made calls, [agentloop.FinishContentFilter] after a refusal,
// [agentloop.FinishStop] otherwise; response.incomplete is
// [agentloop.FinishLength] for max_output_tokens (or FinishToolCalls when
// every call was complete: see the providers package doc),
// [agentloop.FinishContentFilter] for content_filter and
// [agentloop.FinishOther] for anything else.
//
// # What a request sends
//
// The system prompt as "instructions"; the history as input items: system
// and user messages (text, images, PDFs), assistant text as output_text
// messages, reasoning items (with their id, summary and encrypted content;
// reasoning parts of other providers, which have no "rs_" id, are left out),
// function_call items and function_call_output items. Approval parts are
// not sent. Tools are function tools with "strict": false, so any JSON
// Schema the loop accepts is accepted. Settings map to max_output_tokens,
// temperature and top_p; the API has no seed (Settings.Seed is not sent)
// and no stop sequences (Settings.Stop is an error).
// Settings.ResponseFormat is sent as text.format {"type":"json_schema"}.
//
// The requests are stateless: "store": false, and the encrypted reasoning
// is asked for with include ["reasoning.encrypted_content"] and sent back
// with the history, so no server-side state is needed (Config.Store turns
// storage on).
//
// # Errors
//
// A non-2xx answer, an "error" event and a response.failed event are
// *providers.APIError (Provider "openai"), checkable with errors.Is against
// the providers sentinels. Requests are retried on 429 and 5xx before the
// body starts streaming, honouring Retry-After. A stream that ends before
// its terminal event wraps io.ErrUnexpectedEOF; a server that cannot be
// reached, providers.ErrUnreachable; a cancelled request, ctx.Err() and its
// cause.
//
// Ollama's /v1/responses reports every response as completed, also when
// max_output_tokens cut it, so FinishLength cannot be seen through it; and
// it ignores reasoning.effort.
package openairesponses

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

// DefaultBaseURL is the base URL used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a [Model]. Only Model is required.
type Config struct {
	// Model is the model name sent with every request, e.g. "gpt-5".
	// Required.
	Model string
	// BaseURL is the API root; "/responses" is appended. "" means
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer KEY"; "" sends no
	// Authorization header (local servers).
	APIKey string
	// HTTPClient sends the requests; nil means a client with no timeout over
	// http.DefaultTransport. Its Transport is wrapped with the retrying
	// transport; the client itself is not modified.
	HTTPClient *http.Client
	// Header holds extra headers sent with every request (for example
	// OpenAI-Organization).
	Header http.Header
	// MaxAttempts bounds the tries of one request (429, 5xx and dial errors
	// are retried before the body streams); 0 means 3, 1 disables retries.
	MaxAttempts int
	// ReasoningEffort, when set, is sent as reasoning.effort ("minimal",
	// "low", "medium", "high") for models that reason.
	ReasoningEffort string
	// ReasoningSummary, when set, asks for reasoning summaries
	// (reasoning.summary: "auto", "concise" or "detailed"); without it
	// OpenAI sends none.
	ReasoningSummary string
	// PromptCacheKey, when set, is sent as prompt_cache_key: OpenAI caches
	// prompt prefixes by itself (no breakpoints), and routes requests with
	// the same key to the same cache, which raises the hit rate of
	// conversations that share a long prefix (a system prompt and tools).
	// Other servers may reject the field; "" sends none.
	PromptCacheKey string
	// Store lets the server store responses ("store": true). The zero value
	// sends "store": false and asks for the encrypted reasoning instead, so
	// the history alone carries everything.
	Store bool
}

// ConfigFromEnv returns a Config for model with APIKey from OPENAI_API_KEY
// and BaseURL from OPENAI_BASE_URL (empty when unset, so the default).
func ConfigFromEnv(model string) Config {
	return Config{Model: model, APIKey: os.Getenv("OPENAI_API_KEY"), BaseURL: os.Getenv("OPENAI_BASE_URL")}
}

// Model is an agentloop.Model that calls a Responses endpoint. It is safe
// for concurrent use; its configuration cannot change after New.
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
	if err := httpx.CheckModel("openai", cfg.Model); err != nil {
		return nil, err
	}
	base, err := httpx.BaseURL("openai", "Config.BaseURL", cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	switch cfg.ReasoningSummary {
	case "", "auto", "concise", "detailed":
	default:
		return nil, fmt.Errorf("openai: Config.ReasoningSummary %q is not one of auto, concise, detailed", cfg.ReasoningSummary)
	}
	ep, err := httpx.NewEndpoint(httpx.EndpointConfig{
		Provider:    "openai",
		URL:         base + "/responses",
		HTTPClient:  cfg.HTTPClient,
		MaxAttempts: cfg.MaxAttempts,
		Header:      httpx.StreamHeader(cfg.Header, map[string]string{"Authorization": httpx.Bearer(cfg.APIKey)}),
	})
	if err != nil {
		return nil, err
	}
	cfg.Header = nil // kept by the endpoint
	return &Model{cfg: cfg, ep: ep}, nil
}

// ModelInfo names the provider ("openai", the OpenTelemetry name for both
// of OpenAI's APIs) and Config.Model, for telemetry.
func (m *Model) ModelInfo() agentloop.ModelInfo {
	return agentloop.ModelInfo{Provider: "openai", Model: m.cfg.Model}
}

// Stream sends req and yields the reply as it streams. See the package doc
// for what is mapped; a failure is yielded once, last, as an error that
// starts with "openai:" or is a *providers.APIError.
func (m *Model) Stream(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	return httpx.StreamChunks(ctx, m.ep, m, req, (*Model).requestBody, func(r io.Reader, yield func(agentloop.Chunk, error) bool) error {
		return new(decoder).run(r, yield)
	})
}
