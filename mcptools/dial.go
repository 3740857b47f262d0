package mcptools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Dialer returns a new, unconnected transport to an MCP server. A [Server]
// calls it for its first connection and again for each reconnection, so it
// must return a fresh transport every time (an [exec.Cmd] starts only once).
// It is called by one goroutine at a time.
type Dialer func(ctx context.Context) (mcp.Transport, error)

// Stdio returns a Dialer that starts the program name with args for each
// connection and speaks MCP over its standard input and output (the stdio
// transport). The program's standard error is discarded; use [Command] to
// keep it, or to set its environment or directory.
func Stdio(name string, args ...string) Dialer {
	return Command(func() *exec.Cmd { return exec.Command(name, args...) })
}

// Command returns a Dialer that starts the command newCmd returns for each
// connection and speaks MCP over its standard input and output. newCmd must
// return a new, unstarted [exec.Cmd] on every call, with Stdin and Stdout
// unset. Closing the connection closes the process's standard input, waits
// for it to exit, and signals it (SIGTERM, then SIGKILL) if it does not
// within five seconds.
//
// Use [exec.Command], not exec.CommandContext: the process must live as
// long as the connection, not as long as the call that happened to start it.
func Command(newCmd func() *exec.Cmd) Dialer {
	return func(context.Context) (mcp.Transport, error) {
		if newCmd == nil {
			return nil, errors.New("mcptools: Command: nil func")
		}
		cmd := newCmd()
		if cmd == nil {
			return nil, errors.New("mcptools: Command: the func returned a nil *exec.Cmd")
		}
		if cmd.Process != nil {
			return nil, fmt.Errorf("mcptools: Command: %s was already started; return a new exec.Cmd on every call", cmd.Path)
		}
		return &mcp.CommandTransport{Command: cmd}, nil
	}
}

// HTTPOptions configure the streamable HTTP transport of [HTTP]. The zero
// value is ready to use.
type HTTPOptions struct {
	// Client sends the requests; nil means [http.DefaultClient].
	Client *http.Client
	// Header, if non-nil, is called before every HTTP request of the
	// connection (the POSTs that carry messages, the GET of the server's
	// event stream, the closing DELETE) with a copy of the request that it
	// may change: set an Authorization header, a tenant id, a fresh token.
	// An error fails that request. It may be called from several goroutines
	// at once.
	Header func(req *http.Request) error
}

// HTTP returns a Dialer that connects to the MCP server at url over the
// streamable HTTP transport. The zero HTTPOptions are useful.
func HTTP(url string, o HTTPOptions) Dialer {
	return func(context.Context) (mcp.Transport, error) {
		if url == "" {
			return nil, errors.New("mcptools: HTTP: empty URL")
		}
		client := o.Client
		if client == nil {
			client = http.DefaultClient
		}
		if o.Header != nil {
			c := *client
			base := c.Transport
			if base == nil {
				base = http.DefaultTransport
			}
			c.Transport = &headerTransport{base: base, header: o.Header}
			client = &c
		}
		return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client}, nil
	}
}

// headerTransport calls a header hook on a clone of each request, since a
// RoundTripper must not modify the request it is given.
type headerTransport struct {
	base   http.RoundTripper
	header func(*http.Request) error
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	if err := t.header(r); err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even on errors
		}
		return nil, fmt.Errorf("mcptools: HTTP header hook: %w", err)
	}
	return t.base.RoundTrip(r)
}

// InMemory returns a Dialer that connects to server within the process, for
// tests and for tools written with the MCP SDK that need no separate
// process. Each connection is a new session of server; it ends when the
// connection closes.
func InMemory(server *mcp.Server) Dialer {
	return func(ctx context.Context) (mcp.Transport, error) {
		if server == nil {
			return nil, errors.New("mcptools: InMemory: nil server")
		}
		serverSide, clientSide := mcp.NewInMemoryTransports()
		if _, err := server.Connect(ctx, serverSide, nil); err != nil {
			return nil, fmt.Errorf("mcptools: InMemory: connecting the server: %w", err)
		}
		return clientSide, nil
	}
}
