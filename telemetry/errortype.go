package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
)

// errorType returns the error.type of a failed operation: a short,
// low-cardinality name. The values are listed in the package doc; keep the
// two in step.
func errorType(err error) string {
	var (
		panicErr *agentloop.ToolPanicError
		apiErr   *providers.APIError
	)
	switch {
	case err == nil:
		return errorOther
	case errors.Is(err, agentloop.ErrStopped):
		return "stopped"
	case errors.Is(err, agentloop.ErrCancelled):
		return "cancelled"
	case errors.As(err, &panicErr):
		return "panic"
	case errors.Is(err, agentloop.ErrToolTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, agentloop.ErrUnknownTool):
		return "unknown_tool"
	case errors.Is(err, agentloop.ErrInvalidArgs):
		return "invalid_arguments"
	case errors.Is(err, agentloop.ErrDenied):
		return "denied"
	case errors.Is(err, agentloop.ErrNotRun):
		return "not_run"
	case errors.Is(err, agentloop.ErrTurnLimit):
		return "turn_limit"
	case errors.Is(err, agentloop.ErrBudget):
		return "budget"
	case errors.Is(err, agentloop.ErrTruncated):
		return "truncated"
	case errors.As(err, &apiErr):
		switch {
		case apiErr.StatusCode != 0:
			return strconv.Itoa(apiErr.StatusCode)
		case apiErr.Type != "":
			return apiErr.Type
		}
		return errorOther
	case errors.Is(err, providers.ErrUnreachable):
		return "unreachable"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected_eof"
	}
	return goType(err)
}

// goType returns the Go type of the first error in err's chain that is not
// a plain wrapper (a *agentloop.TurnError, fmt.Errorf's %w), or _OTHER when
// that is a bare errors.New or fmt.Errorf text, which says nothing a
// dashboard could group by.
func goType(err error) string {
	for err != nil {
		if turn, ok := err.(*agentloop.TurnError); ok {
			err = turn.Err
			continue
		}
		switch t := fmt.Sprintf("%T", err); t {
		case "*fmt.wrapError", "*fmt.wrapErrors":
			next := errors.Unwrap(err)
			if next == nil {
				return errorOther
			}
			err = next
		case "*errors.errorString":
			return errorOther
		default:
			return t
		}
	}
	return errorOther
}
