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

	// AfterToolCall is called with every result the loop produces for a tool
	// call (success, error, denial, cancellation, or a BeforeToolCall
	// substitute), before it is recorded. It may change *result.
	AfterToolCall func(ctx context.Context, call ToolCall, result *ToolResult) error

	// OnTurnEnd is called when a model call has ended, before its TurnEnd
	// item is yielded.
	OnTurnEnd func(ctx context.Context, end TurnEnd) error
}

// ComposeHooks returns Hooks that call each of hooks in order, skipping nil
// ones. The first error stops the chain and is returned. For
// BeforeToolCall, the first hook that returns a substitute result ends the
// chain; later hooks see arguments rewritten by earlier ones.
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
	return &Hooks{
		BeforeModelCall: func(ctx context.Context, req *Request) error {
			for _, h := range hs {
				if h.BeforeModelCall != nil {
					if err := h.BeforeModelCall(ctx, req); err != nil {
						return err
					}
				}
			}
			return nil
		},
		OnTextDelta: func(ctx context.Context, text string) error {
			for _, h := range hs {
				if h.OnTextDelta != nil {
					if err := h.OnTextDelta(ctx, text); err != nil {
						return err
					}
				}
			}
			return nil
		},
		OnReasoningDelta: func(ctx context.Context, text string) error {
			for _, h := range hs {
				if h.OnReasoningDelta != nil {
					if err := h.OnReasoningDelta(ctx, text); err != nil {
						return err
					}
				}
			}
			return nil
		},
		OnToolCallDelta: func(ctx context.Context, d ToolCallDelta) error {
			for _, h := range hs {
				if h.OnToolCallDelta != nil {
					if err := h.OnToolCallDelta(ctx, d); err != nil {
						return err
					}
				}
			}
			return nil
		},
		BeforeToolCall: func(ctx context.Context, call *ToolCall) (*ToolResult, error) {
			for _, h := range hs {
				if h.BeforeToolCall != nil {
					if res, err := h.BeforeToolCall(ctx, call); err != nil || res != nil {
						return res, err
					}
				}
			}
			return nil, nil
		},
		AfterToolCall: func(ctx context.Context, call ToolCall, result *ToolResult) error {
			for _, h := range hs {
				if h.AfterToolCall != nil {
					if err := h.AfterToolCall(ctx, call, result); err != nil {
						return err
					}
				}
			}
			return nil
		},
		OnTurnEnd: func(ctx context.Context, end TurnEnd) error {
			for _, h := range hs {
				if h.OnTurnEnd != nil {
					if err := h.OnTurnEnd(ctx, end); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
}
