// Package toolstate keeps the health of an agent's tools across the turns,
// runs and restarts of one conversation, so that a failing tool stops being
// offered to the model and a tool that depends on another is offered only
// once that one has worked.
//
// A [State] holds, per tool, a [ToolState] (status, reason, consecutive
// failures, last success and failure) and the [Config] that rules it
// (failure threshold, cool-down, dependencies). States live in the
// versioned conversation store (package store: memstore, SQLite, or
// PostgreSQL shared by several replicas), as the document [DocName] of each
// conversation: of its chat, beside the chat and deleted with it, or of no
// chat for a conversation that is no chat of the store (a stateless chat
// handler); [Load], [Update] and [Discard] read and write it. A [Tracker] plugs them into an
// [agentloop.Agent] through hooks only: before each model call it narrows
// the offered tools to the available ones, and it records every tool
// result. [NewHandler] serves the states over HTTP
// (GET /agents/{id}/tool-states, POST /agents/{id}/tool-states/reset).
//
// Statuses, from strongest to weakest:
//   - disabled: switched off by an operator ([State.Disable]); never offered.
//   - failed: failed Config.FailureThreshold times in a row; not offered
//     until reset, or until Config.Cooldown has passed since the last
//     failure (then it is offered again, and one more failure makes it
//     failed again at once, like a half-open circuit breaker).
//   - waiting: one of its Config.Dependencies has not yet succeeded in this
//     conversation; not offered.
//   - available: offered.
//
// Wiring: add the tracker's hooks to the agent, and run each conversation
// with its chat id,
//
//	tracker := &toolstate.Tracker{Docs: st} // st: a store.Store
//	agent.Hooks = agentloop.ComposeHooks(agent.Hooks, tracker.Hooks())
//	agent.Stream(ctx, history, &agentloop.RunOptions{ConversationID: chatID})
//
// (the aisdk handler sets the conversation id to the chat id), and mount
// NewHandler(st, HandlerOptions{}) at "/agents/". See the webChat example.
//
// Concurrency: a State is a plain value and is not safe for concurrent use.
// [Update] is an optimistic read-modify-write on the document's version: it
// takes no lock, and retries an update whose version another writer (in
// this process or on another replica) moved, so concurrent runs of one
// conversation lose no update. A state that cannot be decoded is set aside
// with [Discard], which does nothing once the state decodes, so runs that
// repair the same corrupt state at once do not undo each other's updates.
package toolstate

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Status is a tool's status in a conversation.
type Status string

// The statuses a tool can have.
const (
	// StatusAvailable: the tool is offered to the model.
	StatusAvailable Status = "available"
	// StatusFailed: the tool failed too often in a row and is not offered.
	StatusFailed Status = "failed"
	// StatusWaiting: a dependency has not succeeded yet; not offered.
	StatusWaiting Status = "waiting"
	// StatusDisabled: an operator disabled the tool; not offered.
	StatusDisabled Status = "disabled"
)

func (s Status) valid() bool {
	switch s {
	case StatusAvailable, StatusFailed, StatusWaiting, StatusDisabled:
		return true
	}
	return false
}

// DefaultFailureThreshold is used when Config.FailureThreshold is 0.
const DefaultFailureThreshold = 3

// ErrUntrackedTool is wrapped by errors about a tool the state does not
// track (it holds no state of that name). It is not the loop's
// [agentloop.ErrUnknownTool], which is about a call to a tool the run does
// not offer.
var ErrUntrackedTool = errors.New("toolstate: untracked tool")

// Config rules how tool states change. It is stored with the states. The
// zero value is usable: threshold 3, no cool-down, no dependencies.
type Config struct {
	// FailureThreshold is how many consecutive failures make a tool failed;
	// 0 means DefaultFailureThreshold.
	FailureThreshold int `json:"failureThreshold,omitempty"`
	// Cooldown, when positive, is how long after its last failure a failed
	// tool is offered again. 0 means a failed tool stays failed until reset.
	// It is serialized in nanoseconds.
	Cooldown time.Duration `json:"cooldown,omitempty"`
	// Dependencies maps a tool to the tools that must each have succeeded
	// in the conversation before it is offered.
	Dependencies map[string][]string `json:"dependencies,omitempty"`
}

// Threshold returns the effective failure threshold.
func (c Config) Threshold() int {
	if c.FailureThreshold <= 0 {
		return DefaultFailureThreshold
	}
	return c.FailureThreshold
}

// Validate reports the first problem of the config: a negative threshold
// or cool-down, an empty tool name, a tool that depends on itself, or a
// dependency cycle (whose tools could never be offered).
func (c Config) Validate() error {
	if c.FailureThreshold < 0 {
		return fmt.Errorf("toolstate: failure threshold %d is negative", c.FailureThreshold)
	}
	if c.Cooldown < 0 {
		return fmt.Errorf("toolstate: cool-down %v is negative", c.Cooldown)
	}
	if len(c.Dependencies) == 0 {
		return nil
	}
	for _, tool := range slices.Sorted(maps.Keys(c.Dependencies)) {
		if tool == "" {
			return errors.New("toolstate: dependencies of a tool with an empty name")
		}
		for _, d := range c.Dependencies[tool] {
			if d == "" {
				return fmt.Errorf("toolstate: tool %q depends on a tool with an empty name", tool)
			}
			if d == tool {
				return fmt.Errorf("toolstate: tool %q depends on itself", tool)
			}
		}
	}
	// Depth-first search for cycles: 1 = on the current path, 2 = done.
	mark := make(map[string]int)
	var visit func(string, []string) error
	visit = func(t string, path []string) error {
		switch mark[t] {
		case 1:
			return fmt.Errorf("toolstate: dependency cycle %s", strings.Join(append(path, t), " -> "))
		case 2:
			return nil
		}
		mark[t] = 1
		for _, d := range c.Dependencies[t] {
			if err := visit(d, append(path, t)); err != nil {
				return err
			}
		}
		mark[t] = 2
		return nil
	}
	for _, tool := range slices.Sorted(maps.Keys(c.Dependencies)) {
		if err := visit(tool, nil); err != nil {
			return err
		}
	}
	return nil
}

func (c Config) clone() Config {
	if c.Dependencies != nil {
		deps := make(map[string][]string, len(c.Dependencies))
		for k, v := range c.Dependencies {
			deps[k] = slices.Clone(v)
		}
		c.Dependencies = deps
	}
	return c
}

// ToolState is the state of one tool in one conversation.
type ToolState struct {
	Status Status `json:"status"`
	// Reason says why the tool has its status ("" when available).
	Reason string `json:"reason,omitempty"`
	// LastUpdated is when the status or the counts last changed.
	LastUpdated time.Time `json:"lastUpdated"`
	// ConsecutiveFailures counts error results since the last success or reset.
	ConsecutiveFailures int `json:"consecutiveFailures"`
	// LastSuccess and LastFailure are the times of the last results; zero
	// means never.
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	LastFailure time.Time `json:"lastFailure,omitzero"`
	// Successes and Failures count every result recorded in the
	// conversation; they are not cleared by a reset.
	Successes int `json:"successes"`
	Failures  int `json:"failures"`
}

// State is the tool state of one conversation. Create one with [NewState]
// (or get one with [Load]); the zero value is not usable. A State is not
// safe for concurrent use: change it inside [Update], which loses no
// change of concurrent writers.
//
// The methods that take now first apply the rules (cool-down, dependencies)
// at that time, so every status they report is current.
type State struct {
	// Config rules the states.
	Config Config
	// Tools maps a tool name to its state. Tools not in it have never been
	// seen; they start available (or waiting, if they have dependencies).
	Tools map[string]ToolState
	// Updated is when a tool state last changed; zero for a fresh state.
	Updated time.Time
}

// NewState returns a fresh state with cfg and no tools.
func NewState(cfg Config) *State {
	return &State{Config: cfg.clone(), Tools: make(map[string]ToolState)}
}

// Clone returns a deep copy of s.
func (s *State) Clone() *State {
	return &State{Config: s.Config.clone(), Tools: maps.Clone(s.Tools), Updated: s.Updated}
}

// Sync adds the named tools the state does not know yet, and applies the
// cool-down and dependency rules at now to every known tool (and to every
// tool named in Config.Dependencies). It reports whether anything changed.
func (s *State) Sync(now time.Time, names ...string) bool {
	if s.Tools == nil {
		s.Tools = make(map[string]ToolState)
	}
	changed := false
	add := func(name string) {
		if _, ok := s.Tools[name]; !ok && name != "" {
			s.Tools[name] = ToolState{Status: StatusAvailable, LastUpdated: now}
			changed = true
		}
	}
	for _, n := range names {
		add(n)
	}
	for tool, deps := range s.Config.Dependencies {
		add(tool)
		for _, d := range deps {
			add(d)
		}
	}
	for name, ts := range s.Tools {
		if next := s.settle(name, ts, now); next != ts {
			s.Tools[name] = next
			changed = true
		}
	}
	if changed {
		s.Updated = now
	}
	return changed
}

// settle applies the rules to one tool's state.
func (s *State) settle(name string, ts ToolState, now time.Time) ToolState {
	switch ts.Status {
	case StatusDisabled:
		return ts
	case StatusFailed:
		if s.Config.Cooldown <= 0 || now.Before(ts.LastFailure.Add(s.Config.Cooldown)) {
			return ts
		}
	}
	status, reason := StatusAvailable, ""
	if missing := s.missingDeps(name); len(missing) > 0 {
		status, reason = StatusWaiting, "waits for "+strings.Join(missing, ", ")+" to succeed"
	}
	if ts.Status != status || ts.Reason != reason {
		ts.Status, ts.Reason, ts.LastUpdated = status, reason, now
	}
	return ts
}

// missingDeps returns the dependencies of name that have not succeeded.
func (s *State) missingDeps(name string) []string {
	var missing []string
	for _, d := range s.Config.Dependencies[name] {
		if s.Tools[d].Successes == 0 {
			missing = append(missing, d)
		}
	}
	return missing
}

// Status returns the status of the named tool at now. A tool the state
// does not know is available, or waiting if it has unmet dependencies.
// Status does not change s.
func (s *State) Status(name string, now time.Time) Status {
	ts, ok := s.Tools[name]
	if !ok {
		ts = ToolState{Status: StatusAvailable}
	}
	return s.settle(name, ts, now).Status
}

// Offered returns the names, in their order, whose status at now is
// available. It does not change s.
func (s *State) Offered(now time.Time, names ...string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if s.Status(n, now) == StatusAvailable {
			out = append(out, n)
		}
	}
	return out
}

// RecordSuccess records a successful result of the named tool at now: the
// consecutive failure count goes back to 0, and a failed tool becomes
// available again. Tools that wait for it may become available.
func (s *State) RecordSuccess(name string, now time.Time) {
	s.Sync(now, name)
	ts := s.Tools[name]
	ts.Successes++
	ts.ConsecutiveFailures = 0
	ts.LastSuccess, ts.LastUpdated = now, now
	if ts.Status == StatusFailed {
		ts.Status, ts.Reason = StatusAvailable, ""
	}
	s.Tools[name] = ts
	s.Updated = now
	s.Sync(now)
}

// RecordFailure records an error result of the named tool at now, with the
// error text as detail. Once the consecutive failures reach the threshold
// the tool becomes failed (a disabled tool stays disabled).
func (s *State) RecordFailure(name, detail string, now time.Time) {
	s.Sync(now, name)
	ts := s.Tools[name]
	ts.Failures++
	ts.ConsecutiveFailures++
	ts.LastFailure, ts.LastUpdated = now, now
	if ts.ConsecutiveFailures >= s.Config.Threshold() && ts.Status != StatusDisabled {
		ts.Status = StatusFailed
		ts.Reason = fmt.Sprintf("%d consecutive failures", ts.ConsecutiveFailures)
		if detail = strings.TrimSpace(detail); detail != "" {
			ts.Reason += "; last: " + truncate(detail, 200)
		}
	}
	s.Tools[name] = ts
	s.Updated = now
}

// Reset makes the named tool available again (or waiting, if a dependency
// has not succeeded): it clears the consecutive failures and a failed or
// disabled status. An unknown name is an error wrapping [ErrUntrackedTool].
func (s *State) Reset(name string, now time.Time) error {
	ts, ok := s.Tools[name]
	if !ok {
		return fmt.Errorf("%w %q", ErrUntrackedTool, name)
	}
	ts.ConsecutiveFailures = 0
	ts.Status, ts.Reason, ts.LastUpdated = StatusAvailable, "", now
	s.Tools[name] = ts
	s.Updated = now
	s.Sync(now)
	return nil
}

// ResetAll resets every known tool (see [State.Reset]) and returns their
// names, sorted.
func (s *State) ResetAll(now time.Time) []string {
	names := slices.Sorted(maps.Keys(s.Tools))
	for _, n := range names {
		_ = s.Reset(n, now) // n is known
	}
	return names
}

// Disable switches the named tool off with a reason, whatever its results;
// [State.Reset] switches it on again. The tool need not be known yet.
func (s *State) Disable(name, reason string, now time.Time) {
	s.Sync(now, name)
	ts := s.Tools[name]
	ts.Status, ts.Reason, ts.LastUpdated = StatusDisabled, reason, now
	s.Tools[name] = ts
	s.Updated = now
}

// Summary returns one line for logs, e.g.
// "4 tools: 2 available (a, b), 1 failed (c), 1 waiting (d), 0 disabled",
// with the statuses at now. It does not change s.
func (s *State) Summary(now time.Time) string {
	by := make(map[Status][]string)
	names := slices.Sorted(maps.Keys(s.Tools))
	for _, n := range names {
		st := s.Status(n, now)
		by[st] = append(by[st], n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools:", len(names))
	for i, st := range []Status{StatusAvailable, StatusFailed, StatusWaiting, StatusDisabled} {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %d %s", len(by[st]), st)
		if len(by[st]) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(by[st], ", "))
		}
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
