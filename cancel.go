package agentloop

import (
	"context"
	"errors"
	"fmt"
)

// ErrCancelled matches (with [errors.Is]) the error of every run that was
// cancelled: by a hook, by a [CancelFunc], or by its context.
var ErrCancelled = errors.New("agentloop: run cancelled")

// ErrTurnLimit matches the error of a run that reached [Agent.MaxTurns].
var ErrTurnLimit = errors.New("agentloop: turn limit reached")

// ErrTruncated matches the error of a run whose model output was cut off by
// its length limit while it was writing tool calls. Those calls are not run.
var ErrTruncated = errors.New("agentloop: model output cut off by its length limit during a tool call")

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

// CancelledError is the error of a cancelled run. Its History is consistent:
// every tool call in it has a result (calls that never ran, or were cut short,
// have a "cancelled" error result), so it can be stored and resumed.
type CancelledError struct {
	// Reason is the first reason given (a hook's error text, the argument of
	// a CancelFunc, or the context's error text).
	Reason string
	// Cause is the error that cancelled the run, such as the one a hook
	// returned or context.Canceled; errors.Is and errors.As see it.
	Cause error
	// History is the transcript up to the cancel, with a result for every
	// tool call; pass it to [Agent.Stream] to resume.
	History History
}

// Error returns "agentloop: run cancelled: " followed by the reason.
func (e *CancelledError) Error() string { return "agentloop: run cancelled: " + e.Reason }

// Unwrap returns the cause.
func (e *CancelledError) Unwrap() error { return e.Cause }

// Is reports whether target is [ErrCancelled].
func (e *CancelledError) Is(target error) bool { return target == ErrCancelled }

// TurnLimitError is the error of a run that still wanted tools after
// [Agent.MaxTurns] model calls. History holds everything up to there, with a
// result for every call.
type TurnLimitError struct {
	// Limit is the number of model calls the run was allowed.
	Limit int
	// History is the transcript up to the limit, with a result for every
	// tool call.
	History History
}

// Error says that the limit was reached and what it was.
func (e *TurnLimitError) Error() string {
	return fmt.Sprintf("agentloop: turn limit reached: the model still called tools after %d model calls", e.Limit)
}

// Is reports whether target is [ErrTurnLimit].
func (e *TurnLimitError) Is(target error) bool { return target == ErrTurnLimit }

// TurnError is the error of a run whose model call failed: a provider error,
// a stream cut off, or [ErrTruncated]. History holds the transcript before
// that turn, plus what the model produced before it failed, with a result for
// every call.
type TurnError struct {
	// Turn is the 1-based number of the model call that failed.
	Turn int
	// Err is the model's error (or [ErrTruncated]); never nil.
	Err error
	// History is the transcript up to the failure, with a result for every
	// tool call.
	History History
}

// Error returns "agentloop: turn N: " followed by the model's error.
func (e *TurnError) Error() string { return fmt.Sprintf("agentloop: turn %d: %v", e.Turn, e.Err) }

// Unwrap returns the model's error.
func (e *TurnError) Unwrap() error { return e.Err }

// HistoryOf returns the history carried by a run's error (a
// [*CancelledError], [*TurnLimitError] or [*TurnError], possibly wrapped),
// and whether there was one.
func HistoryOf(err error) (History, bool) {
	var ce *CancelledError
	if errors.As(err, &ce) {
		return ce.History, true
	}
	var tl *TurnLimitError
	if errors.As(err, &tl) {
		return tl.History, true
	}
	var te *TurnError
	if errors.As(err, &te) {
		return te.History, true
	}
	return nil, false
}
