package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/internal/httpx"
	"github.com/ollama/ollama/api"
)

// streamError turns what the chatFunc returned (the official client's Chat
// or Model.chat, which return the same errors but for an over-long line)
// into the stream's error, or nil when the stream ended normally.
//
// The client stops reading at the first read error without reporting it,
// so a stream that ends without its final chunk (done:true) is reported
// here as a lost connection. It reports both a line that is not JSON and an
// {"error": …} line as an error whose text is the line or the message; a
// line is recognised by its leading brace or bracket.
func (m *Model) streamError(ctx context.Context, err error, mp *mapper) error {
	if err == nil && mp.done {
		return nil
	}
	if ctx.Err() != nil {
		return httpx.Cancelled("ollama", ctx)
	}
	if err == nil {
		if mp.chunks == 0 {
			return fmt.Errorf("ollama: the server ended its response without sending anything: %w", io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("ollama: the stream ended after %d chunks without its final chunk (done:true); the connection was lost or the server stopped: %w", mp.chunks, io.ErrUnexpectedEOF)
	}

	if errors.Is(err, errLineTooLong) {
		return fmt.Errorf("ollama: line %d of the stream is longer than %d bytes, the most this package reads: %w", mp.chunks+1, maxLineBytes, err)
	}
	var se api.StatusError
	if errors.As(err, &se) {
		return m.statusError(se)
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		msg := ae.Status
		if ae.SigninURL != "" {
			msg = fmt.Sprintf("%s; sign in at %s", strings.TrimSpace(msg), ae.SigninURL)
		}
		return &providers.APIError{Provider: "ollama", StatusCode: ae.StatusCode, Message: msg}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		where := ue.URL
		if u, err := url.Parse(ue.URL); err == nil {
			where = httpx.RedactURL(u)
		}
		if httpx.IsDialError(ue.Err) {
			// ue.Err, not ue: the *url.Error would name the URL again.
			cause := ue.Err
			if !errors.Is(cause, providers.ErrUnreachable) { // a caller's own client
				cause = fmt.Errorf("%w: %w", providers.ErrUnreachable, cause)
			}
			return fmt.Errorf("ollama: cannot reach the Ollama server at %s (set OLLAMA_HOST or Config.Host to its address; the default is %s, and `ollama serve` starts it): %w", where, DefaultHost, cause)
		}
		return fmt.Errorf("ollama: request to %s failed: %w", where, err)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return fmt.Errorf("ollama: chunk %d of the stream does not fit Ollama's chat response format: %w", mp.chunks+1, err)
	}
	text := strings.TrimSpace(err.Error())
	if strings.HasPrefix(text, "{") || strings.HasPrefix(text, "[") {
		return fmt.Errorf("ollama: line %d of the stream is not valid JSON (malformed, or cut off by a lost connection): %.200q: %w", mp.chunks+1, text, errMalformed)
	}
	// An {"error": "…"} line inside the 200 stream.
	return &providers.APIError{Provider: "ollama", Message: text}
}

// errMalformed is wrapped by the error for a stream line that is not JSON.
// The official client returns such a line as a plain error whose text is
// the line, which is not worth keeping in the chain.
var errMalformed = errors.New("malformed NDJSON line")

// statusError maps an HTTP error answer. A missing model gets a message
// that tells the user how to get it.
func (m *Model) statusError(se api.StatusError) error {
	msg := se.ErrorMessage
	if msg == "" {
		msg = se.Status
	}
	apiErr := &providers.APIError{Provider: "ollama", StatusCode: se.StatusCode, Message: msg}
	if se.StatusCode == http.StatusNotFound && strings.Contains(strings.ToLower(msg), "not found") {
		return fmt.Errorf("ollama: model %q is not on the server; run `ollama pull %s` to download it: %w", m.cfg.Model, m.cfg.Model, apiErr)
	}
	return apiErr
}
