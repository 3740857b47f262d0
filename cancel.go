package agentloop

import "errors"

// Cancel returns an error that cancels a run with the given reason. It is the
// one way to stop a run with a cause: return it from a hook, or give it as the
// cause to the [context.CancelCauseFunc] of the run's context, for a "stop"
// button in another goroutine:
//
//	ctx, cancel := context.WithCancelCause(ctx)
//	// … from the stop button:
//	cancel(agentloop.Cancel("user pressed stop"))
//
// The run then fails with a [*CancelledError] whose Reason is the given
// reason. The first cause given wins, as with any [context.CancelCauseFunc].
func Cancel(reason string) error { return &cancelReason{reason: reason} }

type cancelReason struct{ reason string }

func (c *cancelReason) Error() string { return "cancelled: " + c.reason }

// reasonOf turns a cancellation cause into a reason.
func reasonOf(cause error) string {
	var cr *cancelReason
	if errors.As(cause, &cr) {
		return cr.reason
	}
	if cause == nil {
		return "cancelled"
	}
	return cause.Error()
}
