// Package gemini is an [agentloop.Model] for Google's Gemini API and Vertex
// AI, built on the official SDK (google.golang.org/genai), which streams
// over Server-Sent Events (streamGenerateContent?alt=sse).
//
// It is a Go module of its own, so that programs that do not use Gemini
// download none of the SDK's dependencies.
//
// It streams text, thinking (parts marked thought, with Config.IncludeThoughts)
// as ReasoningDelta, and a part's thoughtSignature as a ReasoningEnd with
// the signature (base64) yielded before the part, so the loop keeps it in
// the history; it is sent back on the part that follows it, as the API
// requires for function calls. Function calls arrive whole, possibly several
// in one reply: each is one ToolCall (no deltas) with the server's id, or an
// empty id that the loop fills, and its arguments as a JSON object (keys
// sorted: the SDK decodes them into a map). Function responses go back as
// functionResponse parts named after the call, with the call's id, the
// content under "output" (or "error" for an error result).
//
// Usage comes from usageMetadata: Input is promptTokenCount (which counts
// cachedContentTokenCount) plus toolUsePromptTokenCount, CacheRead is
// cachedContentTokenCount, Output is candidatesTokenCount plus
// thoughtsTokenCount, Reasoning is thoughtsTokenCount. Finish reasons: STOP
// is stop (tool_calls after calls), MAX_TOKENS is length (tool_calls after
// calls, which arrive whole), SAFETY, RECITATION, BLOCKLIST,
// PROHIBITED_CONTENT, SPII and the image ones, and a prompt blocked by
// promptFeedback, are content_filter, anything else other. A stream that
// ends before a finish reason is an error wrapping io.ErrUnexpectedEOF.
//
// Settings.ResponseFormat is sent as responseMimeType application/json with
// the schema as responseJsonSchema. Files go as inline data (or file data
// for a URL).
//
// Errors from the API are *providers.APIError with the API's own message
// ("API key not valid. Please pass a valid API key.") and its status
// (INVALID_ARGUMENT…) as Type. Requests are retried on 429 and 5xx before
// the body starts streaming, honouring Retry-After.
package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"

	"google.golang.org/genai"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

// Config configures a [Model]. Only Model is required; the rest is read
// from the environment the way the SDK reads it when left empty.
type Config struct {
	// Model is the model name, e.g. "gemini-2.5-flash". Required.
	Model string
	// APIKey is the Gemini API key; "" means the SDK's environment
	// variables: GOOGLE_API_KEY, else GEMINI_API_KEY.
	APIKey string
	// BaseURL is the API root; "" means the SDK's default
	// (https://generativelanguage.googleapis.com/, or Vertex AI's).
	BaseURL string
	// Vertex selects Vertex AI instead of the Gemini API. false still
	// selects Vertex AI when GOOGLE_GENAI_USE_VERTEXAI is "1" or "true".
	// Vertex AI authenticates with Application Default Credentials.
	Vertex bool
	// Project and Location are Vertex AI's; "" means GOOGLE_CLOUD_PROJECT
	// and GOOGLE_CLOUD_LOCATION (or GOOGLE_CLOUD_REGION).
	Project, Location string
	// HTTPClient sends the requests; nil means a client over
	// http.DefaultTransport. Its Transport is wrapped with the retrying
	// transport; the client itself is not modified.
	HTTPClient *http.Client
	// MaxAttempts bounds the tries of one request; 0 means 3, 1 disables
	// retries.
	MaxAttempts int
	// IncludeThoughts asks for the model's thought summaries, streamed as
	// reasoning.
	IncludeThoughts bool
	// ThinkingBudget, when not 0, is the thinking budget in tokens (-1
	// lets the model decide, 0 is the model's default).
	ThinkingBudget int
}

// Model is an agentloop.Model that calls the Gemini API or Vertex AI. It is
// safe for concurrent use; its configuration cannot change after New.
type Model struct {
	cfg    Config
	client *genai.Client
	retry  *httpx.RetryTransport
}

var (
	_ agentloop.Model          = (*Model)(nil)
	_ agentloop.ModelDescriber = (*Model)(nil)
)

// New checks cfg and returns a Model. The error names what is missing (the
// SDK's own, for a missing key or project).
func New(ctx context.Context, cfg Config) (*Model, error) {
	if err := httpx.CheckModel("gemini", cfg.Model); err != nil {
		return nil, err
	}
	if cfg.MaxAttempts < 0 {
		return nil, fmt.Errorf("gemini: Config.MaxAttempts %d is negative", cfg.MaxAttempts)
	}
	hc := http.Client{}
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	}
	retry := &httpx.RetryTransport{Base: hc.Transport, MaxAttempts: cfg.MaxAttempts}
	hc.Transport = retry
	cc := &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Project:     cfg.Project,
		Location:    cfg.Location,
		HTTPClient:  &hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL},
	}
	if cfg.Vertex {
		cc.Backend = genai.BackendVertexAI
	}
	client, err := genai.NewClient(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	cfg.HTTPClient = nil // kept by the client
	return &Model{cfg: cfg, client: client, retry: retry}, nil
}

// ModelInfo names the provider ("gcp.gemini", or "gcp.vertex_ai" on Vertex
// AI, as OpenTelemetry spells them) and Config.Model, for telemetry.
func (m *Model) ModelInfo() agentloop.ModelInfo {
	provider := "gcp.gemini"
	if m.client.ClientConfig().Backend == genai.BackendVertexAI {
		provider = "gcp.vertex_ai"
	}
	return agentloop.ModelInfo{Provider: provider, Model: m.cfg.Model}
}

// Stream sends req and yields the reply as it streams. See the package doc
// for what is mapped; a failure is yielded once, last, as an error that
// starts with "gemini:" or is a *providers.APIError.
func (m *Model) Stream(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	return func(yield func(agentloop.Chunk, error) bool) {
		if req == nil {
			yield(nil, errors.New("gemini: nil request"))
			return
		}
		contents, config, err := m.request(req)
		if err != nil {
			yield(nil, err)
			return
		}
		var d decoder
		for resp, err := range m.client.Models.GenerateContentStream(ctx, m.cfg.Model, contents, config) {
			if err != nil {
				yield(nil, streamError(ctx, err))
				return
			}
			if !d.response(resp, yield) {
				return
			}
		}
		if ctx.Err() != nil {
			yield(nil, httpx.Cancelled("gemini", ctx))
			return
		}
		d.end(yield)
	}
}

// isReadError reports whether err is a failure to read the body.
func isReadError(err error) bool {
	var netErr net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &netErr)
}

// cutLine reports whether err is the SDK's error for a line whose JSON
// ends early.
func cutLine(err error) bool {
	var syntax *json.SyntaxError
	return errors.As(err, &syntax) && syntax.Error() == "unexpected end of JSON input"
}

// streamError turns the SDK's error into the provider's: an API error with
// the API's message, a cancel, or the transport's error.
func streamError(ctx context.Context, err error) error {
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.Code)
		}
		return &providers.APIError{Provider: "gemini", StatusCode: apiErr.Code, Type: apiErr.Status, Message: msg}
	}
	switch {
	case ctx.Err() != nil:
		return httpx.Cancelled("gemini", ctx)
	case httpx.IsDialError(err):
		return fmt.Errorf("gemini: cannot reach the server: %w", err)
	case isReadError(err):
		return httpx.StreamBroken("gemini", err)
	case cutLine(err):
		// The SDK reports a connection cut mid-line as the line's JSON
		// ending early, and drops the read error.
		return httpx.StreamBroken("gemini", fmt.Errorf("%w: %w", io.ErrUnexpectedEOF, err))
	}
	return fmt.Errorf("gemini: %w", err)
}
