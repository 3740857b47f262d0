package toolstate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// Tracker connects the tool states kept in a store to agent runs through
// [agentloop.Hooks]: each run's conversation id
// ([agentloop.RunOptions.ConversationID]; the aisdk handler sets it to the chat
// id) names the conversation whose states it reads and writes (see
// [DocName]). Set its
// fields before first use and do not change them afterwards; a Tracker is
// then safe for concurrent use by any number of runs.
type Tracker struct {
	// Docs keeps the states, one document per conversation ([DocName]).
	// Required: with nil Docs every hook fails (reported to OnError, or
	// cancelling the run).
	Docs store.Docs
	// Config, when non-nil, is the config in force: it replaces the stored
	// config on every update the Tracker makes (so a changed threshold or
	// dependency applies to old conversations too). A Config that fails
	// [Config.Validate] makes every update fail with [ErrInvalidState]. When nil, each
	// conversation keeps its stored config (defaults for a fresh one).
	Config *Config
	// Now is the clock; nil means time.Now. Tests set it to move time
	// without sleeping (cool-downs).
	Now func() time.Time
	// OnError, when set, is told about every store error the hooks meet;
	// the run then goes on (a load failure offers the tools unnarrowed, a
	// record failure loses that record). When nil, a store error cancels
	// the run with it. A corrupt or unknown-version state is reported
	// here, then set aside with [Discard] so that the conversation starts
	// fresh; with a nil OnError it cancels the run instead (with an error
	// wrapping [ErrCorrupt] or [ErrVersion]) and stays stored. A run
	// without a conversation id is reported the same way, with an error
	// wrapping [ErrEmptyID].
	OnError func(conversationID string, err error)
}

func (t *Tracker) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// update runs fn on the conversation's state, applying the Tracker's
// config first and replacing a corrupt state with a fresh one.
func (t *Tracker) update(ctx context.Context, id string, fn func(*State) error) error {
	apply := func(s *State) error {
		if t.Config != nil {
			s.Config = t.Config.clone()
		}
		return fn(s)
	}
	err := Update(ctx, t.Docs, id, apply)
	if undecodable(err) {
		if t.OnError == nil {
			return err
		}
		t.OnError(id, fmt.Errorf("toolstate: starting conversation %q fresh: %w", id, err))
		if derr := Discard(ctx, t.Docs, id); derr != nil {
			return derr
		}
		err = Update(ctx, t.Docs, id, apply)
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

// run is what the hooks remember of one run.
type run struct {
	id      string // the conversation id
	mu      sync.Mutex
	offered map[string]bool // tools offered on the latest model call; nil before the first
}

type runKey struct{ t *Tracker }

// Hooks returns the hooks that plug the Tracker into runs: put them in
// Agent.Hooks (with [agentloop.ComposeHooks] beside others) or pass them
// with [agentloop.RunOptions.Hooks]. The same Hooks serve every run: OnRunStart
// reads the run's conversation id (a run without one is not tracked, and
// is reported as OnError says) and the hooks remember the tools offered on
// the run's latest model call. Any number of runs of one conversation may
// go on at once; their updates are serialized by the store's versions.
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
func (t *Tracker) Hooks() *agentloop.Hooks {
	return &agentloop.Hooks{
		OnRunStart: func(ctx context.Context, start agentloop.RunStart) (context.Context, error) {
			if start.ConversationID == "" {
				err := fmt.Errorf("%w: the run has no conversation id (agentloop.RunOptions.ConversationID), so its tool states are not tracked", ErrEmptyID)
				return ctx, t.fail("", err)
			}
			return context.WithValue(ctx, runKey{t}, &run{id: start.ConversationID}), nil
		},
		BeforeModelCall: func(ctx context.Context, req *agentloop.Request) error {
			r, _ := ctx.Value(runKey{t}).(*run)
			if r == nil {
				return nil // no conversation id: reported at the start
			}
			names := make([]string, len(req.Tools))
			for i, d := range req.Tools {
				names[i] = d.Name
			}
			var keep map[string]bool
			err := t.update(ctx, r.id, func(s *State) error {
				now := t.now()
				s.Sync(now, names...)
				keep = make(map[string]bool, len(names))
				for _, n := range s.Offered(now, names...) {
					keep[n] = true
				}
				return nil
			})
			if err != nil {
				return t.fail(r.id, err)
			}
			tools := req.Tools[:0:0]
			for _, d := range req.Tools {
				if keep[d.Name] {
					tools = append(tools, d)
				}
			}
			req.Tools = tools
			r.mu.Lock()
			r.offered = keep
			r.mu.Unlock()
			return nil
		},
		AfterToolCall: func(ctx context.Context, call agentloop.ToolCall, result *agentloop.ToolResult) error {
			r, _ := ctx.Value(runKey{t}).(*run)
			if r == nil {
				return nil
			}
			r.mu.Lock()
			skip := r.offered != nil && !r.offered[call.Name]
			r.mu.Unlock()
			if skip || errors.Is(result.Err, agentloop.ErrCancelled) || errors.Is(result.Err, agentloop.ErrInvalidArgs) {
				return nil
			}
			isErr, content := result.IsError, result.Content
			// What happened is recorded even when the run was cancelled meanwhile.
			err := t.update(context.WithoutCancel(ctx), r.id, func(s *State) error {
				if isErr {
					s.RecordFailure(call.Name, content, t.now())
				} else {
					s.RecordSuccess(call.Name, t.now())
				}
				return nil
			})
			if err != nil {
				return t.fail(r.id, err)
			}
			return nil
		},
	}
}

// Summary returns the one-line summary of the conversation's tool states
// (see [State.Summary]) with the given tool names included, for logs.
func (t *Tracker) Summary(ctx context.Context, conversationID string, names ...string) (string, error) {
	s, err := Load(ctx, t.Docs, conversationID)
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
// names to give [Tracker.Summary] or [HandlerOptions.Tools].
func Names(tools []*agentloop.Tool) []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		if t != nil {
			out = append(out, t.Name)
		}
	}
	return out
}
