package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentloop/agentloop/providers"
)

// EndpointConfig configures an [Endpoint]. Provider and URL are required.
type EndpointConfig struct {
	// Provider names the provider ("openai"); it starts every error and is
	// the Provider of every *providers.APIError.
	Provider string
	// URL is where requests are POSTed: an absolute http(s) URL.
	URL string
	// HTTPClient sends the requests; nil means a client with no timeout
	// over http.DefaultTransport. Its Transport is wrapped with a
	// [RetryTransport]; the client itself is not modified.
	HTTPClient *http.Client
	// MaxAttempts is the RetryTransport's MaxAttempts: 0 means
	// DefaultMaxAttempts, 1 disables retries. Negative is an error.
	MaxAttempts int
	// Header is sent with every request. The map is copied.
	Header http.Header
}

// Endpoint is one API URL that a provider POSTs JSON requests to and reads
// streamed answers from, with the plumbing every provider needs: retries
// before the body streams, a non-2xx answer turned into a
// *providers.APIError, an unreachable server into an error wrapping
// providers.ErrUnreachable that names the URL once, and a cancelled request
// into an error wrapping the context's error and its cause.
//
// An Endpoint is safe for concurrent use; its configuration cannot change
// after [NewEndpoint].
type Endpoint struct {
	provider string
	url      string
	header   http.Header
	client   *http.Client
	retry    *RetryTransport
}

// NewEndpoint checks cfg and returns an Endpoint. The error names what is
// wrong.
func NewEndpoint(cfg EndpointConfig) (*Endpoint, error) {
	if cfg.Provider == "" {
		return nil, errors.New("httpx: EndpointConfig.Provider is empty")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: %q is not an http(s) URL with a host", cfg.Provider, cfg.URL)
	}
	if cfg.MaxAttempts < 0 {
		return nil, fmt.Errorf("%s: Config.MaxAttempts %d is negative", cfg.Provider, cfg.MaxAttempts)
	}
	client := &http.Client{}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		client = &c
	}
	retry := &RetryTransport{Base: client.Transport, MaxAttempts: cfg.MaxAttempts}
	client.Transport = retry
	header := cfg.Header.Clone()
	if header == nil {
		header = http.Header{}
	}
	if header.Get("Content-Type") == "" {
		header.Set("Content-Type", "application/json")
	}
	return &Endpoint{provider: cfg.Provider, url: cfg.URL, header: header, client: client, retry: retry}, nil
}

// BaseURL checks a provider's configured base URL (field names it in the
// error, such as "Config.BaseURL"): "" means def; anything else must be an
// absolute http(s) URL. The result has no trailing slash.
func BaseURL(provider, field, raw, def string) (string, error) {
	base := raw
	if base == "" {
		base = def
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: %s %q is not an http(s) URL", provider, field, raw)
	}
	return strings.TrimRight(base, "/"), nil
}

// SetRetrySleep replaces the retry transport's wait (for tests).
func (e *Endpoint) SetRetrySleep(sleep func(ctx context.Context, d time.Duration) error) {
	e.retry.Sleep = sleep
}

// Stream POSTs body and, when the answer is 2xx, calls read with the
// response body, closing it afterwards; read's error is returned as it is,
// unless ctx was done by then. Every error Stream makes itself starts with
// the provider's name:
//
//   - a non-2xx answer is a *providers.APIError;
//   - a server that could not be reached wraps providers.ErrUnreachable and
//     the network error, and names the URL (without query or user info);
//   - a request that ends because ctx is done wraps ctx.Err() and, when it
//     differs, context.Cause(ctx), whatever read returned.
func (e *Endpoint) Stream(ctx context.Context, body []byte, read func(io.Reader) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", e.provider, err)
	}
	for k, vs := range e.header {
		req.Header[k] = vs
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Cancelled(e.provider, ctx)
		}
		return e.requestError(req, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return APIError(e.provider, resp)
	}
	if err := read(resp.Body); err != nil {
		if ctx.Err() != nil {
			return Cancelled(e.provider, ctx)
		}
		return err
	}
	return nil
}

// requestError names the URL once: http.Client's *url.Error already names
// it, so an unreachable server's error is rebuilt around the network error.
func (e *Endpoint) requestError(req *http.Request, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && IsDialError(ue.Err) {
		cause := ue.Err
		if !errors.Is(cause, providers.ErrUnreachable) {
			cause = fmt.Errorf("%w: %w", providers.ErrUnreachable, cause)
		}
		return fmt.Errorf("%s: cannot reach %s: %w", e.provider, RedactURL(req.URL), cause)
	}
	return fmt.Errorf("%s: %w", e.provider, err)
}

// Cancelled is the error of a request that ended because ctx is done: it
// wraps ctx.Err() and, when it differs, context.Cause(ctx).
func Cancelled(provider string, ctx context.Context) error {
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("%s: request cancelled: %w: %w", provider, err, cause)
	}
	return fmt.Errorf("%s: request cancelled: %w", provider, err)
}

// EndedEarly is the error of a 200 stream that the server ended, cleanly,
// before it sent what ends a complete answer (missing names it, such as
// "a finish reason"). It wraps io.ErrUnexpectedEOF. A server does that when
// it stops a generation itself (Ollama's repeat limit) or crashes between
// events; a connection lost mid-stream is [StreamBroken] instead.
func EndedEarly(provider, missing string) error {
	return fmt.Errorf("%s: the server ended the stream before %s: %w", provider, missing, io.ErrUnexpectedEOF)
}

// StreamBroken is the error of a stream whose body could not be read to its
// end (a connection lost or reset mid-stream); it wraps err, which is
// io.ErrUnexpectedEOF for a cut HTTP/1.1 chunked body.
func StreamBroken(provider string, err error) error {
	return fmt.Errorf("%s: reading the stream failed (connection lost?): %w", provider, err)
}

// IsDialError reports whether err means no connection could be made: a
// RetryTransport's verdict (it wraps providers.ErrUnreachable), a dial
// error, or a failed DNS lookup.
func IsDialError(err error) bool {
	if errors.Is(err, providers.ErrUnreachable) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// RedactURL returns u without its query (which may carry signatures or
// keys) and user info.
func RedactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.ForceQuery = false
	return c.String()
}
