// Package mcpflags gives the example programs their -mcp and -mcp-url
// flags: each adds the tools of one MCP server (see mcptools) to the
// program's agent.
//
//	-mcp "COMMAND ARGS"   a server started over stdio (split at spaces; repeatable)
//	-mcp-url URL          a server reached over streamable HTTP (repeatable)
//
// With one server its tools keep their names; with several, each tool is
// prefixed with its server's number in flag order ("mcp1_", "mcp2_", …), so
// that names never collide.
package mcpflags

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/mcptools"
)

// ConnectTimeout bounds connecting to all the servers and listing their
// tools.
const ConnectTimeout = 30 * time.Second

// Flags are the MCP servers given on the command line. A nil *Flags has
// none; its methods do nothing.
type Flags struct {
	specs   []spec
	servers []*mcptools.Server
}

type spec struct {
	command []string // stdio
	url     string   // streamable HTTP
}

func (s spec) String() string {
	if s.url != "" {
		return "http " + s.url
	}
	return "stdio " + strings.Join(s.command, " ")
}

// Register defines -mcp and -mcp-url on fs and returns where they go.
func Register(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.Func("mcp", "add the tools of the MCP server that this command starts, as \"COMMAND ARGS\" split at spaces (repeatable)", func(s string) error {
		fields := strings.Fields(s)
		if len(fields) == 0 {
			return errors.New("empty command")
		}
		f.specs = append(f.specs, spec{command: fields})
		return nil
	})
	fs.Func("mcp-url", "add the tools of the MCP server at this streamable HTTP URL (repeatable)", func(s string) error {
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("%q is not an http(s) URL", s)
		}
		f.specs = append(f.specs, spec{url: s})
		return nil
	})
	return f
}

// Servers describes the servers given, in flag order ("stdio CMD ARGS",
// "http URL").
func (f *Flags) Servers() []string {
	if f == nil {
		return nil
	}
	out := make([]string, len(f.specs))
	for i, s := range f.specs {
		out[i] = s.String()
	}
	return out
}

// Tools connects to every server, lists its tools and returns have with
// them appended. It writes one line per server to log. A server that
// cannot be reached, or a tool whose name is already taken, is an error.
// Call Close when done, also after an error.
func (f *Flags) Tools(ctx context.Context, have []*agentloop.Tool, log io.Writer) ([]*agentloop.Tool, error) {
	if f == nil || len(f.specs) == 0 {
		return have, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	taken := make(map[string]bool, len(have))
	for _, t := range have {
		taken[t.Name] = true
	}
	for i, s := range f.specs {
		opts := mcptools.ServerOptions{}
		if len(f.specs) > 1 {
			opts.Prefix = fmt.Sprintf("mcp%d_", i+1)
		}
		dial := mcptools.HTTP(s.url, mcptools.HTTPOptions{})
		if s.url == "" {
			dial = mcptools.Command(func() *exec.Cmd {
				cmd := exec.Command(s.command[0], s.command[1:]...)
				ownProcessGroup(cmd)
				return cmd
			})
		}
		srv, err := mcptools.NewServer(dial, opts)
		if err != nil {
			return nil, err
		}
		f.servers = append(f.servers, srv)
		tools, err := srv.Tools(ctx)
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: %w", s, err)
		}
		names := make([]string, len(tools))
		for j, t := range tools {
			if taken[t.Name] {
				return nil, fmt.Errorf("MCP server %s: its tool %q has the name of another tool", s, t.Name)
			}
			taken[t.Name] = true
			names[j] = t.Name
		}
		fmt.Fprintf(log, "MCP server %q (%s): %d tools: %s\n", srv.Name(), s, len(tools), strings.Join(names, ", "))
		have = append(have, tools...)
	}
	return have, nil
}

// Close closes the servers (stopping the processes of -mcp servers).
func (f *Flags) Close() error {
	if f == nil {
		return nil
	}
	var errs []error
	for _, s := range f.servers {
		errs = append(errs, s.Close())
	}
	f.servers = nil
	return errors.Join(errs...)
}
