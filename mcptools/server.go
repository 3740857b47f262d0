package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults used when the matching ServerOptions field is zero.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultMaxResultBytes = 64 << 10
)

// ErrClosed matches the error of every use of a [Server] after
// [Server.Close], including calls of its tools.
var ErrClosed = errors.New("mcptools: server closed")

// ServerOptions configure a [Server]. The zero value is ready to use: every
// tool of the server is offered under its own name, none needs approval.
type ServerOptions struct {
	// Name names the server in errors and logs; "" means the name the
	// server gives itself when it connects.
	Name string

	// Prefix is put before the name of every tool of the server ("gh_" +
	// "create_issue"), so that several servers' tools never collide. It
	// may only use letters, digits, '_' and '-'.
	Prefix string

	// Filter chooses the tools to offer; nil offers all of them. It gets
	// each tool as the server describes it (unprefixed name, annotations).
	Filter func(tool *mcp.Tool) bool

	// NeedsApproval says which tools wait for a human's approval before
	// each call ([agentloop.Tool.NeedsApproval]); nil means none. Return
	// true for every tool to approve a whole server, or use
	// [UnlessReadOnly].
	NeedsApproval func(tool *mcp.Tool) bool

	// Timeout bounds how long a call waits for the server's answer; any
	// progress notification of the call starts the wait anew, so a long
	// call that keeps reporting progress does not time out. 0 means
	// DefaultTimeout; a negative value means no limit. A call that times
	// out is cancelled on the server and gets an error result matching
	// [agentloop.ErrToolTimeout].
	Timeout time.Duration

	// MaxTimeout bounds a call however much progress it reports: it is the
	// [agentloop.Tool.Timeout] of the server's tools. 0 leaves the tools'
	// Timeout zero, so that [agentloop.Agent.ToolTimeout] applies (and
	// progress does not extend it).
	MaxTimeout time.Duration

	// MaxResultBytes caps the content the model sees of one result; longer
	// content is cut and ends with a line that says it was truncated and
	// how long it was. 0 means DefaultMaxResultBytes; a negative value
	// means no limit.
	MaxResultBytes int

	// FormatProgress turns a progress notification into the content of a
	// [agentloop.ToolProgress] item; nil means [FormatProgress].
	FormatProgress func(p *mcp.ProgressNotificationParams) string

	// OnToolsChanged, if non-nil, is called when the server says that its
	// tool list changed (notifications/tools/list_changed), after the
	// cached list was marked stale: the next [Server.Tools] lists the tools
	// anew. It is called on the MCP SDK's goroutine and must not block.
	OnToolsChanged func()

	// ClientInfo is how the client introduces itself to the server; nil
	// means {Name: "agentloop", Version: "v0"}.
	ClientInfo *mcp.Implementation

	// Logger receives the MCP SDK's client log and the package's own
	// notes (connections and disconnections); nil discards them.
	Logger *slog.Logger
}

// A Server is one MCP server whose tools a model may call: it turns the
// server's tools into [agentloop.Tool]s and makes their calls over one MCP
// session. Create one with [NewServer]; it connects on first use.
//
// A Server is safe for concurrent use: its tools may run in any number of
// runs at once, over the one session.
//
// If the session ends (the server exits, the connection breaks), the next
// use connects again, once; if that fails, that use fails and the one after
// tries again. A call that was in flight when the session ended gets an
// error result, and is not made again, since the server may have acted on
// it. A call the server refused because it no longer knew the session (an
// HTTP server that restarted) was not run, and is made once more on a new
// session.
type Server struct {
	dial   Dialer
	opts   ServerOptions
	client *mcp.Client

	connecting chan struct{} // held while a connection is made
	listing    chan struct{} // held while the tools are listed

	mu            sync.Mutex
	closed        bool
	sess          *mcp.ClientSession
	cancelConnect context.CancelFunc // cancels the connection in progress
	name          string             // the server's name, for messages
	gen           uint64             // bumped when the tool list may have changed
	tools         []*agentloop.Tool  // the tools as listed at toolsGen
	toolsGen      uint64
	calls         map[string]*progressSink // by progress token
	nextToken     uint64
	watchers      sync.WaitGroup // one per session: see watch
}

// NewServer returns a Server that connects with dial when first used.
// The zero ServerOptions are useful. It fails only on bad options.
func NewServer(dial Dialer, opts ServerOptions) (*Server, error) {
	if dial == nil {
		return nil, errors.New("mcptools: NewServer: nil Dialer")
	}
	s := &Server{
		dial:       dial,
		connecting: make(chan struct{}, 1),
		listing:    make(chan struct{}, 1),
		calls:      make(map[string]*progressSink),
		gen:        1,
		opts:       opts,
	}
	if !validName(s.opts.Prefix) {
		return nil, fmt.Errorf("mcptools: NewServer: prefix %q: tool names may only use letters, digits, '_' and '-'", s.opts.Prefix)
	}
	if len(s.opts.Prefix) > MaxNameLen/2 {
		return nil, fmt.Errorf("mcptools: NewServer: prefix %q is longer than %d characters", s.opts.Prefix, MaxNameLen/2)
	}
	if s.opts.MaxTimeout < 0 {
		return nil, fmt.Errorf("mcptools: NewServer: negative MaxTimeout %v", s.opts.MaxTimeout)
	}
	s.name = s.opts.Name
	impl := s.opts.ClientInfo
	if impl == nil {
		impl = &mcp.Implementation{Name: "agentloop", Version: "v0"}
	}
	s.client = mcp.NewClient(impl, &mcp.ClientOptions{
		Logger: s.opts.Logger,
		// No roots, sampling or elicitation: the client offers nothing but
		// the calls it makes.
		Capabilities:                &mcp.ClientCapabilities{},
		ToolListChangedHandler:      s.toolListChanged,
		ProgressNotificationHandler: s.progress,
	})
	return s, nil
}

// Name returns the server's name: ServerOptions.Name, or else the name the
// server gave itself when it connected ("" before that).
func (s *Server) Name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

// label names the server in messages.
func (s *Server) label() string {
	if name := s.Name(); name != "" {
		return fmt.Sprintf("MCP server %q", name)
	}
	return "the MCP server"
}

func (s *Server) logger() *slog.Logger {
	if s.opts.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.opts.Logger
}

// Session returns the server's MCP session, connecting first if there is
// none, for what this package does not wrap (prompts, resources). Do not
// close it: [Server.Close] does, and a closed session is replaced on the
// next use.
func (s *Server) Session(ctx context.Context) (*mcp.ClientSession, error) {
	cs, _, err := s.session(ctx)
	return cs, err
}

// session returns the current session, connecting if there is none, and
// the tool-list generation that goes with it.
func (s *Server) session(ctx context.Context) (*mcp.ClientSession, uint64, error) {
	if cs, gen, err := s.current(); cs != nil || err != nil {
		return cs, gen, err
	}
	select {
	case s.connecting <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, fmt.Errorf("mcptools: waiting to connect to %s: %w", s.label(), ctx.Err())
	}
	defer func() { <-s.connecting }()
	// Another caller may have connected while this one waited.
	if cs, gen, err := s.current(); cs != nil || err != nil {
		return cs, gen, err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.cancelConnect = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancelConnect = nil
		s.mu.Unlock()
	}()

	t, err := s.dial(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("mcptools: connecting to %s: %w", s.label(), err)
	}
	cs, err := s.client.Connect(ctx, t, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("mcptools: connecting to %s: %w", s.label(), err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cs.Close()
		return nil, 0, ErrClosed
	}
	s.sess = cs
	s.gen++ // a new session may offer other tools
	gen := s.gen
	if s.opts.Name == "" {
		if res := cs.InitializeResult(); res != nil && res.ServerInfo != nil {
			s.name = res.ServerInfo.Name
		}
	}
	s.watchers.Add(1)
	s.mu.Unlock()
	s.logger().Debug("mcptools: connected", "server", s.label())
	go s.watch(cs)
	return cs, gen, nil
}

// current returns the session if there is one, or ErrClosed.
func (s *Server) current() (*mcp.ClientSession, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, 0, ErrClosed
	}
	return s.sess, s.gen, nil
}

// watch forgets cs once it ends, so that the next use connects again.
func (s *Server) watch(cs *mcp.ClientSession) {
	defer s.watchers.Done()
	err := cs.Wait()
	s.forget(cs)
	cs.Close() // the server ended it; this releases what the SDK holds for it
	s.logger().Debug("mcptools: session ended", "server", s.label(), "err", err)
}

// forget drops cs if it is the current session.
func (s *Server) forget(cs *mcp.ClientSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == cs {
		s.sess = nil
		s.gen++
	}
}

// drop forgets cs and closes it, after a failure that leaves it in doubt.
func (s *Server) drop(cs *mcp.ClientSession) {
	s.forget(cs)
	cs.Close()
}

// Close ends the session, if any (for a [Command] server, the process
// exits), and waits until every goroutine the Server started has returned.
// A connection in progress is cancelled. Calls in flight fail; later uses
// return an error matching [ErrClosed]. Close may be called more than once;
// later calls return nil.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cs := s.sess
	s.sess = nil
	if s.cancelConnect != nil {
		s.cancelConnect()
	}
	s.mu.Unlock()

	s.connecting <- struct{}{} // wait out a connection in progress
	<-s.connecting
	var err error
	if cs != nil {
		if err = cs.Close(); err != nil {
			err = fmt.Errorf("mcptools: closing %s: %w", s.label(), err)
		}
	}
	s.watchers.Wait()
	return err
}

// toolListChanged marks the tool list stale, so that the next
// [Server.Tools] lists the tools again.
func (s *Server) toolListChanged(context.Context, *mcp.ToolListChangedRequest) {
	s.mu.Lock()
	s.gen++
	s.mu.Unlock()
	if s.opts.OnToolsChanged != nil {
		s.opts.OnToolsChanged()
	}
}

// Tools returns the server's tools (those Filter keeps), connecting first
// if needed. The list is kept until the server says it changed
// (notifications/tools/list_changed) or the session is replaced; then the
// next call lists the tools again, following every page. Call it before
// each run and pass the tools with [agentloop.RunOptions.Tools] to follow such
// changes; while the list is unchanged it returns the same *agentloop.Tool
// values, in the server's order, in a new slice.
//
// A tool whose name or schema cannot be offered is an error that names it
// (leave it out with Filter).
func (s *Server) Tools(ctx context.Context) ([]*agentloop.Tool, error) {
	select {
	case s.listing <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("mcptools: listing the tools of %s: %w", s.label(), ctx.Err())
	}
	defer func() { <-s.listing }()

	s.mu.Lock()
	closed, fresh := s.closed, s.tools != nil && s.toolsGen == s.gen
	tools := s.tools
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if fresh {
		return slices.Clone(tools), nil
	}

	list, gen, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	tools, err = s.convert(list)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if gen == s.gen {
		s.tools, s.toolsGen = tools, gen
	}
	s.mu.Unlock()
	return slices.Clone(tools), nil
}

// list lists the server's tools. Listing has no side effects, so when the
// session turns out to be gone it connects again, once, and lists again.
func (s *Server) list(ctx context.Context) ([]*mcp.Tool, uint64, error) {
	cs, gen, err := s.session(ctx)
	if err != nil {
		return nil, 0, err
	}
	list, err := s.listOn(ctx, cs)
	if err != nil && ctx.Err() == nil && !answered(err) {
		if cs, gen, err = s.session(ctx); err != nil {
			return nil, 0, err
		}
		list, err = s.listOn(ctx, cs)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("mcptools: listing the tools of %s: %w", s.label(), err)
	}
	return list, gen, nil
}

// listOn lists every page of tools of cs. A failure that leaves the
// session in doubt drops it.
func (s *Server) listOn(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var list []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			if ctx.Err() == nil && !answered(err) {
				s.drop(cs)
			}
			return nil, err
		}
		list = append(list, t)
	}
	return list, nil
}

// answered reports whether err is the server's own error answer (a
// JSON-RPC error), which shows that the session works.
func answered(err error) bool {
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr)
}

// convert turns the listed tools into agentloop tools.
func (s *Server) convert(list []*mcp.Tool) ([]*agentloop.Tool, error) {
	tools := make([]*agentloop.Tool, 0, len(list))
	names := make(map[string]string, len(list)) // offered name → MCP name
	for _, mt := range list {
		if mt == nil || s.opts.Filter != nil && !s.opts.Filter(mt) {
			continue
		}
		name := toolName(s.opts.Prefix, mt.Name)
		if other, dup := names[name]; dup {
			return nil, fmt.Errorf("mcptools: %s: tools %q and %q would both be offered as %q; leave one out with ServerOptions.Filter", s.label(), other, mt.Name, name)
		}
		names[name] = mt.Name
		var schema json.RawMessage
		if mt.InputSchema != nil {
			b, err := json.Marshal(mt.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("mcptools: %s: tool %q: input schema: %w", s.label(), mt.Name, err)
			}
			schema = b
		}
		mcpName := mt.Name
		t, err := agentloop.NewRawTool(name, description(mt), schema, func(ctx context.Context, args json.RawMessage) (string, error) {
			return s.call(ctx, mcpName, args)
		})
		if err != nil {
			return nil, fmt.Errorf("mcptools: %s: tool %q cannot be offered (leave it out with ServerOptions.Filter): %w", s.label(), mt.Name, err)
		}
		t.NeedsApproval = s.opts.NeedsApproval != nil && s.opts.NeedsApproval(mt)
		t.Timeout = s.opts.MaxTimeout
		tools = append(tools, t)
	}
	return tools, nil
}

// description is what the model is told about a tool: its description, or
// else its title.
func description(t *mcp.Tool) string {
	switch {
	case t.Description != "":
		return t.Description
	case t.Title != "":
		return t.Title
	case t.Annotations != nil:
		return t.Annotations.Title
	}
	return ""
}

// UnlessReadOnly is a [ServerOptions.NeedsApproval] that asks for approval
// of every tool except those the server marks read-only (the readOnlyHint
// annotation). Annotations are the server's claims: use it only with
// servers you trust.
func UnlessReadOnly(t *mcp.Tool) bool {
	return t.Annotations == nil || !t.Annotations.ReadOnlyHint
}

// Tools returns the tools of all the servers, in order, listing them
// concurrently (see [Server.Tools]). Two tools with the same name are an
// error that names both servers: give them different
// [ServerOptions.Prefix]es.
func Tools(ctx context.Context, servers ...*Server) ([]*agentloop.Tool, error) {
	lists := make([][]*agentloop.Tool, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		if s == nil {
			errs[i] = fmt.Errorf("mcptools: Tools: server %d is nil", i)
			continue
		}
		wg.Go(func() { lists[i], errs[i] = s.Tools(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var all []*agentloop.Tool
	owner := make(map[string]*Server)
	for i, list := range lists {
		for _, t := range list {
			if o, dup := owner[t.Name]; dup {
				return nil, fmt.Errorf("mcptools: tool %q is offered by both %s and %s; give them different ServerOptions.Prefix", t.Name, o.label(), servers[i].label())
			}
			owner[t.Name] = servers[i]
			all = append(all, t)
		}
	}
	return all, nil
}
