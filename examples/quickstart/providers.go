package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/gemini"
	"github.com/agentloop/agentloop/providers/ollama"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/agentloop/agentloop/providers/openairesponses"
)

// Default model names when -model is not given.
const (
	// defaultOllamaModel is small enough for a laptop and calls tools well.
	defaultOllamaModel    = "qwen3:4b"
	defaultOpenAIModel    = "gpt-4.1-mini"
	defaultAnthropicModel = "claude-sonnet-4-5"
	defaultGeminiModel    = "gemini-2.5-flash"
)

// probeTimeout bounds the check for a local Ollama server, so that a
// machine without one starts the simulator at once.
const probeTimeout = 2 * time.Second

// providerModel builds the model named by -provider.
// Notes for the user (a missing default Ollama model) go to stderr.
func providerModel(ctx context.Context, cfg modelConfig, stderr io.Writer) (agentloop.Model, string, error) {
	switch cfg.provider {
	case "ollama":
		host := cfg.baseURL
		if host == "" {
			var err error
			if host, err = ollamaHost(); err != nil {
				return nil, "", fmt.Errorf("-provider ollama: %w", err)
			}
		}
		name := cfg.model
		if name == "" {
			models, err := ollamaModels(ctx, host)
			if err == nil {
				name, err = ollamaModelName(models, stderr)
			}
			if err != nil {
				return nil, "", fmt.Errorf("-provider ollama: %w", err)
			}
		}
		m, err := ollama.New(ollama.Config{Model: name, Host: host})
		return built(m, err, fmt.Sprintf("model: Ollama %s at %s", name, host))
	case "openai":
		c := openai.ConfigFromEnv(cmp.Or(cfg.model, defaultOpenAIModel))
		c.BaseURL = cmp.Or(cfg.baseURL, c.BaseURL)
		if c.APIKey == "" && c.BaseURL == "" { // a local server (-base-url) may need no key
			return nil, "", errors.New("-provider openai: set OPENAI_API_KEY, or -base-url for another OpenAI-compatible server")
		}
		m, err := openai.New(c)
		return built(m, err, "model: OpenAI-compatible "+c.Model)
	case "openai-responses":
		c := openairesponses.ConfigFromEnv(cmp.Or(cfg.model, defaultOpenAIModel))
		c.BaseURL = cmp.Or(cfg.baseURL, c.BaseURL)
		if c.APIKey == "" && c.BaseURL == "" {
			return nil, "", errors.New("-provider openai-responses: set OPENAI_API_KEY, or -base-url for another server that speaks the Responses API")
		}
		m, err := openairesponses.New(c)
		return built(m, err, "model: OpenAI Responses "+c.Model)
	case "anthropic":
		c := anthropic.ConfigFromEnv(cmp.Or(cfg.model, defaultAnthropicModel))
		c.BaseURL = cmp.Or(cfg.baseURL, c.BaseURL)
		if c.APIKey == "" && c.BaseURL == "" {
			return nil, "", errors.New("-provider anthropic: set ANTHROPIC_API_KEY")
		}
		m, err := anthropic.New(c)
		return built(m, err, "model: Anthropic "+c.Model)
	case "gemini":
		// The SDK reads the key (and Vertex AI's settings) from the environment.
		if os.Getenv("GEMINI_API_KEY") == "" && os.Getenv("GOOGLE_API_KEY") == "" && os.Getenv("GOOGLE_GENAI_USE_VERTEXAI") == "" {
			return nil, "", errors.New("-provider gemini: set GEMINI_API_KEY or GOOGLE_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI=true for Vertex AI)")
		}
		m, err := gemini.New(ctx, gemini.Config{Model: cmp.Or(cfg.model, defaultGeminiModel), BaseURL: cfg.baseURL})
		return built(m, err, "model: Gemini "+cmp.Or(cfg.model, defaultGeminiModel))
	}
	return nil, "", fmt.Errorf("-provider %q: want ollama, openai, openai-responses, anthropic or gemini", cfg.provider)
}

// built returns m and its description, or err (never a non-nil
// interface holding a nil *Model).
func built[M agentloop.Model](m M, err error, desc string) (agentloop.Model, string, error) {
	if err != nil {
		return nil, "", err
	}
	return m, desc, nil
}

// detectOllama returns an Ollama model when a server answers at OLLAMA_HOST
// (or Ollama's default address) and has a model: cfg.model if given, else
// the one ollamaModelName picks. It reports false otherwise, after saying
// why on stderr when a server answered. A malformed OLLAMA_HOST is an
// error: the user asked for a server, and the simulator would hide that
// the address is wrong.
func detectOllama(ctx context.Context, cfg modelConfig, stderr io.Writer) (agentloop.Model, string, bool, error) {
	host, err := ollamaHost()
	if err != nil {
		return nil, "", false, err
	}
	models, err := ollamaModels(ctx, host)
	if err != nil {
		return nil, "", false, nil // no server: the caller falls back quietly
	}
	name := cfg.model
	if name == "" {
		if name, err = ollamaModelName(models, stderr); err != nil {
			fmt.Fprintf(stderr, "Ollama at %s: %v\n", host, err)
			return nil, "", false, nil
		}
	}
	m, err := ollama.New(ollama.Config{Model: name, Host: host})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, "", false, nil
	}
	return m, fmt.Sprintf("model: Ollama %s at %s (found a local server; -provider picks another)", name, host), true, nil
}

// ollamaHost returns the Ollama server's URL: OLLAMA_HOST read as Ollama
// reads it (host, host:port, or a URL; "" is Ollama's default), or an
// error naming what is wrong where Ollama would quietly use something else
// (a port that is not a number, a scheme other than http and https).
func ollamaHost() (string, error) {
	s := strings.TrimSpace(os.Getenv("OLLAMA_HOST"))
	if s != "" {
		if err := checkOllamaHost(s); err != nil {
			return "", fmt.Errorf("OLLAMA_HOST=%q is not an Ollama address: %w (want host, host:port or http://host:port; unset it for %s)",
				s, err, "127.0.0.1:11434")
		}
	}
	return envconfig.Host().String(), nil
}

func checkOllamaHost(s string) error {
	hostport := s
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		if scheme != "http" && scheme != "https" {
			return fmt.Errorf("scheme %q is not http or https", scheme)
		}
		hostport = rest
	}
	hostport, _, _ = strings.Cut(hostport, "/")
	if hostport == "" {
		return errors.New("no host")
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		// No port: a name, an IP address, or an IPv6 address in brackets.
		bare := strings.Trim(hostport, "[]")
		if net.ParseIP(bare) == nil && strings.ContainsAny(bare, ":[]") {
			return fmt.Errorf("%q is not a host or host:port", hostport)
		}
		host = bare
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	if host == "" {
		return errors.New("no host")
	}
	if strings.ContainsAny(host, " \t@?#%") {
		return fmt.Errorf("host %q holds characters no host name has", host)
	}
	return nil
}

// ollamaModels lists the models of the Ollama server at host, waiting at
// most probeTimeout.
func ollamaModels(ctx context.Context, host string) ([]string, error) {
	u, err := url.Parse(host)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL with a host", host)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	list, err := api.NewClient(u, http.DefaultClient).List(ctx)
	if err != nil {
		return nil, fmt.Errorf("no Ollama server answers at %s: %w", host, err)
	}
	names := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		names = append(names, m.Name)
	}
	return names, nil
}

// ollamaModelName returns the model to run when -model is not given:
// defaultOllamaModel if the server has it, else the first one it lists
// (saying on stderr how to get the default). A server without models is an
// error that says how to pull one.
func ollamaModelName(models []string, stderr io.Writer) (string, error) {
	pull := "ollama pull " + defaultOllamaModel
	switch {
	case slices.Contains(models, defaultOllamaModel):
		return defaultOllamaModel, nil
	case len(models) == 0:
		return "", fmt.Errorf("the server has no models; pull the default with `%s`, or pass -model", pull)
	}
	fmt.Fprintf(stderr, "the default model %s is not pulled (`%s`); using %s\n", defaultOllamaModel, pull, models[0])
	return models[0], nil
}
