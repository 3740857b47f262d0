package toolstate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
)

// Tracker connects a [Store] to agent runs through [agentloop.Hooks]. Set
// its fields before first use and do not change them afterwards; a Tracker
// is then safe for concurrent use by any number of runs.
type Tracker struct {
	// Store keeps the states. Required: with a nil Store every hook fails
	// (reported to OnError, or cancelling the run).
	Store Store
	// Config, when non-nil, is the config in force: it replaces the stored
	// config on every update the Tracker makes (so a changed threshold or
	// dependency applies to old conversations too). A Config that fails
	// [Config.Validate] makes every update fail with [ErrInvalid]. When nil, each
	// conversation keeps its stored config (defaults for a fresh one).
	Config *Config
	// Now is the clock; nil means time.Now. Tests set it to move time
	// without sleeping (cool-downs).
	Now func() time.Time
	// OnError, when set, is told about every store error the hooks meet;
	// the run then goes on (a load failure offers the tools unnarrowed, a
	// record failure loses that record). When nil, a store error cancels
	// the run with it. A corrupt or unknown-version state is reported
	// here, then set aside with [Store.Discard] so that the conversation
	// starts fresh; with a nil
	// OnError it cancels the run instead (with an error wrapping
	// [ErrCorrupt] or [ErrVersion]) and stays stored.
	OnError func(conversationID string, err error)
}

var errNoStore = errors.New("toolstate: Tracker.Store is nil")

func (t *Tracker) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// update runs fn on the conversation's state, applying the Tracker's
// config first and replacing a corrupt state with a fresh one.
func (t *Tracker) update(ctx context.Context, id string, fn func(*State) error) error {
	if t.Store == nil {
		return errNoStore
	}
	apply := func(s *State) error {
		if t.Config != nil {
			s.Config = t.Config.clone()
		}
		return fn(s)
	}
	err := t.Store.Update(ctx, id, apply)
	if undecodable(err) {
		if t.OnError == nil {
			return err
		}
		t.OnError(id, fmt.Errorf("toolstate: starting conversation %q fresh: %w", id, err))
		if derr := t.Store.Discard(ctx, id); derr != nil {
			return derr
		}
		err = t.Store.Update(ctx, id, apply)
	}
	return err
}

// fail reports err through OnError, or returns it when OnError is nil.
func (t *Tracker) fail(id string, err error) error {
	if t.OnError == nil {
		return err
	}
	t.OnError(id, err)
	return nil
}

// Hooks returns the hooks for one run of a conversation; pass them with
// agentloop.WithHooks. Get new hooks for each run (it is cheap): they
// remember the tools offered on their run's latest model call. Any number
// of runs of one conversation may go on at once, each with its own hooks;
// their updates are serialized by the store.
//
// BeforeModelCall adds the offered tools the state does not know yet, then
// removes from req.Tools every tool that is not available. AfterToolCall
// records the result: an error result is a failure, any other a success.
// Results that say nothing about the tool's health are not recorded: those
// of tools that these hooks hid on the run's latest model call or that were
// not offered on it (the tool did not run), calls whose arguments did not
// fit the schema (the model's mistake, [agentloop.ErrInvalidArgs]), and
// calls a cancel cut short ([agentloop.ErrCancelled]). A timeout, a panic
// and the tool's own error are failures. A result that arrives after the
// run was cancelled is still recorded.
func (t *Tracker) Hooks(conversationID string) *agentloop.Hooks {
	var (
		mu      sync.Mutex
		offered map[string]bool // tools offered on the latest model call; nil before the first
	)
	return &agentloop.Hooks{
		BeforeModelCall: func(ctx context.Context, req *agentloop.Request) error {
			names := make([]string, len(req.Tools))
			for i, d := range req.Tools {
				names[i] = d.Name
			}
			var keep map[string]bool
			err := t.update(ctx, conversationID, func(s *State) error {
				now := t.now()
				s.Sync(now, names...)
				keep = make(map[string]bool, len(names))
				for _, n := range s.Offered(now, names...) {
					keep[n] = true
				}
				return nil
			})
			if err != nil {
				return t.fail(conversationID, err)
			}
			tools := req.Tools[:0:0]
			for _, d := range req.Tools {
				if keep[d.Name] {
					tools = append(tools, d)
				}
			}
			req.Tools = tools
			mu.Lock()
			offered = keep
			mu.Unlock()
			return nil
		},
		AfterToolCall: func(ctx context.Context, call agentloop.ToolCall, result *agentloop.ToolResult) error {
			mu.Lock()
			skip := offered != nil && !offered[call.Name]
			mu.Unlock()
			if skip || errors.Is(result.Err, agentloop.ErrCancelled) || errors.Is(result.Err, agentloop.ErrInvalidArgs) {
				return nil
			}
			isErr, content := result.IsError, result.Content
			// What happened is recorded even when the run was cancelled meanwhile.
			err := t.update(context.WithoutCancel(ctx), conversationID, func(s *State) error {
				if isErr {
					s.RecordFailure(call.Name, content, t.now())
				} else {
					s.RecordSuccess(call.Name, t.now())
				}
				return nil
			})
			if err != nil {
				return t.fail(conversationID, err)
			}
			return nil
		},
	}
}

// Summary returns the one-line summary of the conversation's tool states
// (see [State.Summary]) with the given tool names included, for logs.
func (t *Tracker) Summary(ctx context.Context, conversationID string, names ...string) (string, error) {
	if t.Store == nil {
		return "", errNoStore
	}
	s, err := t.Store.Load(ctx, conversationID)
	if err != nil {
		return "", err
	}
	if t.Config != nil {
		s.Config = t.Config.clone()
	}
	now := t.now()
	s.Sync(now, names...)
	return s.Summary(now), nil
}

// Names returns the names of tools, in order, skipping nil ones: the
// names to give [Tracker.Summary] or [WithTools].
func Names(tools []*agentloop.Tool) []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		if t != nil {
			out = append(out, t.Name)
		}
	}
	return out
}
