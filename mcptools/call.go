package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolError is the error of a call that the server answered with a result
// marked isError: the tool ran and failed. Its text is the result's content,
// which the model sees as the error result, so that it can correct itself.
type ToolError struct {
	// Server is the server's name ([Server.Name]).
	Server string
	// Tool is the server's name for the tool (without the prefix).
	Tool string
	// Content is the result's content, as the model sees it.
	Content string
}

// Error returns the content of the result.
func (e *ToolError) Error() string { return e.Content }

// errIdle is the cause of a call cancelled by [ServerOptions.Timeout].
var errIdle = errors.New("mcptools: call timed out")

// call runs one tool call for the loop: the func of every tool of s.
func (s *Server) call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	cs, _, err := s.session(ctx)
	if err != nil {
		return "", err
	}
	res, err := s.callOn(ctx, cs, name, args)
	if errors.Is(err, mcp.ErrSessionMissing) && ctx.Err() == nil {
		// The server no longer knows the session (an HTTP server that
		// restarted): it did not run the call, so make it once more on a
		// new session.
		s.drop(cs)
		if cs, _, err = s.session(ctx); err != nil {
			return "", err
		}
		res, err = s.callOn(ctx, cs, name, args)
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		// Cancelled, or the loop's timeout: the loop reports it (the MCP SDK
		// has told the server with notifications/cancelled).
		return "", fmt.Errorf("mcptools: %s: tool %q: %w", s.label(), name, ctx.Err())
	case errors.Is(err, errIdle):
		return "", err
	case answered(err):
		// A protocol error from the server (unknown tool, bad arguments).
		return "", fmt.Errorf("%s refused the call of %q: %w", s.label(), name, err)
	default:
		// The connection failed: the server may have acted on the call, so
		// it is not made again, but the next call connects anew.
		s.drop(cs)
		return "", fmt.Errorf("the connection to %s was lost during the call of %q (the next call reconnects): %w", s.label(), name, err)
	}
	content := truncate(resultText(res), s.maxResultBytes())
	if res.IsError {
		return "", &ToolError{Server: s.Name(), Tool: name, Content: content}
	}
	return content, nil
}

func (s *Server) maxResultBytes() int {
	if s.opts.MaxResultBytes == 0 {
		return DefaultMaxResultBytes
	}
	return s.opts.MaxResultBytes
}

func (s *Server) timeout() time.Duration {
	if s.opts.Timeout == 0 {
		return DefaultTimeout
	}
	return s.opts.Timeout
}

type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

// callOn makes one tools/call on cs, passing its progress on to the loop
// and restarting its timeout on each progress notification. It returns
// once the call has ended; a cancelled ctx ends it at once.
func (s *Server) callOn(ctx context.Context, cs *mcp.ClientSession, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sink := &progressSink{ready: make(chan struct{}, 1), timeout: s.timeout()}
	if sink.timeout > 0 {
		sink.timer = time.AfterFunc(sink.timeout, func() { cancel(errIdle) })
		defer sink.timer.Stop()
	}
	token := s.register(sink)
	defer s.unregister(token)

	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(token)
	done := make(chan callOutcome, 1)
	go func() {
		res, err := cs.CallTool(callCtx, params)
		done <- callOutcome{res, err}
	}()
	for {
		select {
		case o := <-done:
			sink.forward(ctx) // progress that came before the result
			if o.err != nil && ctx.Err() == nil && errors.Is(context.Cause(callCtx), errIdle) {
				o.err = &timeoutError{server: s.label(), tool: name, after: sink.timeout}
			}
			if o.err == nil && o.res == nil {
				o.err = errors.New("empty result")
			}
			return o.res, o.err
		case <-sink.ready:
			sink.forward(ctx)
		}
	}
}

// timeoutError is the error of a call that heard nothing from the server
// for [ServerOptions.Timeout]. It matches [agentloop.ErrToolTimeout].
type timeoutError struct {
	server, tool string
	after        time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("%s sent neither the result of %q nor progress for %v; the call was cancelled", e.server, e.tool, e.after)
}

func (e *timeoutError) Is(target error) bool {
	return target == agentloop.ErrToolTimeout || target == errIdle
}

// register files sink under a new progress token.
func (s *Server) register(sink *progressSink) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextToken++
	token := "agentloop-" + strconv.FormatUint(s.nextToken, 10)
	sink.format = s.opts.FormatProgress
	if sink.format == nil {
		sink.format = FormatProgress
	}
	s.calls[token] = sink
	return token
}

func (s *Server) unregister(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.calls, token)
}

// progress receives the server's progress notifications and hands each to
// the call it belongs to. It must not block: the SDK delivers notifications
// one at a time.
func (s *Server) progress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	token, _ := p.ProgressToken.(string)
	s.mu.Lock()
	sink := s.calls[token]
	s.mu.Unlock()
	if sink != nil {
		sink.push(p)
	}
}

// progressSink queues one call's progress until the call's goroutine
// reports it to the loop (agentloop.ReportProgress blocks until the run
// takes each report).
type progressSink struct {
	ready   chan struct{} // signalled when the queue gets an entry
	timer   *time.Timer   // the call's timeout, restarted by progress; nil if none
	timeout time.Duration
	format  func(*mcp.ProgressNotificationParams) string

	mu    sync.Mutex
	queue []string
}

func (p *progressSink) push(n *mcp.ProgressNotificationParams) {
	if p.timer != nil {
		p.timer.Reset(p.timeout)
	}
	content := p.format(n)
	p.mu.Lock()
	p.queue = append(p.queue, content)
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

// forward reports the queued progress to the loop, in order.
func (p *progressSink) forward(ctx context.Context) {
	p.mu.Lock()
	queue := p.queue
	p.queue = nil
	p.mu.Unlock()
	for _, content := range queue {
		if agentloop.ReportProgress(ctx, content) != nil {
			return // the call is over for the loop; the rest would be dropped too
		}
	}
}
