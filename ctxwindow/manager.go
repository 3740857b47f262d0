package ctxwindow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync/atomic"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// DefaultOutputReserve is the output reserve when Config.OutputReserve and
// the request's Settings.MaxTokens are both 0.
const DefaultOutputReserve = 4096

// The bounds of the correction factor (see [Manager]).
const (
	// MinCorrection is the lowest factor a provider's count can set. A
	// count below MinCorrection times the estimate is ignored: some
	// servers (older Ollama releases) count only the prompt tokens they did
	// not have cached, and trusting that would overfill the window.
	MinCorrection = 0.5
	// MaxCorrection is the highest factor; higher counts are taken as
	// MaxCorrection times the estimate.
	MaxCorrection = 4.0
)

// ErrOverBudget is matched (errors.Is) by the [*OverBudgetError] that
// cancels a run whose request does not fit even after every strategy.
var ErrOverBudget = errors.New("ctxwindow: request over budget")

// OverBudgetError is the error a Manager's BeforeModelCall hook returns
// (and so the Cause of the run's [*agentloop.CancelledError]) when the
// messages every strategy keeps (the system prompt and tools, the system
// messages at the start, the first and the newest user message, the latest
// turn) are over the budget by themselves, or when no budget is left
// after the output reserve.
type OverBudgetError struct {
	// Tokens is the estimate of the smallest request the strategies made.
	Tokens int
	// Budget is the context window minus the output reserve.
	Budget int
	// ContextWindow and OutputReserve are the numbers behind Budget.
	ContextWindow, OutputReserve int
}

// Error says how far over budget the request is.
func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("ctxwindow: the request needs about %d tokens after every strategy, over its budget of %d (context window %d - output reserve %d): what every request keeps (system prompt, tools, first and newest user message, latest turn) does not fit",
		e.Tokens, e.Budget, e.ContextWindow, e.OutputReserve)
}

// Is reports whether target is ErrOverBudget.
func (e *OverBudgetError) Is(target error) bool { return target == ErrOverBudget }

// Config configures a [Manager]. Only ContextWindow is required.
type Config struct {
	// ContextWindow is the model's context window in tokens (prompt and
	// output together). Required.
	ContextWindow int
	// OutputReserve is the part of the window held back for the model's
	// answer; a request's Settings.MaxTokens raises it. 0 means the
	// request's Settings.MaxTokens, or DefaultOutputReserve when that is 0
	// too. Set it to the output limit the provider uses, if you know it.
	OutputReserve int
	// Estimator counts tokens; nil means [Bytes]{}.
	Estimator Estimator
	// Strategies shape a request that is over budget, in order, each only
	// while it still is; nil means DefaultStrategies(). An empty non-nil
	// slice shapes nothing (a request over budget then fails).
	Strategies []Strategy
	// LargeResults, when non-nil, sends every large tool result as a
	// preview, whether or not the request fits (see [LargeResults]).
	LargeResults *LargeResults
	// Docs keeps the summaries that a [Summarize] strategy makes, per
	// conversation id, across runs, as the conversation's document
	// [SummaryDoc]; nil keeps each summary for the run that made it only.
	// Runs without a conversation id do not use it.
	Docs store.Docs
	// Agent, when not empty, makes the Manager shape only the requests of
	// the agent of that name (agentloop.Request.Agent): in a run with
	// handoffs, whose hooks serve every agent the conversation is handed
	// to, compose one Manager per agent whose model has a window of its
	// own. "" shapes every request. Such a Manager's [Summarize] needs its
	// own Model: the run's agent is the one the run started with.
	Agent string
	// OnReport, when non-nil, is called once for every request the
	// Manager shapes (every model call of every run whose hooks it
	// serves), with what it did, also when the request stays over budget;
	// not when no budget is left after the output reserve, nor when the
	// run is cancelled while summarizing. It is called on the goroutine
	// that ranges over the run, before the model call; a Manager shared by
	// concurrent runs calls it concurrently.
	OnReport func(ctx context.Context, r Report)
}

// Report says what a [Manager] did to one request.
type Report struct {
	// ConversationID is the run's conversation id; "" if none.
	ConversationID string
	// Turn is the request's turn within its run (Request.Turn).
	Turn int
	// Budget is the context window minus the output reserve, in tokens.
	Budget int
	// Before and After are the estimated tokens of the request as the
	// hook got it and as it is sent, corrected by Correction.
	Before, After int
	// Messages and Sent count the history's messages and those sent
	// (summary and notes included).
	Messages, Sent int
	// Applied are the strategies that changed the request, in order.
	Applied []Strategy
	// SetAside counts the tool messages whose large results were sent as
	// previews (Config.LargeResults).
	SetAside int
	// Summary is the summary sent in the request, nil if none; NewSummary
	// is true when it was made for this request.
	Summary    *Summary
	NewSummary bool
	// SummaryUsage sums the usage of the summarizing model calls made for
	// this request.
	SummaryUsage agentloop.Usage
	// Correction is the factor the estimates were corrected by: the
	// provider's last input count divided by its estimate, 1 before any.
	Correction float64
	// Err is a failure the request was shaped around, or nil: summarizing
	// failed (wraps [ErrSummarize]; the window was used), or loading or
	// saving a summary failed (the summary then lasts for the run only).
	// It is also logged to the agent's Logger.
	Err error
}

// Manager keeps the requests of a model's runs within its context window.
// Plug it into an agent with [Manager.Hooks]; it then shapes what each
// model call sends, never the stored history: the run's history, its items
// and its Final keep every message.
//
// Each model call's budget is Config.ContextWindow minus the output reserve.
// The Manager estimates what the request costs (system prompt, tools and
// messages) with its [Estimator], corrected by a factor: after each model
// call that reports its input tokens ([agentloop.TurnEnd].Usage.Input), the
// factor becomes that count divided by the estimate of what was sent
// (within [MinCorrection] and [MaxCorrection]). A run starts with the
// factor the Manager learned last, from any run.
//
// A request that fits is sent unchanged, apart from Config.LargeResults.
// One over budget is shaped by the strategies in order until it fits; if
// it still does not fit, the hook fails with an [*OverBudgetError], which
// cancels the run, rather than sending a request the provider would refuse
// or, as Ollama does, cut at the front.
//
// A Manager is safe for concurrent use by any number of runs; its Config
// must not change once it is made.
type Manager struct {
	cfg        Config
	est        Estimator
	strategies []Strategy
	window     int
	readTool   *agentloop.Tool
	factor     atomic.Uint64 // math.Float64bits of the last correction; 0: none yet
}

// New returns a Manager for cfg. An invalid Config is an error that names
// the field.
func New(cfg Config) (*Manager, error) {
	if cfg.ContextWindow <= 0 {
		return nil, fmt.Errorf("ctxwindow: Config.ContextWindow must be positive, got %d", cfg.ContextWindow)
	}
	if cfg.OutputReserve < 0 || cfg.OutputReserve >= cfg.ContextWindow {
		return nil, fmt.Errorf("ctxwindow: Config.OutputReserve (%d) must be at least 0 and less than ContextWindow (%d)", cfg.OutputReserve, cfg.ContextWindow)
	}
	m := &Manager{cfg: cfg, est: cfg.Estimator, strategies: slices.Clone(cfg.Strategies), window: cfg.ContextWindow}
	if m.est == nil {
		m.est = Bytes{}
	}
	if m.strategies == nil {
		m.strategies = DefaultStrategies()
	}
	for i, s := range m.strategies {
		if err := checkStrategy(s, cfg.ContextWindow); err != nil {
			return nil, fmt.Errorf("%w (Config.Strategies[%d])", err, i)
		}
	}
	page := DefaultReadPage
	if l := cfg.LargeResults; l != nil {
		if err := l.check(); err != nil {
			return nil, err
		}
		page = min(page, max(l.limit()-minSaving, 1))
	}
	t, err := m.newReadTool(page)
	if err != nil {
		return nil, err
	}
	m.readTool = t
	return m, nil
}

// checkStrategy reports what is wrong with a strategy's settings.
func checkStrategy(s Strategy, window int) error {
	errNil := errors.New("ctxwindow: nil strategy")
	switch s := s.(type) {
	case nil:
		return errNil
	case *DropReasoning:
		if s == nil {
			return errNil
		}
	case *SlidingWindow:
		if s == nil {
			return errNil
		}
	case *ShortenResults:
		if s == nil {
			return errNil
		}
		return s.check()
	case *Summarize:
		if s == nil {
			return errNil
		}
		return s.check(window)
	case ShortenResults:
		return s.check()
	case Summarize:
		return s.check(window)
	}
	return nil
}

// Hooks returns the hooks that plug the Manager into runs: put them in
// Agent.Hooks (with [agentloop.ComposeHooks] beside others) or pass them
// with [agentloop.RunOptions.Hooks]. Put them after hooks that edit the request, so
// that the Manager measures what is really sent. OnRunStart notes the run's
// conversation id, agent and logger; BeforeModelCall shapes the request
// (only Config.Agent's, when that is set);
// OnTurnEnd learns the correction from the provider's input count. The same
// Hooks serve every run.
func (m *Manager) Hooks() *agentloop.Hooks {
	return &agentloop.Hooks{
		OnRunStart: func(ctx context.Context, start agentloop.RunStart) (context.Context, error) {
			st := &runState{
				window: m.window,
				convID: start.ConversationID,
				factor: m.Correction(),
				docs:   m.cfg.Docs,
			}
			if a := start.Agent; a != nil {
				st.model, st.log = a.Model, a.Logger
			}
			return context.WithValue(ctx, stateKey{m}, st), nil
		},
		BeforeModelCall: func(ctx context.Context, req *agentloop.Request) error {
			if m.cfg.Agent != "" && req.Agent != m.cfg.Agent {
				return nil
			}
			return m.shape(ctx, m.state(ctx), req)
		},
		OnTurnEnd: func(ctx context.Context, end agentloop.TurnEnd) error {
			m.learn(m.state(ctx), end)
			return nil
		},
	}
}

// ReadResultTool returns the tool, named [ReadResultToolName], with which
// the model reads a tool result that was sent shortened (by
// Config.LargeResults or [ShortenResults]) a page at a time. Add it to the
// agent's tools; while it is offered, the markers of shortened results
// name it, the call id and the offset to read from. It reads the results of
// the run's latest request, from the run's history. It returns the same
// Tool on every call.
func (m *Manager) ReadResultTool() *agentloop.Tool { return m.readTool }

// Correction returns the factor the Manager corrects its estimates by: the
// last provider's input count divided by the estimate (1 before any).
func (m *Manager) Correction() float64 {
	if b := m.factor.Load(); b != 0 {
		return math.Float64frombits(b)
	}
	return 1
}

// stateKey keys a run's state in its context; it holds the Manager so that
// two Managers in one run keep apart.
type stateKey struct{ m *Manager }

// runState is what a Manager keeps for one run. Its hooks are called one at
// a time (on the goroutine that ranges over the run); only aside is read
// by the read tool, from the tools' goroutines.
type runState struct {
	window int
	convID string
	model  agentloop.Model
	log    *slog.Logger
	docs   store.Docs

	factor  float64 // the correction in use
	lastRaw int     // uncorrected estimate of the request in flight; 0: none

	summary *Summary // the run's summary; nil: none yet
	loaded  bool     // the store was asked

	aside atomic.Pointer[map[string]string] // full results behind this request's markers
}

// state returns the run's state, or a fresh one when the run's OnRunStart
// was not this Manager's (hooks called by hand, or composed without it).
func (m *Manager) state(ctx context.Context) *runState {
	if st, ok := ctx.Value(stateKey{m}).(*runState); ok {
		return st
	}
	return &runState{window: m.window, factor: m.Correction()}
}

// learn updates the correction from the input count of the call that ended.
func (m *Manager) learn(st *runState, end agentloop.TurnEnd) {
	raw := st.lastRaw
	st.lastRaw = 0
	if end.Err != nil || end.Usage.Input <= 0 || raw <= 0 {
		return
	}
	f := float64(end.Usage.Input) / float64(raw)
	if f < MinCorrection {
		return
	}
	f = min(f, MaxCorrection)
	st.factor = f
	m.factor.Store(math.Float64bits(f))
}

// shape fits req into the budget.
func (m *Manager) shape(ctx context.Context, st *runState, req *agentloop.Request) error {
	reserve := m.cfg.OutputReserve
	if reserve == 0 && req.Settings.MaxTokens == 0 {
		reserve = DefaultOutputReserve
	}
	reserve = max(reserve, req.Settings.MaxTokens)
	budget := m.window - reserve
	if budget <= 0 {
		return &OverBudgetError{Budget: budget, ContextWindow: m.window, OutputReserve: reserve}
	}
	fixed := m.est.Text(req.System)
	readable := false
	for _, t := range req.Tools {
		fixed += m.est.Text(t.Name) + m.est.Text(t.Description) + m.est.Text(string(t.Schema)) + m.est.Message(agentloop.Message{})
		readable = readable || t.Name == ReadResultToolName
	}
	limit := int(float64(budget) / st.factor)
	v := newView(req.Messages, m.est, fixed, limit)
	v.readable, v.run = readable, st
	rep := &Report{
		ConversationID: st.convID,
		Turn:           req.Turn,
		Budget:         budget,
		Messages:       len(req.Messages),
		Correction:     st.factor,
	}
	v.rep = rep
	rep.Before = st.corrected(v.total)
	if l := m.cfg.LargeResults; l != nil {
		rep.SetAside = l.apply(v)
	}
	for _, s := range m.strategies {
		if v.fits() {
			break
		}
		before := v.changed
		if err := s.apply(ctx, v); err != nil {
			return err
		}
		if v.changed != before {
			rep.Applied = append(rep.Applied, s)
		}
	}
	if v.aside != nil {
		st.aside.Store(&v.aside)
	} else {
		st.aside.Store(nil)
	}
	if v.changed > 0 {
		req.Messages = v.result()
	}
	rep.After, rep.Sent = st.corrected(v.total), len(req.Messages)
	if m.cfg.OnReport != nil {
		m.cfg.OnReport(ctx, *rep)
	}
	if !v.fits() {
		return &OverBudgetError{Tokens: rep.After, Budget: budget, ContextWindow: m.window, OutputReserve: reserve}
	}
	st.lastRaw = v.total
	return nil
}

// corrected turns an estimate into tokens.
func (st *runState) corrected(raw int) int { return int(math.Round(float64(raw) * st.factor)) }

// summaryFor returns the run's summary, loading the conversation's from
// the store the first time, if it fits v's history.
func (st *runState) summaryFor(ctx context.Context, v *view) (Summary, bool) {
	if !st.loaded && st.docs != nil && st.convID != "" {
		st.loaded = true
		s, ok, err := loadSummary(ctx, st.docs, st.convID)
		switch {
		case err != nil:
			st.warn(ctx, v.rep, fmt.Errorf("ctxwindow: loading the summary of conversation %q: %w", st.convID, err))
		case ok:
			st.summary = &s
		}
	}
	if st.summary == nil || !v.fitsSummary(*st.summary) {
		return Summary{}, false
	}
	return *st.summary, true
}

// keepSummary makes s the run's summary and saves it.
func (st *runState) keepSummary(ctx context.Context, rep *Report, s Summary) {
	st.summary, st.loaded = &s, true
	if st.docs == nil || st.convID == "" {
		return
	}
	if err := saveSummary(ctx, st.docs, st.convID, s); err != nil {
		st.warn(ctx, rep, fmt.Errorf("ctxwindow: saving the summary of conversation %q: %w", st.convID, err))
	}
}

// warn reports a failure the request is shaped around.
func (st *runState) warn(ctx context.Context, rep *Report, err error) {
	rep.Err = errors.Join(rep.Err, err)
	if st.log != nil {
		st.log.WarnContext(ctx, "ctxwindow: the request was shaped around a failure", "conversation", st.convID, "err", err)
	}
}
