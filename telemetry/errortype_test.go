package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
)

type customError struct{}

func (customError) Error() string { return "custom" }

func TestErrorTypeNamesEachKindOfFailure(t *testing.T) {
	for want, err := range map[string]error{
		"stopped":               agentloop.ErrStopped,
		"cancelled":             &agentloop.CancelledError{Reason: "stop", Cause: errors.New("stop")},
		"panic":                 &agentloop.ToolPanicError{Tool: "t", Value: "boom"},
		"timeout":               fmt.Errorf("call: %w", agentloop.ErrToolTimeout),
		"unknown_tool":          fmt.Errorf("x: %w", agentloop.ErrUnknownTool),
		"invalid_arguments":     fmt.Errorf("x: %w", agentloop.ErrInvalidArgs),
		"denied":                agentloop.ErrDenied,
		"not_run":               agentloop.ErrNotRun,
		"turn_limit":            &agentloop.TurnLimitError{Limit: 3},
		"budget":                &agentloop.BudgetError{Budget: agentloop.Budget{Tokens: 10}},
		"truncated":             &agentloop.TurnError{Turn: 1, Err: agentloop.ErrTruncated},
		"503":                   &agentloop.TurnError{Turn: 1, Err: &providers.APIError{StatusCode: 503}},
		"overloaded_error":      &providers.APIError{Type: "overloaded_error"},
		"unreachable":           fmt.Errorf("dial: %w", providers.ErrUnreachable),
		"unexpected_eof":        &agentloop.TurnError{Turn: 2, Err: fmt.Errorf("stream: %w", io.ErrUnexpectedEOF)},
		"_OTHER":                fmt.Errorf("wrapped: %w", errors.New("plain")),
		"telemetry.customError": &agentloop.TurnError{Turn: 1, Err: fmt.Errorf("x: %w", customError{})},
	} {
		if got := errorType(err); got != want {
			t.Errorf("errorType(%v) = %q, want %q", err, got, want)
		}
	}
	if got := errorType(context.DeadlineExceeded); got != "timeout" {
		t.Errorf("a deadline is %q, want timeout", got)
	}
}
