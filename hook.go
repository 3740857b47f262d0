package agentloop

import "context"

// Hooks is a set of optional functions the loop calls at each step of a run,
// in the manner of net/http/httptrace.ClientTrace: fill in the ones you need;
// a nil field, or a nil *Hooks, is skipped.
//
// Every hook may cancel the run by returning a non-nil error: the run stops
// before its next side effect and fails with a [*CancelledError] whose Cause
// is that error and whose Reason is its text (use [Cancel] for a plain
// reason). The ctx a hook gets is the run's context.
//
// BeforeToolCall and AfterToolCall are called from the goroutines that run
// tools, so they may be called concurrently with each other; all other hooks
// are called from the goroutine that ranges over the run, one at a time.
// Several Hooks compose with [ComposeHooks].
type Hooks struct {
	// BeforeModelCall is called before each model call. It may change req:
	// narrow req.Tools (the model is offered, and may only run, those tools),
	// edit messages or settings. Changes to req.Messages affect this call only.
	BeforeModelCall func(ctx context.Context, req *Request) error

	// OnTextDelta is called for each piece of answer text, before it is yielded.
	OnTextDelta func(ctx context.Context, text string) error

	// OnReasoningDelta is called for each piece of reasoning, before it is yielded.
	OnReasoningDelta func(ctx context.Context, text string) error

	// OnToolCallDelta is called for each piece of tool-call arguments.
	OnToolCallDelta func(ctx context.Context, delta ToolCallDelta) error

	// BeforeToolCall is called before a server tool runs, including calls
	// that will be answered with an error result (unknown tool, invalid
	// arguments). It may rewrite call.Args (they are then validated), or skip
	// the tool by returning a non-nil result, which is used as the call's
	// result (its CallID and Name are filled in).
	BeforeToolCall func(ctx context.Context, call *ToolCall) (*ToolResult, error)

	// AfterToolCall is called with the result of every server-side call the
	// loop handled: the tool's output or error, an error result for an
	// unknown tool or invalid arguments, or a BeforeToolCall substitute. It
	// is not called for calls that were denied approval or cancelled (no
	// tool ran). It runs before the result is recorded and may change *result.
	AfterToolCall func(ctx context.Context, call ToolCall, result *ToolResult) error

	// OnTurnEnd is called when a model call has ended, before its TurnEnd
	// item is yielded.
	OnTurnEnd func(ctx context.Context, end TurnEnd) error
}

// ComposeHooks returns Hooks that call each of hooks in order, skipping nil
// ones; a field no hook sets stays nil. The first error stops the chain and
// is returned. For BeforeToolCall, the first hook that returns a substitute
// result ends the chain; later hooks see arguments rewritten by earlier ones.
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
		OnTurnEnd:        chain(hs, func(h *Hooks) func(context.Context, TurnEnd) error { return h.OnTurnEnd }),
	}
	var before []func(context.Context, *ToolCall) (*ToolResult, error)
	var after []func(context.Context, ToolCall, *ToolResult) error
	for _, h := range hs {
		if h.BeforeToolCall != nil {
			before = append(before, h.BeforeToolCall)
		}
		if h.AfterToolCall != nil {
			after = append(after, h.AfterToolCall)
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
	if after != nil {
		c.AfterToolCall = func(ctx context.Context, call ToolCall, result *ToolResult) error {
			for _, f := range after {
				if err := f(ctx, call, result); err != nil {
					return err
				}
			}
			return nil
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
