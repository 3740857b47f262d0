package agentloop

import (
	"context"
	"errors"
)

// Hooks is a set of optional functions the loop calls at each step of a run,
// in the manner of net/http/httptrace.ClientTrace: fill in the ones you need;
// a nil field, or a nil *Hooks, is skipped.
//
// Every hook that returns an error may cancel the run with it: the run stops
// before its next side effect and fails with a [*CancelledError] whose Cause
// is that error and whose Reason is its text (use [Cancel] for a plain
// reason). The ctx a hook gets is the run's context (the one OnRunStart
// returned). After a cancel the loop starts no model call and no tool call
// and calls no hook except the end notifications: AfterToolCall for calls
// whose BeforeToolCall was called, OnTurnEnd for the turn in flight, and
// OnRunEnd.
//
// Hooks come in pairs that a tracer can rely on: OnRunEnd is called once for
// every OnRunStart, OnTurnEnd once for every BeforeModelCall, and
// AfterToolCall once for every BeforeToolCall, however the step ended.
//
// BeforeToolCall and AfterToolCall are called from the goroutines that run
// tools, so they may be called concurrently with each other; a panic in them
// is recovered and cancels the run with a [*HookPanicError]. All other hooks
// are called from the goroutine that ranges over the run, one at a time.
// Several Hooks compose with [ComposeHooks].
type Hooks struct {
	// OnRunStart is called once when a run starts, after its history and
	// options were checked and before anything else. It returns the
	// context the run uses from then on, which must be ctx or derived from
	// it: the model, the tools and every other hook get it or a context
	// derived from it (a tracer puts the run's span there). A nil context
	// keeps ctx.
	OnRunStart func(ctx context.Context, start RunStart) (context.Context, error)

	// BeforeModelCall is called before each model call. It may change req:
	// narrow req.Tools (the model is offered, and may only run, those tools),
	// edit messages or settings. req.Messages is then a deep copy of the
	// history, so changes to it affect this call only; without this hook no
	// copy is made.
	BeforeModelCall func(ctx context.Context, req *Request) error

	// OnTextDelta is called for each piece of answer text, before it is yielded.
	OnTextDelta func(ctx context.Context, text string) error

	// OnReasoningDelta is called for each piece of reasoning, before it is yielded.
	OnReasoningDelta func(ctx context.Context, text string) error

	// OnToolCallDelta is called for each piece of tool-call arguments, with
	// the loop's id for the call.
	OnToolCallDelta func(ctx context.Context, delta ToolCallDelta) error

	// BeforeToolCall is called before a server tool runs, including calls
	// that will be answered with an error result (unknown tool, invalid
	// arguments). It may rewrite call.Args (they are then validated), or skip
	// the tool by returning a non-nil result, which is used as the call's
	// result (its CallID and Name are filled in). It is not called for
	// calls that were denied approval, that the caller must answer (client
	// tools, approvals awaited), or that a cancel kept from starting.
	BeforeToolCall func(ctx context.Context, call *ToolCall) (*ToolResult, error)

	// ToolContext is called on the tool's goroutine just before a tool's
	// func runs (after BeforeToolCall, and only when the func runs). It
	// returns the context the func gets, which must be ctx or derived from
	// it; a nil context keeps ctx. A tracer puts the call's span there, so
	// that what the tool does (a query, an HTTP request) nests under it.
	// It may run concurrently with itself for other calls; a panic in it is
	// recovered like one in BeforeToolCall.
	ToolContext func(ctx context.Context, call ToolCall) context.Context

	// AfterToolCall is called once for every call BeforeToolCall is called
	// for (and, when BeforeToolCall is nil, for the same calls), with its
	// result: the tool's output or error, an error result for an unknown
	// tool or invalid arguments, a BeforeToolCall substitute, or a
	// "cancelled" result when a cancel cut the call short (result.Err then
	// matches [ErrCancelled]). result.Err keeps the Go error behind an error
	// result. It runs before the result is recorded and may change *result.
	AfterToolCall func(ctx context.Context, call ToolCall, result *ToolResult) error

	// OnTurnEnd is called once for every model call (every
	// BeforeModelCall), before its TurnEnd item is yielded. When the call
	// failed or the run was cancelled, end.Err is set and the error OnTurnEnd
	// returns is ignored (the run already ends with end.Err).
	OnTurnEnd func(ctx context.Context, end TurnEnd) error

	// OnRunEnd is called once when a run whose OnRunStart was called ends,
	// however it ends: with its last item (a Final or a Pending), with its
	// error, or because the consumer stopped ranging (end.Err is then
	// [ErrStopped]). It is called before the last item or the error is
	// yielded, and cannot change the outcome.
	OnRunEnd func(ctx context.Context, end RunEnd)
}

// RunStart describes a run to [Hooks.OnRunStart].
type RunStart struct {
	// Agent is the agent that runs; read it, do not change it.
	Agent *Agent
	// ConversationID is the id given with [RunOptions.ConversationID]; "" if none.
	ConversationID string
	// History is the history the run starts from (after answering calls that
	// a later message left dangling). It shares memory with the run.
	History History
	// Resumed is true when the run continues a paused one: the history ends
	// with tool calls that the caller answered or decided, or still awaits.
	Resumed bool
}

// RunEnd describes how a run ended to [Hooks.OnRunEnd].
type RunEnd struct {
	// Last is the run's last item, a [Final] or a [Pending]; nil when Err
	// is set.
	Last Item
	// Err is the run's error ([*CancelledError], [*TurnLimitError], [*BudgetError],
	// [*TurnError]), or [ErrStopped] when the consumer stopped ranging;
	// nil when the run ended with Last.
	Err error
	// Usage is summed over the run's model calls.
	Usage Usage
	// Turns is the number of model calls the run made.
	Turns int
}

// ComposeHooks returns Hooks that call each of hooks in order, skipping nil
// ones; a field no hook sets stays nil. The first error stops the chain and
// is returned, except for the end notifications (AfterToolCall of a
// cancelled call, OnTurnEnd of a failed turn, OnRunEnd), which every hook
// gets. OnRunStart and ToolContext pass each hook the context the one before
// returned.
// For BeforeToolCall, the first hook that returns a substitute result ends
// the chain; later hooks see arguments rewritten by earlier ones.
func ComposeHooks(hooks ...*Hooks) *Hooks {
	var hs []*Hooks
	for _, h := range hooks {
		if h != nil {
			hs = append(hs, h)
		}
	}
	switch len(hs) {
	case 0:
		return nil
	case 1:
		return hs[0]
	}
	c := &Hooks{
		BeforeModelCall:  chain(hs, func(h *Hooks) func(context.Context, *Request) error { return h.BeforeModelCall }),
		OnTextDelta:      chain(hs, func(h *Hooks) func(context.Context, string) error { return h.OnTextDelta }),
		OnReasoningDelta: chain(hs, func(h *Hooks) func(context.Context, string) error { return h.OnReasoningDelta }),
		OnToolCallDelta:  chain(hs, func(h *Hooks) func(context.Context, ToolCallDelta) error { return h.OnToolCallDelta }),
	}
	var (
		start   []func(context.Context, RunStart) (context.Context, error)
		before  []func(context.Context, *ToolCall) (*ToolResult, error)
		toolCtx []func(context.Context, ToolCall) context.Context
		after   []func(context.Context, ToolCall, *ToolResult) error
		turn    []func(context.Context, TurnEnd) error
		end     []func(context.Context, RunEnd)
	)
	for _, h := range hs {
		if h.OnRunStart != nil {
			start = append(start, h.OnRunStart)
		}
		if h.BeforeToolCall != nil {
			before = append(before, h.BeforeToolCall)
		}
		if h.ToolContext != nil {
			toolCtx = append(toolCtx, h.ToolContext)
		}
		if h.AfterToolCall != nil {
			after = append(after, h.AfterToolCall)
		}
		if h.OnTurnEnd != nil {
			turn = append(turn, h.OnTurnEnd)
		}
		if h.OnRunEnd != nil {
			end = append(end, h.OnRunEnd)
		}
	}
	if start != nil {
		c.OnRunStart = func(ctx context.Context, s RunStart) (context.Context, error) {
			for _, f := range start {
				next, err := f(ctx, s)
				if next != nil {
					ctx = next
				}
				if err != nil {
					return ctx, err
				}
			}
			return ctx, nil
		}
	}
	if before != nil {
		c.BeforeToolCall = func(ctx context.Context, call *ToolCall) (*ToolResult, error) {
			for _, f := range before {
				if res, err := f(ctx, call); err != nil || res != nil {
					return res, err
				}
			}
			return nil, nil
		}
	}
	if toolCtx != nil {
		c.ToolContext = func(ctx context.Context, call ToolCall) context.Context {
			for _, f := range toolCtx {
				if next := f(ctx, call); next != nil {
					ctx = next
				}
			}
			return ctx
		}
	}
	if after != nil {
		c.AfterToolCall = func(ctx context.Context, call ToolCall, result *ToolResult) error {
			var first error
			for _, f := range after {
				if err := f(ctx, call, result); err != nil && first == nil {
					first = err
					if result.Err == nil || !errors.Is(result.Err, ErrCancelled) {
						return err
					}
				}
			}
			return first
		}
	}
	if turn != nil {
		c.OnTurnEnd = func(ctx context.Context, e TurnEnd) error {
			var first error
			for _, f := range turn {
				if err := f(ctx, e); err != nil && first == nil {
					first = err
					if e.Err == nil {
						return err
					}
				}
			}
			return first
		}
	}
	if end != nil {
		c.OnRunEnd = func(ctx context.Context, e RunEnd) {
			for _, f := range end {
				f(ctx, e)
			}
		}
	}
	return c
}

// chain returns a func that calls, in order, the non-nil funcs that get picks
// from hs, stopping at the first error; nil if there are none.
func chain[A any](hs []*Hooks, get func(*Hooks) func(context.Context, A) error) func(context.Context, A) error {
	var fns []func(context.Context, A) error
	for _, h := range hs {
		if f := get(h); f != nil {
			fns = append(fns, f)
		}
	}
	if fns == nil {
		return nil
	}
	return func(ctx context.Context, a A) error {
		for _, f := range fns {
			if err := f(ctx, a); err != nil {
				return err
			}
		}
		return nil
	}
}
