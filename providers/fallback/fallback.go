// Package fallback is an [agentloop.Model] that streams from the first of
// several models and moves on to the next when a model fails in a way
// another model may not: its server cannot be reached, is overloaded or
// failing, or rate-limits the request with no Retry-After worth waiting
// for. It only moves on before the failed model yielded anything, so a
// reply is never a mix of two models; an error after the first chunk is
// passed on as it is.
//
// The providers already retry a request (429, 5xx, failed connections)
// before they give up, honouring Retry-After, so the error a fallback sees
// is one that retrying the same model did not cure.
package fallback

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
)

// DefaultMaxRetryAfter is Config.MaxRetryAfter's default: the providers'
// retrying transport waits for a Retry-After up to this long itself.
const DefaultMaxRetryAfter = 30 * time.Second

// Config configures a [Model]. Only Models is required.
type Config struct {
	// Models are tried in order; at least one, none nil.
	Models []agentloop.Model
	// ShouldFallBack reports whether a model's error, yielded before any
	// chunk, is worth trying the next model for; nil means the rule of
	// [Model.ShouldFallBack].
	ShouldFallBack func(error) bool
	// MaxRetryAfter is the longest Retry-After of a rate-limit error that
	// is still worth waiting for, so the default rule does not fall back:
	// the caller can wait and retry the same model. 0 means
	// DefaultMaxRetryAfter; a negative value falls back on every
	// rate-limit error.
	MaxRetryAfter time.Duration
	// OnFallback, when set, is called each time the Model gives up on
	// Models[failed] for the next one, with that model's error (for logs
	// and metrics). It is called on the goroutine that ranges over the
	// stream.
	OnFallback func(ctx context.Context, failed int, err error)
}

// Model is an agentloop.Model that falls back from one model to the next.
// It is safe for concurrent use if its models are; its configuration
// cannot change after New.
type Model struct {
	cfg Config
}

var (
	_ agentloop.Model          = (*Model)(nil)
	_ agentloop.ModelDescriber = (*Model)(nil)
)

// New checks cfg and returns a Model. The error names what is wrong.
func New(cfg Config) (*Model, error) {
	if len(cfg.Models) == 0 {
		return nil, errors.New("fallback: Config.Models is empty")
	}
	for i, m := range cfg.Models {
		if m == nil {
			return nil, fmt.Errorf("fallback: Config.Models[%d] is nil", i)
		}
	}
	if cfg.MaxRetryAfter == 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	cfg.Models = append([]agentloop.Model(nil), cfg.Models...)
	return &Model{cfg: cfg}, nil
}

// ShouldFallBack is the default rule: err is worth the next model when it
// wraps [providers.ErrUnreachable] or [providers.ErrOverloaded] (5xx, 529,
// an overloaded or server error event), or [providers.ErrRateLimited]
// without a Retry-After, or with one longer than Config.MaxRetryAfter.
// Errors of the request itself (bad request, authentication, unknown model)
// and a done context are not: another model would not fix them, or the
// caller has given up.
func (m *Model) ShouldFallBack(err error) bool {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.Is(err, providers.ErrUnreachable), errors.Is(err, providers.ErrOverloaded):
		return true
	case errors.Is(err, providers.ErrRateLimited):
		var ae *providers.APIError
		if !errors.As(err, &ae) || ae.RetryAfter == 0 || m.cfg.MaxRetryAfter < 0 {
			return true
		}
		return ae.RetryAfter > m.cfg.MaxRetryAfter
	}
	return false
}

// ModelInfo names the first model (the one used while it works) when it
// has a ModelInfo method, and is zero otherwise. Use Config.OnFallback to
// see when another model answers.
func (m *Model) ModelInfo() agentloop.ModelInfo {
	if named, ok := m.cfg.Models[0].(agentloop.ModelDescriber); ok {
		return named.ModelInfo()
	}
	return agentloop.ModelInfo{}
}

// Stream streams req from the first model, or from the next one when a
// model fails before it yielded anything with an error worth it (see
// Config.ShouldFallBack). When every model tried failed, the error is an
// [*Error] holding each model's error. req is passed unchanged to each
// model tried.
func (m *Model) Stream(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	return func(yield func(agentloop.Chunk, error) bool) {
		should := m.cfg.ShouldFallBack
		if should == nil {
			should = m.ShouldFallBack
		}
		var errs []error
		for i, model := range m.cfg.Models {
			started := false
			var failed error
			for c, err := range model.Stream(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				started = true
				if !yield(c, nil) {
					return
				}
			}
			switch {
			case failed == nil:
				return
			case started:
				yield(nil, failed) // mid-reply: another model cannot take over
				return
			}
			errs = append(errs, failed)
			last := i == len(m.cfg.Models)-1
			if last || ctx.Err() != nil || !should(failed) {
				break
			}
			if m.cfg.OnFallback != nil {
				m.cfg.OnFallback(ctx, i, failed)
			}
		}
		if len(errs) == 1 {
			yield(nil, errs[0])
			return
		}
		yield(nil, &Error{Errs: errs})
	}
}

// Error is the error of a [Model] stream for which more than one model was
// tried and none answered: Errs holds each model's error, in the order
// tried. errors.Is and errors.As see all of them.
type Error struct {
	Errs []error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fallback: %d models failed", len(e.Errs))
	for i, err := range e.Errs {
		fmt.Fprintf(&b, "; model %d: %v", i, err)
	}
	return b.String()
}

// Unwrap returns Errs.
func (e *Error) Unwrap() []error { return e.Errs }
