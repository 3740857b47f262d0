package ollama

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/httpx"
	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
	"github.com/ollama/ollama/version"
)

// DefaultHost is the server used when neither Config.Host nor OLLAMA_HOST
// is set (the official client's default).
const DefaultHost = "http://127.0.0.1:11434"

// ThinkMode says whether a reasoning model thinks before it answers; it is
// sent as the request's "think" field.
type ThinkMode string

// The thinking modes. Levels are for models that take one (gpt-oss);
// the others take on or off.
const (
	ThinkDefault ThinkMode = ""       // "think" is not sent: the server's default
	ThinkOn      ThinkMode = "on"     // think: true
	ThinkOff     ThinkMode = "off"    // think: false
	ThinkLow     ThinkMode = "low"    // think: "low"
	ThinkMedium  ThinkMode = "medium" // think: "medium"
	ThinkHigh    ThinkMode = "high"   // think: "high"
)

// Config configures a [Model]. Only Model is required.
type Config struct {
	// Model is the Ollama model name, such as "qwen3:4b". Required.
	Model string

	// Client is the Ollama client to use. nil means a client for Host
	// whose HTTP transport retries 429 and 5xx answers and failed
	// connections (up to 3 tries in all, with exponential backoff from
	// 500ms, honouring a Retry-After of up to 30s) before any of the
	// response body is read. A given Client is used as is: it retries only
	// if its own transport does, and its Chat reads the stream (with an
	// 8 MB line buffer per call; see the package doc).
	Client *api.Client
	// Host is the server's base URL, used when Client is nil. "" means the
	// OLLAMA_HOST environment variable, read by New the way the official
	// client reads it, or DefaultHost when that is unset.
	Host string

	// Think turns reasoning on or off; the model's thinking streams as
	// agentloop.ReasoningDelta. The zero value leaves it to the server.
	Think ThinkMode
	// Temperature is the sampling temperature; nil means the model's
	// default. A request's Settings.Temperature takes precedence.
	Temperature *float64
	// NumCtx is the context window in tokens (option num_ctx); 0 means the
	// model's default.
	NumCtx int
	// KeepAlive is how long the server keeps the model loaded after a
	// request; nil means the server's default (5 minutes), a negative
	// duration keeps it loaded, 0 unloads it at once.
	KeepAlive *time.Duration
	// Options are further model options (see Ollama's Modelfile
	// parameters: "top_k", "repeat_penalty", …), sent with every request.
	// Temperature, NumCtx and the request's Settings take precedence over
	// the same keys here. The map is read, never modified, and must not be
	// modified while the Model is in use.
	Options map[string]any
}

// ConfigFromEnv returns a Config for model on the server named by the
// OLLAMA_HOST environment variable (DefaultHost when unset), with every
// other field at its default.
func ConfigFromEnv(model string) Config {
	return Config{Model: model, Host: envconfig.Host().String()}
}

// Model is an [agentloop.Model] served by Ollama's /api/chat endpoint. It is
// safe for concurrent use.
type Model struct {
	cfg       Config
	think     *api.ThinkValue
	keepAlive *api.Duration
	// client is the official client: Config.Client, or one for the
	// requests that need its key-signed authorization (see useClient).
	client *api.Client
	// Without Config.Client, the Model reads /api/chat itself (read.go).
	host      *url.URL
	http      *http.Client
	chatURL   string
	userAgent string
}

var (
	_ agentloop.Model          = (*Model)(nil)
	_ agentloop.ModelDescriber = (*Model)(nil)
)

// New returns a Model for cfg. It fails, naming the field, when Model is
// empty, Host is not an http(s) URL or Think is not one of the ThinkMode
// constants. It makes no request.
func New(cfg Config) (*Model, error) {
	return newModel(cfg, nil)
}

// newModel is New with the transport of the client it builds when
// Config.Client is nil (nil means the retrying transport over
// http.DefaultTransport), so tests can fake the retry waits.
func newModel(cfg Config, rt http.RoundTripper) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("ollama: Config.Model is empty; name the model to use, such as \"qwen3:4b\"")
	}
	m := &Model{cfg: cfg, client: cfg.Client}
	switch cfg.Think {
	case ThinkDefault:
	case ThinkOn:
		m.think = &api.ThinkValue{Value: true}
	case ThinkOff:
		m.think = &api.ThinkValue{Value: false}
	case ThinkLow, ThinkMedium, ThinkHigh:
		m.think = &api.ThinkValue{Value: string(cfg.Think)}
	default:
		return nil, fmt.Errorf("ollama: Config.Think is %q; use one of \"\", %q, %q, %q, %q, %q", cfg.Think, ThinkOn, ThinkOff, ThinkLow, ThinkMedium, ThinkHigh)
	}
	if cfg.KeepAlive != nil {
		m.keepAlive = &api.Duration{Duration: *cfg.KeepAlive}
	}
	if m.client == nil {
		base := envconfig.Host()
		if cfg.Host != "" {
			u, err := url.Parse(cfg.Host)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("ollama: Config.Host %q is not an http:// or https:// URL with a host", cfg.Host)
			}
			base = u
		}
		if rt == nil {
			rt = &httpx.RetryTransport{}
		}
		m.host = base
		m.http = &http.Client{Transport: rt}
		m.chatURL = base.JoinPath("/api/chat").String()
		m.userAgent = fmt.Sprintf("ollama/%s (%s %s) Go/%s", version.Version, runtime.GOARCH, runtime.GOOS, runtime.Version())
		m.client = api.NewClient(base, m.http)
	}
	return m, nil
}

// useClient reports whether a model call goes through the official
// client's Chat: with Config.Client, and for a server that wants Ollama's
// key-signed authorization (OLLAMA_AUTH set, or ollama.com), which only the
// official client makes, as it decides on each call.
func (m *Model) useClient() bool {
	return m.http == nil || envconfig.UseAuth() || m.host.Hostname() == "ollama.com"
}

// errStopped is returned from the chat callback when the consumer stops
// ranging; it ends the official client's read loop, which closes the body.
var errStopped = errors.New("ollama: consumer stopped")

// ModelInfo names the provider ("ollama") and Config.Model, for telemetry.
func (m *Model) ModelInfo() agentloop.ModelInfo {
	return agentloop.ModelInfo{Provider: "ollama", Model: m.cfg.Model}
}

// Stream sends req to /api/chat and yields the reply: reasoning, text, each
// tool call whole (Ollama sends calls complete, so there are no
// ToolCallDelta chunks), then one Usage and one Finish. A call the server
// gave no id has ID "" (the loop makes one). Errors are described in the package doc. The
// connection is closed before Stream's iterator returns, also when the
// consumer stops early or ctx is done; Stream starts no goroutine.
func (m *Model) Stream(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	if m.useClient() {
		return m.stream(ctx, req, clientChat(m.client))
	}
	return m.stream(ctx, req, m.chat)
}

// chatFunc makes a model call: api.Client.Chat, or Model.chat, which reads
// the stream itself; tests fuzz stream with an in-memory one.
type chatFunc func(context.Context, *api.ChatRequest, func(*api.ChatResponse) error) error

// clientChat is the official client's Chat as a chatFunc.
func clientChat(c *api.Client) chatFunc {
	return func(ctx context.Context, req *api.ChatRequest, fn func(*api.ChatResponse) error) error {
		return c.Chat(ctx, req, func(r api.ChatResponse) error { return fn(&r) })
	}
}

func (m *Model) stream(ctx context.Context, req *agentloop.Request, chat chatFunc) iter.Seq2[agentloop.Chunk, error] {
	return func(yield func(agentloop.Chunk, error) bool) {
		if req == nil {
			yield(nil, errors.New("ollama: nil request"))
			return
		}
		cr, err := m.chatRequest(req)
		if err != nil {
			yield(nil, err)
			return
		}
		var mp mapper
		emit := func(c agentloop.Chunk) bool { return yield(c, nil) }
		err = chat(ctx, cr, func(r *api.ChatResponse) error {
			if !mp.add(r, emit) {
				return errStopped
			}
			return nil
		})
		if errors.Is(err, errStopped) {
			return
		}
		if err := m.streamError(ctx, err, &mp); err != nil {
			yield(nil, err)
		}
	}
}
