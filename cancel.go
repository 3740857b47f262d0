package agentloop

import (
	"context"
	"errors"
)

// CancelFunc cancels a run with a reason. The first reason given wins; later
// calls do nothing. It is safe to call from any goroutine, any number of times.
type CancelFunc func(reason string)

// WithCancel returns a copy of parent that a CancelFunc cancels with a
// reason, for a "stop" button: pass the context to [Agent.Stream] and call
// the CancelFunc from another goroutine. The run then fails with a
// [*CancelledError] whose Reason is the given reason.
func WithCancel(parent context.Context) (context.Context, CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	return ctx, func(reason string) { cancel(Cancel(reason)) }
}

// Cancel returns an error that cancels a run with the given reason when a
// hook returns it, or when it is the cause given to a
// [context.CancelCauseFunc] of the run's context.
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
