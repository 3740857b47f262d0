package agentloop

import (
	"context"
	"errors"
	"fmt"
)

// The sentinels below are matched with [errors.Is]. Run errors carry the
// history so far ([HistoryOf]); the errors of tool results ([ToolResult.Err])
// tell hooks why a call failed.
var (
	// ErrCancelled matches the error of every run that was cancelled: by a
	// hook, or by its context (with or without a [Cancel] cause). It also
	// matches the Err of a tool result that a cancel cut short or kept from
	// running.
	ErrCancelled = errors.New("agentloop: run cancelled")

	// ErrTurnLimit matches the error of a run that reached [Agent.MaxTurns].
	ErrTurnLimit = errors.New("agentloop: turn limit reached")

	// ErrTruncated matches the error of a run whose model output was cut
	// off by its length limit while it was writing tool calls. Those calls
	// are not run.
	ErrTruncated = errors.New("agentloop: model output cut off by its length limit during a tool call")

	// ErrInvalidHistory is wrapped by every error that reports a malformed
	// history (a result for a call that was never made, an unknown
	// version…).
	ErrInvalidHistory = errors.New("agentloop: invalid history")

	// ErrStopped is the Err of [RunEnd] when the consumer stopped ranging
	// over the run before it ended.
	ErrStopped = errors.New("agentloop: consumer stopped ranging over the run")

	// ErrUnknownTool matches the Err of a result for a call to a tool that
	// does not exist or was not offered on that turn.
	ErrUnknownTool = errors.New("agentloop: unknown tool")

	// ErrInvalidArgs matches the Err of a result for a call whose arguments
	// are not a JSON object or do not match the tool's schema.
	ErrInvalidArgs = errors.New("agentloop: invalid tool arguments")

	// ErrToolTimeout matches the Err of a result for a call that ran out of
	// its time ([Tool.Timeout], [Agent.ToolTimeout]). It also matches
	// [context.DeadlineExceeded].
	ErrToolTimeout = &timeoutError{}

	// ErrDenied matches the Err of a result for a call that was denied
	// approval; the result's content is [DeniedContent].
	ErrDenied = errors.New("agentloop: tool call denied")

	// ErrNotRun matches the Err of a result the loop wrote for a call it did
	// not run because the run could not go on: the model call failed, its
	// output was cut off, or the turn limit was reached.
	ErrNotRun = errors.New("agentloop: tool call not run")
)

// DeniedContent returns the content of the error result that stands for a
// tool call denied approval, as the model reads it: "The user denied this
// tool call.", followed by " Reason: " and the reason when it is not empty.
// The loop writes it for a denied [Approval]; a front end that records a
// denial itself (package aisdk) uses it so that the model reads the same
// words.
func DeniedContent(reason string) string {
	if reason == "" {
		return "The user denied this tool call."
	}
	return "The user denied this tool call. Reason: " + reason
}

type timeoutError struct{}

func (*timeoutError) Error() string { return "agentloop: tool call timed out" }

// Is makes the timeout match context.DeadlineExceeded too.
func (*timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// CancelledError is the error of a cancelled run. Its History is consistent:
// every tool call in it has a result (calls that never ran, or were cut short,
// have a "cancelled" error result), so it can be stored and resumed.
type CancelledError struct {
	// Reason is the first reason given (a hook's error text, the argument of
	// the [Cancel] cause of the context, or the context's error text).
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
	return fmt.Sprintf("agentloop: turn limit reached: the model still called tools after %d model %s", e.Limit, plural(e.Limit, "call", "calls"))
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
	// Err is the model's error (or [ErrTruncated]), or the error of what an
	// [Agent.HandoffFilter] returned (wrapping [ErrInvalidHistory]); never
	// nil.
	Err error
	// History is the transcript up to the failure, with a result for every
	// tool call.
	History History
}

// Error returns "agentloop: turn N: " followed by the model's error.
func (e *TurnError) Error() string { return fmt.Sprintf("agentloop: turn %d: %v", e.Turn, e.Err) }

// Unwrap returns the model's error.
func (e *TurnError) Unwrap() error { return e.Err }

// ToolPanicError is the Err of a result for a call whose tool panicked. The
// model sees only "the tool crashed (panic: …)"; the value and the stack are
// kept here and logged ([Agent.Logger]).
type ToolPanicError struct {
	// Tool is the name of the tool that panicked.
	Tool string
	// Value is what the tool passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, as [runtime/debug.Stack]
	// formats it.
	Stack []byte
}

// Error returns "agentloop: tool NAME panicked: VALUE".
func (e *ToolPanicError) Error() string {
	return fmt.Sprintf("agentloop: tool %q panicked: %v", e.Tool, e.Value)
}

// Unwrap returns Value when it is an error, so errors.Is sees through a
// panic with an error value.
func (e *ToolPanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// HookPanicError is the cause of a run cancelled because a hook that runs on
// a tool's goroutine (BeforeToolCall or AfterToolCall) panicked. A panic in
// any other hook happens on the goroutine that ranges over the run and
// reaches the caller like a panic in its own loop body.
type HookPanicError struct {
	// Hook names the hook: "BeforeToolCall" or "AfterToolCall".
	Hook string
	// Value is what the hook passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

// Error returns "agentloop: HOOK hook panicked: VALUE".
func (e *HookPanicError) Error() string {
	return fmt.Sprintf("agentloop: %s hook panicked: %v", e.Hook, e.Value)
}

// Unwrap returns Value when it is an error.
func (e *HookPanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// HistoryOf returns the history carried by a run's error (a
// [*CancelledError], [*TurnLimitError], [*BudgetError] or [*TurnError],
// possibly wrapped),
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
	var be *BudgetError
	if errors.As(err, &be) {
		return be.History, true
	}
	var te *TurnError
	if errors.As(err, &te) {
		return te.History, true
	}
	return nil, false
}

// plural returns one when n is 1 and many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
