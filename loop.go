package agentloop

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Defaults used when the matching [Agent] field is zero.
const (
	DefaultMaxTurns        = 16
	DefaultToolConcurrency = 8
)

// Agent runs a model's tool-calling loop. Set its fields, then call
// [Agent.Stream] for each run. An Agent must not be modified while runs are
// in progress; it is safe for any number of concurrent runs.
type Agent struct {
	// Model answers each turn. Required.
	Model Model
	// Name names the agent in logs and traces; optional.
	Name string
	// System is the system prompt sent on every model call.
	System string
	// Tools are offered to the model on every turn (hooks may narrow them).
	Tools []*Tool
	// Hooks are called at each step of every run.
	Hooks *Hooks
	// Settings are sent with every model call.
	Settings Settings

	// MaxTurns bounds the model calls of one run; 0 means DefaultMaxTurns.
	MaxTurns int
	// AnswerAtTurnLimit changes what happens when the model still calls
	// tools after MaxTurns calls: instead of failing with a
	// [*TurnLimitError], the run makes one more call with no tools offered,
	// so the model must answer in text.
	AnswerAtTurnLimit bool
	// Budget bounds the tokens or money one run may spend; the zero value
	// sets no bound. See [Budget].
	Budget Budget
	// ToolConcurrency bounds how many tool funcs of one run run at once;
	// 0 means DefaultToolConcurrency, 1 runs the calls one after another.
	// Calls start in call order. A call holds its slot until its func
	// returns: a call that times out gets its error result at once, but
	// still counts against the bound until its func returns.
	ToolConcurrency int
	// ToolTimeout bounds each tool call whose Tool.Timeout is zero; 0 means
	// no limit.
	ToolTimeout time.Duration

	// Handoffs are agents this agent may hand the conversation to. The
	// model is offered a tool "transfer_to_<Name>" for each; once a turn's
	// transfer call has its result, the next turns of the run use that
	// agent's Model, System, Settings, Tools and Handoffs (the run's hooks,
	// limits, budget and RunOptions.Tools stay, and tell the agents apart by
	// Request.Agent; RunOptions.System and Settings apply to the agent
	// Stream was called on only). Assistant messages then
	// record their agent ([Message.Agent]), and a run resumed on this agent
	// goes on with the agent that holds the conversation. Every agent
	// reachable through Handoffs needs a unique Name.
	Handoffs []*Agent
	// HandoffDescription tells a model that may hand over to this agent
	// what it does; "" means a generic description naming the agent.
	HandoffDescription string
	// HandoffFilter, when not nil, chooses what this agent's model is
	// given once another agent handed it the conversation. Before each of
	// this agent's model calls it gets a deep copy of the history, which it
	// may change, and handoff, the index of the first message after the
	// turn that handed over (h[:handoff] is the conversation before this
	// agent got it, the transfer call and that turn's results included);
	// what it returns is the call's Request.Messages. The run's history
	// (its items, TurnEnd.History, Final, Pending) keeps every message.
	// The handoff is found in the history (the last successful transfer to
	// this agent), so the filter applies in every later turn and in later
	// runs that continue the conversation; it is not called while this
	// agent holds a conversation nobody handed it. In what it returns,
	// every tool call needs its result and every result, approval and
	// sub-run its call; otherwise the run fails with a [*TurnError]
	// wrapping [ErrInvalidHistory] that names the agent. It runs before
	// the run's BeforeModelCall hooks, which get what it returned. nil
	// means the model sees the whole history. [DropToolsBeforeHandoff]
	// leaves out the earlier agents' tool calls and results.
	HandoffFilter func(h History, handoff int) History

	// Logger receives what no item or error reports: tool and hook panics
	// (with their stacks), hook errors, and results dropped because their
	// tool returned after its timeout. Nil discards them.
	Logger *slog.Logger
}

// RunOptions changes one run of [Agent.Stream]. The zero value, or a nil
// *RunOptions, runs with the agent's own fields. Stream reads the options
// when it is called and keeps no reference to them.
type RunOptions struct {
	// Tools are added to this run (client tools from a web request, or tools
	// for one user). A tool with the name of an agent tool replaces it.
	Tools []*Tool

	// System, when not empty, replaces the agent's system prompt for this
	// run.
	System string

	// Hooks, when not nil, are called after the agent's ([ComposeHooks]).
	Hooks *Hooks

	// Settings, when not nil, replaces the agent's sampling settings for
	// this run.
	Settings *Settings

	// Budget, when not nil, replaces the agent's budget for this run.
	Budget *Budget

	// ConversationID names the conversation the run belongs to, for hooks
	// ([RunStart.ConversationID]), logs and traces. The loop itself does
	// not use it.
	ConversationID string

	// Effects, when not nil, runs this run's model and tool calls through
	// an engine instead of in process (see [Effects]). Engines set it;
	// applications use an engine's own API (such as dbosrun.Runner).
	Effects Effects
}

// Stream starts a run over history and returns its items.
//
// The run makes model calls ("turns") until the model answers without
// calling tools, then yields a [Final]. When the model calls client tools or
// tools that need approval, the run runs the turn's other tools and ends
// with a [Pending]; append the results or decisions to Pending.History and
// call Stream again to resume. A failed run yields one (nil, err) pair last:
// a [*CancelledError], [*TurnLimitError], [*BudgetError] or [*TurnError]
// (which carry the history), or an error wrapping [ErrInvalidHistory] for a malformed history.
//
// history is not modified. If the consumer stops ranging, the run cancels its
// model call and tools and returns once every goroutine it started has
// ended. Tools must therefore return once their context is done.
func (a *Agent) Stream(ctx context.Context, history History, opts *RunOptions) iter.Seq2[Item, error] {
	return func(yield func(Item, error) bool) {
		r, err := a.newRun(ctx, history, opts, yield)
		if err != nil {
			yield(nil, err)
			return
		}
		defer r.close()
		last, err := r.start()
		if err == nil {
			last, err = r.run()
		}
		r.end(last, err)
		switch {
		case errors.Is(err, ErrStopped):
		case err != nil:
			yield(nil, err)
		default:
			yield(last, nil)
		}
	}
}

type run struct {
	agent  *Agent
	ctx    context.Context
	done   <-chan struct{} // ctx.Done(), for selects
	cancel context.CancelCauseFunc
	// release cancels the context the run started with, when OnRunStart
	// replaced it; nil otherwise.
	release context.CancelCauseFunc
	yield   func(Item, error) bool
	log     *slog.Logger // nil: discard
	wg      sync.WaitGroup

	hooks          *Hooks
	tools          map[string]*Tool
	toolOrder      []*Tool
	system         string
	settings       Settings
	maxTurns       int
	budget         Budget
	model          ModelInfo     // of Agent.Model, for the budget's pricer
	slots          chan struct{} // ToolConcurrency tokens, held while a tool func runs
	progress       chan progress // from ReportProgress to the ranging goroutine
	conversationID string
	parent         string            // Step.Parent: the key of the tool call this run runs inside; "" if none
	effects        Effects           // nil: effects run in process
	box            *nestedBox        // Nested items of agent tools; nil until a turn calls one
	drives         chan *driveReq    // sub-runs to range on this goroutine; nil like box, and under an engine
	held           *driveReq         // a request to run once the results before its job are yielded
	turnDone       []chan struct{}   // the current turn's done channels, one per call
	graph          map[string]*Agent // agents reachable through Handoffs, by name; nil without
	extra          []*Tool           // RunOptions.Tools, kept for handoffs

	history    History
	handed     History         // the deep copy of history the last BeforeModelCall got
	ids        map[string]bool // every tool-call id in history
	assistants int             // assistant messages in history
	usage      Usage           // this run's model calls and its sub-runs'
	own        Usage           // this run's model calls
	subs       []subUsage      // per sub-agent, in the order first seen; nil without sub-runs
	turns      int
	started    bool // OnRunStart was called
}

func (a *Agent) newRun(ctx context.Context, history History, opts *RunOptions, yield func(Item, error) bool) (*run, error) {
	if a.Model == nil {
		return nil, errors.New("agentloop: Agent.Model is nil")
	}
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	concurrency := a.ToolConcurrency
	if concurrency <= 0 {
		concurrency = DefaultToolConcurrency
	}
	r := &run{
		agent:          a,
		yield:          yield,
		log:            a.Logger,
		hooks:          ComposeHooks(a.Hooks, o.Hooks),
		tools:          make(map[string]*Tool),
		system:         a.System,
		settings:       a.Settings,
		maxTurns:       a.MaxTurns,
		budget:         a.Budget,
		slots:          make(chan struct{}, concurrency),
		progress:       make(chan progress),
		conversationID: o.ConversationID,
		parent:         IdempotencyKey(ctx),
		effects:        o.Effects,
	}
	if o.System != "" {
		r.system = o.System
	}
	if o.Settings != nil {
		r.settings = *o.Settings
	}
	if r.maxTurns <= 0 {
		r.maxTurns = DefaultMaxTurns
	}
	if o.Budget != nil {
		r.budget = *o.Budget
	}
	r.model = modelInfo(a.Model)
	if err := r.budget.check(r.model); err != nil {
		return nil, err
	}
	if err := r.addTools(a.Tools, false); err != nil {
		return nil, err
	}
	if err := r.addTools(o.Tools, true); err != nil {
		return nil, err
	}
	if err := history.Validate(); err != nil {
		return nil, err
	}
	if len(a.Handoffs) > 0 {
		r.history = history
		if err := r.setupHandoffs(&o); err != nil {
			return nil, err
		}
	}
	// The run only appends to its history, and hands out slices capped at
	// their length, so it can share the caller's messages.
	r.history = answerDangling(history)
	r.history = r.history[:len(r.history):len(r.history)]
	r.ids = callIDs(r.history)
	for _, m := range r.history {
		if m.Role == RoleAssistant {
			r.assistants++
		}
	}
	r.ctx, r.cancel = context.WithCancelCause(ctx)
	r.done = r.ctx.Done()
	return r, nil
}

func (r *run) addTools(tools []*Tool, replace bool) error {
	for _, t := range tools {
		if t == nil {
			continue
		}
		if t.validator == nil {
			c := *t
			if err := c.prepare(); err != nil {
				return err
			}
			t = &c
		}
		if old, ok := r.tools[t.Name]; ok {
			if !replace {
				return fmt.Errorf("agentloop: two tools are named %q", t.Name)
			}
			i := slices.Index(r.toolOrder, old)
			r.toolOrder[i] = t
		} else {
			r.toolOrder = append(r.toolOrder, t)
		}
		r.tools[t.Name] = t
	}
	return nil
}

func (r *run) close() {
	r.cancel(ErrStopped)
	r.wg.Wait()
	if r.release != nil {
		r.release(ErrStopped)
	}
}

// stopped reports whether the run's context is done: cancelled, past its
// deadline, or stopped by the consumer.
//
// It is checked on every chunk: the context's Err, an atomic load, costs
// less than a non-blocking receive from its Done channel.
func (r *run) stopped() bool { return r.ctx.Err() != nil }

// emit yields an item; it returns ErrStopped when the consumer stopped
// ranging.
func (r *run) emit(it Item) error {
	if r.yield(it, nil) {
		return nil
	}
	return r.consumerStopped()
}

// consumerStopped cancels the run when the consumer stopped ranging, and
// returns ErrStopped.
func (r *run) consumerStopped() error {
	r.cancel(ErrStopped)
	return ErrStopped
}

// snapshot returns the history so far, capped so that appending to it
// cannot reach the run's backing array.
func (r *run) snapshot() History { return r.history[:len(r.history):len(r.history)] }

// start calls OnRunStart.
func (r *run) start() (Item, error) {
	r.started = true
	h := r.hooks
	if h == nil || h.OnRunStart == nil {
		return nil, nil
	}
	ctx, err := h.OnRunStart(r.ctx, RunStart{
		Agent:          r.agent,
		ConversationID: r.conversationID,
		History:        r.snapshot(),
		Resumed:        endsWithToolCalls(r.history),
	})
	if ctx != nil && ctx != r.ctx {
		// The hook's context derives from the run's; the run keeps a
		// cancel of its own on top of it.
		r.release = r.cancel
		r.ctx, r.cancel = context.WithCancelCause(ctx)
		r.done = r.ctx.Done()
	}
	if err != nil {
		return nil, r.hookFailed("OnRunStart", err)
	}
	return nil, nil
}

// endsWithToolCalls reports whether h ends with an assistant message that
// made tool calls, followed only by tool messages: the history of a paused
// run, whether or not the caller has answered its calls since.
func endsWithToolCalls(h History) bool {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role != RoleTool {
			return h[i].Role == RoleAssistant && len(h[i].ToolCalls()) > 0
		}
	}
	return false
}

// end calls OnRunEnd once, if OnRunStart was called.
func (r *run) end(last Item, err error) {
	h := r.hooks
	if h == nil || h.OnRunEnd == nil || !r.started {
		return
	}
	h.OnRunEnd(r.ctx, RunEnd{Last: last, Err: err, Usage: r.usage, Turns: r.turns})
}

func (r *run) run() (Item, error) {
	if calls := r.history.Unanswered(); len(calls) > 0 {
		p, err := r.handleCalls(calls, r.tools, approvalsAfterLastAssistant(r.history))
		if err != nil || p != nil {
			return p, err
		}
		if err := r.handOff(); err != nil {
			return nil, err
		}
	}
	for {
		if r.stopped() {
			return nil, r.cancelled()
		}
		if be := r.budget.exceeded(r.model, r.own, r.usage, r.subs); be != nil {
			be.History = r.snapshot()
			return nil, be
		}
		last := false
		if r.turns >= r.maxTurns {
			if !r.agent.AnswerAtTurnLimit {
				return nil, &TurnLimitError{Limit: r.maxTurns, History: r.snapshot()}
			}
			last = true
		}
		tr, err := r.modelTurn(last)
		if err != nil {
			return nil, err
		}
		calls := tr.msg.ToolCalls()
		switch {
		case tr.finish == FinishLength && (len(calls) > 0 || tr.partial):
			r.answerAll("not run: the model's output was cut off by its length limit", ErrNotRun)
			return nil, &TurnError{Turn: r.turns, Err: ErrTruncated, History: r.snapshot()}
		case len(calls) == 0:
			return Final{Text: tr.msg.Text(), Usage: r.usage, AgentUsage: r.agentUsage(), Turns: r.turns, History: r.snapshot()}, nil
		case last:
			r.answerAll("not run: the turn limit was reached", ErrNotRun)
			return nil, &TurnLimitError{Limit: r.maxTurns, History: r.snapshot()}
		}
		p, err := r.handleCalls(calls, tr.offered, nil)
		if err != nil || p != nil {
			return p, err
		}
		if err := r.handOff(); err != nil {
			return nil, err
		}
	}
}

// cancelled answers every unanswered call and returns the run's
// cancellation error (ErrStopped when the consumer stopped ranging).
func (r *run) cancelled() error {
	cause := context.Cause(r.ctx)
	if errors.Is(cause, ErrStopped) {
		return ErrStopped
	}
	reason := reasonOf(cause)
	r.answerAll("cancelled: "+reason, &CancelledError{Reason: reason, Cause: cause})
	return &CancelledError{Reason: reason, Cause: cause, History: r.snapshot()}
}

// hookFailed cancels the run with the error a hook returned, logs it, and
// returns the cancellation error (whose reason is the first one given).
func (r *run) hookFailed(hook string, err error) error {
	r.hookCancel(hook, err)
	return r.cancelled()
}

// hookCancel cancels the run with the error a hook returned, logs it, and
// returns it; the caller unwinds to where the cancel is handled.
func (r *run) hookCancel(hook string, err error) error {
	r.cancel(err)
	var pe *HookPanicError
	if errors.As(err, &pe) {
		r.logf(slog.LevelError, "agentloop: a hook panicked; the run is cancelled", "hook", hook,
			"panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
	} else {
		r.logf(slog.LevelInfo, "agentloop: a hook cancelled the run", "hook", hook, "err", err)
	}
	return err
}

// logf logs to the agent's logger, if any.
func (r *run) logf(level slog.Level, msg string, args ...any) {
	if r.log != nil {
		r.log.Log(r.ctx, level, msg, append(args, "turn", r.turns)...)
	}
}

// answerAll gives every unanswered call of the last assistant message an
// error result with the given content and Err.
func (r *run) answerAll(content string, err error) {
	calls := r.history.Unanswered()
	if len(calls) == 0 {
		return
	}
	parts := make([]Part, len(calls))
	for i, c := range calls {
		parts[i] = Part{Type: PartToolResult, ToolResult: &ToolResult{CallID: c.ID, Name: c.Name, Content: content, IsError: true, Err: err}}
	}
	r.history = append(r.history, Message{Role: RoleTool, Parts: parts})
}

// turnResult is what one model call produced.
type turnResult struct {
	msg     Message
	finish  FinishReason
	offered map[string]*Tool // the tools offered on the call
	partial bool             // tool-call deltas were streamed
}

// request builds the request of the next model call.
func (r *run) request(noTools bool) *Request {
	req := &Request{Turn: r.turns, System: r.system, Messages: r.snapshot(), Settings: r.settings, Agent: r.speakerName()}
	if !noTools {
		req.Tools = make([]ToolDef, len(r.toolOrder))
		for i, t := range r.toolOrder {
			req.Tools[i] = t.Def()
		}
	}
	return req
}

// modelTurn makes one model call and appends its assistant message.
func (r *run) modelTurn(noTools bool) (turnResult, error) {
	r.turns++
	req := r.request(noTools)
	end := TurnEnd{Turn: r.turns}
	yielded := false // TurnStart was yielded: TurnEnd must follow
	// fail ends a turn that did not complete with the run's error err.
	fail := func(err error) (turnResult, error) {
		end.FinishReason, end.Err, end.History = FinishError, err, r.snapshot()
		if h := r.hooks; h != nil && h.OnTurnEnd != nil {
			if herr := h.OnTurnEnd(r.ctx, end); herr != nil {
				r.logf(slog.LevelWarn, "agentloop: OnTurnEnd failed on a turn that had failed already", "err", herr)
			}
		}
		if yielded && !errors.Is(err, ErrStopped) {
			if e := r.emit(end); e != nil {
				return turnResult{}, e
			}
		}
		return turnResult{}, err
	}
	filtered, err := r.handoffInput(req)
	if err != nil {
		return fail(&TurnError{Turn: r.turns, Err: err, History: r.snapshot()})
	}
	if h := r.hooks; h != nil && h.BeforeModelCall != nil {
		if !filtered {
			req.Messages = r.hookCopy() // the hook may edit them for this call only
		}
		if err := h.BeforeModelCall(r.ctx, req); err != nil {
			return fail(r.hookFailed("BeforeModelCall", err))
		}
	}
	offered := make(map[string]*Tool, len(req.Tools))
	for _, d := range req.Tools {
		if t, ok := r.tools[d.Name]; ok {
			offered[d.Name] = t
		}
	}
	if r.stopped() {
		return fail(r.cancelled())
	}
	if err := r.emit(TurnStart{Turn: r.turns, Agent: r.speakerName()}); err != nil {
		return fail(err)
	}
	yielded = true
	if r.stopped() { // the consumer cancelled on TurnStart
		return fail(r.cancelled())
	}

	asm := assembler{run: r, offered: offered, prefix: "call_" + strconv.Itoa(r.assistants) + "_"}
	if h := r.hooks; h != nil {
		asm.onText = h.OnTextDelta
	}
	defer asm.release()
	streamErr := r.modelCall(req, &asm)
	if errors.Is(streamErr, ErrStopped) {
		return fail(ErrStopped)
	}
	asm.flushAll()
	msg := Message{Role: RoleAssistant, Agent: r.speakerName(), Parts: asm.parts}
	end.Usage, end.Message = asm.usage, msg
	r.usage = r.usage.Add(asm.usage)
	r.own = r.own.Add(asm.usage)
	if streamErr != nil || r.stopped() {
		// Keep what the model produced; answer its calls.
		if len(msg.Parts) > 0 {
			r.appendAssistant(msg)
		}
		if r.stopped() {
			return fail(r.cancelled())
		}
		r.answerAll("not run: the model call failed", ErrNotRun)
		return fail(&TurnError{Turn: r.turns, Err: streamErr, History: r.snapshot()})
	}
	calls := msg.ToolCalls()
	finish := asm.finish
	switch {
	case finish == "" && len(calls) > 0, finish == FinishStop && len(calls) > 0:
		finish = FinishToolCalls
	case finish == "":
		finish = FinishStop
	}
	for _, c := range calls {
		if t := offered[c.Name]; t != nil && t.NeedsApproval {
			msg.Parts = append(msg.Parts, Part{Type: PartApprovalRequest, Approval: &Approval{CallID: c.ID, ID: "approval_" + c.ID}})
		}
	}
	r.appendAssistant(msg)
	end.FinishReason, end.Message, end.History = finish, msg, r.snapshot()
	if h := r.hooks; h != nil && h.OnTurnEnd != nil {
		if err := h.OnTurnEnd(r.ctx, end); err != nil {
			// The turn is complete; the hook cancels the run after it.
			end.Err = r.hookFailed("OnTurnEnd", err)
			if e := r.emit(end); e != nil {
				return turnResult{}, e
			}
			return turnResult{}, end.Err
		}
	}
	if err := r.emit(end); err != nil {
		return turnResult{}, err
	}
	return turnResult{msg: msg, finish: finish, offered: offered, partial: asm.sawDeltas}, nil
}

// speakerName is the name assistant messages record: the agent's, in runs
// with handoffs; "" otherwise.
func (r *run) speakerName() string {
	if r.graph == nil {
		return ""
	}
	return r.agent.Name
}

func (r *run) appendAssistant(msg Message) {
	r.history = append(r.history, msg)
	r.assistants++
}

// hookCopy returns a deep copy of the history for BeforeModelCall. It
// reuses the copy it handed out on the previous turn: a message the hook
// left as it was is kept, one it changed is copied again, and new messages
// are copied, so a turn copies what the hook changed, not the whole
// history (a comparison pass remains).
func (r *run) hookCopy() History {
	c := r.handed
	for i := range c {
		if !c[i].equal(r.history[i]) {
			c[i] = r.history[i].Clone()
		}
	}
	for _, m := range r.history[len(c):] {
		c = append(c, m.Clone())
	}
	r.handed = c
	return c[:len(c):len(c)]
}
