// Package openai is an [agentloop.Model] for the OpenAI Chat Completions API
// and the many servers that speak it (vLLM, llama.cpp, LM Studio, DeepSeek,
// xAI, OpenRouter, Ollama's /v1, ...), streaming over Server-Sent Events.
//
// It streams text, reasoning (the reasoning_content field, or reasoning as
// some servers name it), tool-call deltas keyed by index (several calls in
// parallel, arguments in many fragments), usage (it asks for it with
// stream_options.include_usage) and the finish reason. An error the server
// sends inside a 200 stream, and any non-2xx answer, becomes a
// *providers.APIError; check it with errors.Is against the providers
// sentinels. Requests are retried on 429 and 5xx before the body starts
// streaming, honouring Retry-After. A stream that ends before its finish
// reason (a lost connection) is an error wrapping io.ErrUnexpectedEOF; a
// server that cannot be reached, one wrapping providers.ErrUnreachable.
//
// Only the Chat Completions protocol is spoken; OpenAI's newer Responses
// API (/v1/responses) is not.
//
// Reasoning parts of the history are not sent back (Chat Completions has no
// field for them; DeepSeek rejects reasoning_content in requests).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"os"
	"strings"

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
	endpoint  string
	maxTokens string
	client    *http.Client
	retry     *httpx.RetryTransport
}

var _ agentloop.Model = (*Model)(nil)

// New checks cfg and returns a Model. The error names the field at fault.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai: Config.Model is required")
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: Config.BaseURL %q is not an http(s) URL", cfg.BaseURL)
	}
	mt := cfg.MaxTokensField
	switch mt {
	case "":
		mt = "max_tokens"
		if strings.TrimRight(base, "/") == DefaultBaseURL {
			mt = "max_completion_tokens"
		}
	case "max_tokens", "max_completion_tokens":
	default:
		return nil, fmt.Errorf("openai: Config.MaxTokensField %q is neither max_tokens nor max_completion_tokens", cfg.MaxTokensField)
	}
	if cfg.MaxAttempts < 0 {
		return nil, fmt.Errorf("openai: Config.MaxAttempts %d is negative", cfg.MaxAttempts)
	}
	client := &http.Client{}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		client = &c
	}
	retry := &httpx.RetryTransport{Base: client.Transport, MaxAttempts: cfg.MaxAttempts}
	client.Transport = retry
	cfg.Header = cfg.Header.Clone()
	return &Model{
		cfg:       cfg,
		endpoint:  strings.TrimRight(base, "/") + "/chat/completions",
		maxTokens: mt,
		client:    client,
		retry:     retry,
	}, nil
}

// Stream sends req and yields the reply as it streams. See the package doc
// for what is mapped; a failure is yielded once, last, as an error that
// starts with "openai:" or is a *providers.APIError.
func (m *Model) Stream(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	return func(yield func(agentloop.Chunk, error) bool) {
		if req == nil {
			yield(nil, errors.New("openai: nil request"))
			return
		}
		body, err := m.requestBody(req)
		if err != nil {
			yield(nil, err)
			return
		}
		hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, bytes.NewReader(body))
		if err != nil {
			yield(nil, fmt.Errorf("openai: %w", err))
			return
		}
		for k, vs := range m.cfg.Header {
			hreq.Header[k] = vs
		}
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("Accept", "text/event-stream")
		if m.cfg.APIKey != "" {
			hreq.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
		}
		resp, err := m.client.Do(hreq)
		if err != nil {
			yield(nil, fmt.Errorf("openai: %w", err))
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			yield(nil, httpx.APIError("openai", resp))
			return
		}
		dec := newDecoder(countAssistant(req.Messages))
		if err := dec.run(resp.Body, yield); err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("openai: %w (%w)", ctx.Err(), err)
			}
			yield(nil, err)
		}
	}
}

func countAssistant(h agentloop.History) int {
	n := 0
	for _, m := range h {
		if m.Role == agentloop.RoleAssistant {
			n++
		}
	}
	return n
}

// jsonText is a helper for tests and the request builder.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
