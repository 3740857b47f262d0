// Package openai is an [agentloop.Model] for the OpenAI Chat Completions API
// and the many servers that speak it (vLLM, llama.cpp, LM Studio, DeepSeek,
// xAI, OpenRouter, Ollama's /v1, ...), streaming over Server-Sent Events.
//
// It streams text, reasoning (the reasoning_content field, or reasoning as
// some servers name it), tool-call deltas keyed by index (several calls in
// parallel, arguments in many fragments), usage (it asks for it with
// stream_options.include_usage; prompt_tokens_details.cached_tokens is
// CacheRead, completion_tokens_details.reasoning_tokens is Reasoning, and
// Output counts the reasoning tokens even from servers that count them in
// total_tokens only, as xAI does) and the finish reason. The API caches
// prompt prefixes by itself, with no breakpoints to send. A call keeps the id
// the server gave it; a call without one is yielded with an empty id, which
// the loop fills. finish_reason "length" after calls whose arguments are
// whole JSON is [agentloop.FinishToolCalls] (see the providers package doc).
//
// An error the server sends inside a 200 stream, and any non-2xx answer,
// becomes a *providers.APIError; check it with errors.Is against the
// providers sentinels. Requests are retried on 429 and 5xx before the body
// starts streaming, honouring Retry-After. A stream that ends before its
// finish reason is an error wrapping io.ErrUnexpectedEOF; a server that
// cannot be reached, one wrapping providers.ErrUnreachable.
//
// Settings.ResponseFormat is sent as response_format {"type":"json_schema"}
// with "strict": true.
//
// Only the Chat Completions protocol is spoken; for OpenAI's Responses API
// (/v1/responses) use the openairesponses package.
//
// Reasoning parts of the history are not sent back (Chat Completions has no
// field for them; DeepSeek rejects reasoning_content in requests).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
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
	// Model is the model name sent with every request, e.g. "gpt-4.1".
	// Required.
	Model string
	// BaseURL is the API root; "/chat/completions" is appended. "" means
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
	// OpenAI-Organization or OpenRouter's HTTP-Referer).
	Header http.Header
	// MaxAttempts bounds the tries of one request (429, 5xx and dial errors
	// are retried before the body streams); 0 means 3, 1 disables retries.
	MaxAttempts int
	// MaxTokensField is the request field that carries Settings.MaxTokens:
	// "max_completion_tokens" (what OpenAI's reasoning models require) or
	// "max_tokens" (what most other servers read). "" means
	// max_completion_tokens when BaseURL is the default, max_tokens
	// otherwise.
	MaxTokensField string
	// ReasoningEffort, when set, is sent as reasoning_effort ("low",
	// "medium", "high") for models that reason.
	ReasoningEffort string
	// PromptCacheKey, when set, is sent as prompt_cache_key: OpenAI caches
	// prompt prefixes by itself (no breakpoints), and routes requests with
	// the same key to the same cache, which raises the hit rate of
	// conversations that share a long prefix (a system prompt and tools).
	// Other servers may reject the field; "" sends none.
	PromptCacheKey string
}

// ConfigFromEnv returns a Config for model with APIKey from OPENAI_API_KEY
// and BaseURL from OPENAI_BASE_URL (empty when unset, so the default).
func ConfigFromEnv(model string) Config {
	return Config{Model: model, APIKey: os.Getenv("OPENAI_API_KEY"), BaseURL: os.Getenv("OPENAI_BASE_URL")}
}

// Model is an agentloop.Model that calls a Chat Completions endpoint. It is
// safe for concurrent use; its configuration cannot change after New.
type Model struct {
	cfg       Config
	maxTokens string
	ep        *httpx.Endpoint
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
	mt := cfg.MaxTokensField
	switch mt {
	case "":
		mt = "max_tokens"
		if base == DefaultBaseURL {
			mt = "max_completion_tokens"
		}
	case "max_tokens", "max_completion_tokens":
	default:
		return nil, fmt.Errorf("openai: Config.MaxTokensField %q is neither max_tokens nor max_completion_tokens", cfg.MaxTokensField)
	}
	ep, err := httpx.NewEndpoint(httpx.EndpointConfig{
		Provider:    "openai",
		URL:         base + "/chat/completions",
		HTTPClient:  cfg.HTTPClient,
		MaxAttempts: cfg.MaxAttempts,
		Header:      httpx.StreamHeader(cfg.Header, map[string]string{"Authorization": httpx.Bearer(cfg.APIKey)}),
	})
	if err != nil {
		return nil, err
	}
	cfg.Header = nil // kept by the endpoint
	return &Model{cfg: cfg, maxTokens: mt, ep: ep}, nil
}

// ModelInfo names the provider ("openai") and Config.Model, for telemetry.
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

// marshal encodes v as JSON without HTML escaping and without the
// encoder's trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
