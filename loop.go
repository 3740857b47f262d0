package agentloop

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
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
	// ToolConcurrency bounds how many tool calls of one turn run at once;
	// 0 means DefaultToolConcurrency, 1 runs them one after another.
	ToolConcurrency int
	// ToolTimeout bounds each tool call whose Tool.Timeout is zero; 0 means
	// no limit.
	ToolTimeout time.Duration
}

// Option changes one run of [Agent.Stream].
type Option func(*runOptions)

type runOptions struct {
	tools    []*Tool
	system   *string
	hooks    []*Hooks
	settings *Settings
}

// WithTools adds tools to this run (client tools from a web request, or
// tools for one user). A tool with the name of an agent tool replaces it.
func WithTools(tools ...*Tool) Option {
	return func(o *runOptions) { o.tools = append(o.tools, tools...) }
}

// WithSystem replaces the agent's system prompt for this run.
func WithSystem(system string) Option {
	return func(o *runOptions) { o.system = &system }
}

// WithHooks adds hooks to this run; they are called after the agent's.
func WithHooks(h *Hooks) Option {
	return func(o *runOptions) { o.hooks = append(o.hooks, h) }
}

// WithSettings replaces the agent's sampling settings for this run.
func WithSettings(s Settings) Option {
	return func(o *runOptions) { o.settings = &s }
}

// errStopped is the cause used when the consumer stops ranging.
var errStopped = errors.New("agentloop: consumer stopped ranging over the run")

// Stream starts a run over history and returns its items.
//
// The run makes model calls ("turns") until the model answers without
// calling tools, then yields a [Final]. When the model calls client tools or
// tools that need approval, the run runs the turn's other tools and ends
// with a [Pending]; append the results or decisions to Pending.History and
// call Stream again to resume. A failed run yields one (nil, err) pair last:
// a [*CancelledError], [*TurnLimitError] or [*TurnError] (which carry the
// history), or an error wrapping [ErrInvalidHistory] for a malformed history.
//
// history is not modified. If the consumer stops ranging, the run cancels its
// model call and tools and returns once every goroutine it started has
// ended. Tools must therefore return once their context is done.
func (a *Agent) Stream(ctx context.Context, history History, opts ...Option) iter.Seq2[Item, error] {
	return func(yield func(Item, error) bool) {
		r, err := a.newRun(ctx, history, opts, yield)
		if err != nil {
			yield(nil, err)
			return
		}
		defer r.close()
		last, err := r.run()
		switch {
		case errors.Is(err, errStopped):
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
	cancel context.CancelCauseFunc
	yield  func(Item, error) bool
	wg     sync.WaitGroup

	hooks       *Hooks
	tools       map[string]*Tool
	toolOrder   []*Tool
	system      string
	settings    Settings
	maxTurns    int
	concurrency int

	history History
	usage   Usage
	turns   int
}

func (a *Agent) newRun(ctx context.Context, history History, opts []Option, yield func(Item, error) bool) (*run, error) {
	if a.Model == nil {
		return nil, errors.New("agentloop: Agent.Model is nil")
	}
	var o runOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	r := &run{
		agent:       a,
		yield:       yield,
		hooks:       ComposeHooks(append([]*Hooks{a.Hooks}, o.hooks...)...),
		tools:       make(map[string]*Tool),
		system:      a.System,
		settings:    a.Settings,
		maxTurns:    a.MaxTurns,
		concurrency: a.ToolConcurrency,
		history:     history.Clone(),
	}
	if o.system != nil {
		r.system = *o.system
	}
	if o.settings != nil {
		r.settings = *o.settings
	}
	if r.maxTurns <= 0 {
		r.maxTurns = DefaultMaxTurns
	}
	if r.concurrency <= 0 {
		r.concurrency = DefaultToolConcurrency
	}
	if err := r.addTools(a.Tools, false); err != nil {
		return nil, err
	}
	if err := r.addTools(o.tools, true); err != nil {
		return nil, err
	}
	if err := r.history.Validate(); err != nil {
		return nil, err
	}
	r.ctx, r.cancel = context.WithCancelCause(ctx)
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
	r.cancel(errStopped)
	r.wg.Wait()
}

func (r *run) emit(it Item) error {
	if !r.yield(it, nil) {
		r.cancel(errStopped)
		return errStopped
	}
	return nil
}

func (r *run) run() (Item, error) {
	r.history = answerDangling(r.history)
	if calls := r.history.Unanswered(); len(calls) > 0 {
		p, err := r.handleCalls(calls, r.tools, approvalsAfterLastAssistant(r.history))
		if err != nil || p != nil {
			return p, err
		}
	}
	for {
		if r.ctx.Err() != nil {
			return nil, r.cancelled()
		}
		last := false
		if r.turns >= r.maxTurns {
			if !r.agent.AnswerAtTurnLimit {
				return nil, &TurnLimitError{Limit: r.maxTurns, History: r.history}
			}
			last = true
		}
		tr, err := r.modelTurn(last)
		if err != nil {
			return nil, err
		}
		msg := tr.msg
		calls := msg.ToolCalls()
		switch {
		case tr.finish == FinishLength && (len(calls) > 0 || tr.partial):
			r.answerAll("not run: the model's output was cut off by its length limit")
			return nil, &TurnError{Turn: r.turns, Err: ErrTruncated, History: r.history}
		case len(calls) == 0:
			return Final{Text: msg.Text(), Usage: r.usage, Turns: r.turns, History: r.history}, nil
		case last:
			r.answerAll("not run: the turn limit was reached")
			return nil, &TurnLimitError{Limit: r.maxTurns, History: r.history}
		}
		p, err := r.handleCalls(calls, tr.offered, nil)
		if err != nil || p != nil {
			return p, err
		}
	}
}

// cancelled answers every unanswered call and returns the run's
// cancellation error.
func (r *run) cancelled() error {
	cause := context.Cause(r.ctx)
	reason := reasonOf(cause)
	r.answerAll("cancelled: " + reason)
	return &CancelledError{Reason: reason, Cause: cause, History: r.history}
}

// hookFailed cancels the run with a hook's error and returns the
// cancellation error (whose reason is the first one given).
func (r *run) hookFailed(err error) error {
	r.cancel(err)
	return r.cancelled()
}

// answerAll gives every unanswered call of the last assistant message an
// error result with the given content.
func (r *run) answerAll(content string) {
	calls := r.history.Unanswered()
	if len(calls) == 0 {
		return
	}
	parts := make([]Part, len(calls))
	for i, c := range calls {
		parts[i] = Part{Type: PartToolResult, ToolResult: &ToolResult{CallID: c.ID, Name: c.Name, Content: content, IsError: true}}
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

// modelTurn makes one model call and appends its assistant message.
func (r *run) modelTurn(noTools bool) (turnResult, error) {
	r.turns++
	req := &Request{Turn: r.turns, System: r.system, Messages: r.history, Settings: r.settings}
	if !noTools {
		for _, t := range r.toolOrder {
			req.Tools = append(req.Tools, t.Def())
		}
	}
	if h := r.hooks; h != nil && h.BeforeModelCall != nil {
		req.Messages = r.history.Clone() // the hook may edit them for this call only
		if err := h.BeforeModelCall(r.ctx, req); err != nil {
			return turnResult{}, r.hookFailed(err)
		}
	}
	offered := make(map[string]*Tool, len(req.Tools))
	for _, d := range req.Tools {
		if t, ok := r.tools[d.Name]; ok {
			offered[d.Name] = t
		}
	}
	if err := r.emit(TurnStart{Turn: r.turns}); err != nil {
		return turnResult{}, err
	}

	asm := assembler{run: r, offered: offered, idPrefix: fmt.Sprintf("call_%d_", countRole(r.history, RoleAssistant))}
	var (
		usage     Usage
		finish    FinishReason
		streamErr error
	)
	for chunk, err := range r.agent.Model.Stream(r.ctx, req) {
		if err != nil {
			streamErr = err
			break
		}
		switch c := chunk.(type) {
		case Usage:
			usage = usage.Add(c)
		case Finish:
			finish = c.Reason
		default:
			if err := asm.add(chunk); err != nil {
				if errors.Is(err, errStopped) {
					return turnResult{}, err
				}
				streamErr = err
			}
		}
		if streamErr != nil {
			break
		}
	}
	if streamErr == nil {
		streamErr = asm.closeBlocks()
	}
	if errors.Is(streamErr, errStopped) {
		return turnResult{}, streamErr
	}
	asm.flushAll()
	msg := Message{Role: RoleAssistant, Parts: asm.parts}
	r.usage = r.usage.Add(usage)
	if streamErr != nil || r.ctx.Err() != nil {
		// Keep what the model produced; answer its calls in the error path.
		if len(msg.Parts) > 0 {
			r.history = append(r.history, msg)
		}
		if r.ctx.Err() != nil {
			return turnResult{}, r.cancelled()
		}
		r.answerAll("not run: the model call failed")
		return turnResult{}, &TurnError{Turn: r.turns, Err: streamErr, History: r.history}
	}
	calls := msg.ToolCalls()
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
	r.history = append(r.history, msg)
	end := TurnEnd{Turn: r.turns, Usage: usage, FinishReason: finish, Message: msg}
	if h := r.hooks; h != nil && h.OnTurnEnd != nil {
		if err := h.OnTurnEnd(r.ctx, end); err != nil {
			return turnResult{}, r.hookFailed(err)
		}
	}
	if err := r.emit(end); err != nil {
		return turnResult{}, err
	}
	return turnResult{msg: msg, finish: finish, offered: offered, partial: asm.sawDeltas}, nil
}

// assembler turns a model call's chunks into the parts of one assistant
// message, in the order produced, and yields the matching items.
type assembler struct {
	run       *run
	offered   map[string]*Tool
	idPrefix  string
	parts     []Part
	text      strings.Builder
	reasoning strings.Builder
	open      PartType // PartText, PartReasoning or ""
	calls     int
	deltaIDs  map[int]string
	sawDeltas bool // tool-call deltas were seen
}

func (a *assembler) add(chunk Chunk) error {
	r := a.run
	h := r.hooks
	switch c := chunk.(type) {
	case TextDelta:
		if c.Text == "" {
			return nil
		}
		if a.open != PartText {
			if err := a.closeBlocks(); err != nil {
				return err
			}
			a.open = PartText
		}
		a.text.WriteString(c.Text)
		if h != nil && h.OnTextDelta != nil {
			if err := h.OnTextDelta(r.ctx, c.Text); err != nil {
				r.cancel(err)
				return err
			}
		}
		return r.emit(chunk.(Item))
	case ReasoningDelta:
		if c.Text == "" {
			return nil
		}
		if a.open != PartReasoning {
			if err := a.closeBlocks(); err != nil {
				return err
			}
			a.open = PartReasoning
		}
		a.reasoning.WriteString(c.Text)
		if h != nil && h.OnReasoningDelta != nil {
			if err := h.OnReasoningDelta(r.ctx, c.Text); err != nil {
				r.cancel(err)
				return err
			}
		}
		return r.emit(chunk.(Item))
	case ReasoningEnd:
		if a.open == PartText {
			a.flushText()
		}
		a.parts = append(a.parts, Part{Type: PartReasoning, Text: a.reasoning.String(), Signature: c.Signature, Redacted: c.Redacted})
		a.reasoning.Reset()
		a.open = ""
		return r.emit(c)
	case ToolCallDelta:
		if a.open != "" {
			if err := a.closeBlocks(); err != nil {
				return err
			}
		}
		a.sawDeltas = true
		if c.ID == "" {
			c.ID = a.deltaID(c.Index)
		} else {
			if a.deltaIDs == nil {
				a.deltaIDs = make(map[int]string)
			}
			a.deltaIDs[c.Index] = c.ID
		}
		if h != nil && h.OnToolCallDelta != nil {
			if err := h.OnToolCallDelta(r.ctx, c); err != nil {
				r.cancel(err)
				return err
			}
		}
		return r.emit(c)
	case ToolCall:
		if err := a.closeBlocks(); err != nil {
			return err
		}
		if c.ID == "" {
			c.ID = a.deltaID(a.calls)
		}
		a.calls++
		a.parts = append(a.parts, Part{Type: PartToolCall, ToolCall: &c})
		t := a.offered[c.Name]
		return r.emit(ToolCallReady{Call: c, Client: t != nil && t.Client(), NeedsApproval: t != nil && t.NeedsApproval})
	}
	return fmt.Errorf("agentloop: model yielded an unknown chunk type %T", chunk)
}

// deltaID returns the id of the call at index: the one its deltas carried,
// or a deterministic one.
func (a *assembler) deltaID(index int) string {
	if id, ok := a.deltaIDs[index]; ok {
		return id
	}
	if a.deltaIDs == nil {
		a.deltaIDs = make(map[int]string)
	}
	id := a.idPrefix + fmt.Sprint(index)
	a.deltaIDs[index] = id
	return id
}

// flushAll ends open blocks without yielding anything (the turn failed).
func (a *assembler) flushAll() {
	switch a.open {
	case PartText:
		a.flushText()
	case PartReasoning:
		a.parts = append(a.parts, Part{Type: PartReasoning, Text: a.reasoning.String()})
		a.open = ""
	}
}

func (a *assembler) flushText() {
	a.parts = append(a.parts, Part{Type: PartText, Text: a.text.String()})
	a.text.Reset()
	a.open = ""
}

// closeBlocks ends an open text or reasoning block, yielding a ReasoningEnd
// for a reasoning block the model did not close.
func (a *assembler) closeBlocks() error {
	switch a.open {
	case PartText:
		a.flushText()
	case PartReasoning:
		return a.add(ReasoningEnd{})
	}
	return nil
}

func countRole(h History, role Role) int {
	n := 0
	for _, m := range h {
		if m.Role == role {
			n++
		}
	}
	return n
}

// job is one tool call of a turn, on its way to a result.
type job struct {
	call      ToolCall
	tool      *Tool    // nil: unknown or not offered
	available []string // names of the tools the call could use
	preset    *ToolResult
	denied    bool
	pending   bool // left for the caller
}

// handleCalls runs the server tools among calls, concurrently, yields their
// results in call order, and appends them to the history. It returns a
// Pending item when some calls are left for the caller.
func (r *run) handleCalls(calls []ToolCall, tools map[string]*Tool, decisions map[string]Approval) (Item, error) {
	jobs := make([]job, len(calls))
	var pending Pending
	var available []string
	for i, c := range calls {
		j := job{call: c, tool: tools[c.Name]}
		if j.tool == nil {
			if available == nil {
				available = toolNames(tools)
			}
			j.available = available
		}
		d, decided := decisions[c.ID]
		switch {
		case j.tool == nil:
		case decided && !d.Approved:
			content := "The user denied this tool call."
			if d.Reason != "" {
				content += " Reason: " + d.Reason
			}
			j.preset = &ToolResult{CallID: c.ID, Name: c.Name, Content: content, IsError: true}
			j.denied = true
		case j.tool.NeedsApproval && !decided:
			j.pending = true
			pending.Approvals = append(pending.Approvals, c)
		case j.tool.Client():
			if _, err := j.tool.checkArgs(c.Args); err != nil {
				j.preset = &ToolResult{CallID: c.ID, Name: c.Name, Content: err.Error(), IsError: true}
			} else {
				j.pending = true
				pending.ClientCalls = append(pending.ClientCalls, c)
			}
		}
		jobs[i] = j
	}

	results := make([]ToolResult, len(jobs))
	done := make([]chan struct{}, len(jobs))
	sem := make(chan struct{}, r.concurrency)
	for i := range jobs {
		done[i] = make(chan struct{})
		j := &jobs[i]
		if j.pending {
			close(done[i])
			continue
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer close(done[i])
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-r.ctx.Done():
				results[i] = r.cancelledResult(j.call)
				return
			}
			results[i] = r.execute(j)
		}()
	}

	var parts []Part
	for i := range jobs {
		<-done[i]
		if jobs[i].pending {
			continue
		}
		parts = append(parts, Part{Type: PartToolResult, ToolResult: &results[i]})
		if r.ctx.Err() != nil {
			continue
		}
		if err := r.emit(ToolResultReady{Result: results[i], Denied: jobs[i].denied}); err != nil {
			return nil, err
		}
	}
	if len(parts) > 0 {
		r.history = append(r.history, Message{Role: RoleTool, Parts: parts})
	}
	if r.ctx.Err() != nil {
		return nil, r.cancelled()
	}
	if len(pending.ClientCalls) == 0 && len(pending.Approvals) == 0 {
		return nil, nil
	}
	pending.History = r.history
	pending.Usage = r.usage
	return pending, nil
}

func (r *run) cancelledResult(c ToolCall) ToolResult {
	return ToolResult{CallID: c.ID, Name: c.Name, Content: "cancelled: " + reasonOf(context.Cause(r.ctx)), IsError: true}
}

// execute produces the result of one server-side call: hooks, argument
// checks, then the tool itself.
func (r *run) execute(j *job) ToolResult {
	call := j.call
	if r.ctx.Err() != nil {
		return r.cancelledResult(call)
	}
	if j.denied {
		return *j.preset
	}
	h := r.hooks
	var res *ToolResult
	if h != nil && h.BeforeToolCall != nil {
		c := call
		sub, err := h.BeforeToolCall(r.ctx, &c)
		if err != nil {
			r.cancel(err)
			return r.cancelledResult(call)
		}
		if sub != nil {
			s := *sub
			s.CallID, s.Name = call.ID, call.Name
			res = &s
		}
		call.Args = c.Args
	}
	if res == nil {
		out := r.runTool(j.tool, call, j.available)
		res = &out
	}
	if r.ctx.Err() != nil && res.IsError {
		return r.cancelledResult(call)
	}
	if h != nil && h.AfterToolCall != nil {
		if err := h.AfterToolCall(r.ctx, call, res); err != nil {
			r.cancel(err)
		}
	}
	return *res
}

func (r *run) runTool(t *Tool, call ToolCall, available []string) ToolResult {
	result := ToolResult{CallID: call.ID, Name: call.Name}
	fail := func(format string, args ...any) ToolResult {
		result.Content = fmt.Sprintf(format, args...)
		result.IsError = true
		return result
	}
	if t == nil {
		if len(available) == 0 {
			return fail("unknown tool %q; no tools are available now, answer in text", call.Name)
		}
		return fail("unknown tool %q; the available tools are: %s", call.Name, strings.Join(available, ", "))
	}
	args, err := t.checkArgs(call.Args)
	if err != nil {
		return fail("%v", err)
	}
	ctx := r.ctx
	timeout := t.Timeout
	if timeout == 0 {
		timeout = r.agent.ToolTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	type outcome struct {
		content string
		err     error
	}
	ch := make(chan outcome, 1)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			if p := recover(); p != nil {
				ch <- outcome{err: fmt.Errorf("the tool crashed (panic: %v)", p)}
			}
		}()
		content, err := t.Func(ctx, args)
		ch <- outcome{content, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return fail("error: %v", o.err)
		}
		result.Content = o.content
		return result
	case <-ctx.Done():
		if r.ctx.Err() == nil {
			return fail("error: the tool did not finish within %v", timeout)
		}
		return r.cancelledResult(call)
	}
}

func toolNames(tools map[string]*Tool) []string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// approvalsAfterLastAssistant returns the approval decisions that follow the
// last assistant message, by call id.
func approvalsAfterLastAssistant(h History) map[string]Approval {
	i := h.lastAssistant()
	if i < 0 {
		return nil
	}
	out := make(map[string]Approval)
	for _, m := range h[i+1:] {
		for _, p := range m.Parts {
			if p.Type == PartApprovalResponse && p.Approval != nil {
				out[p.Approval.CallID] = *p.Approval
			}
		}
	}
	return out
}

// answerDangling returns h with an error result for every tool call that a
// later user or assistant message left behind unanswered (a user who sent a
// new message instead of answering a client tool), so that every call the
// model sees has a result. Calls that only tool messages follow are left
// alone: the run resumes them.
func answerDangling(h History) History {
	var out History
	for i := 0; i < len(h); i++ {
		out = append(out, h[i])
		calls := h[i].ToolCalls()
		if h[i].Role != RoleAssistant || len(calls) == 0 {
			continue
		}
		j := i + 1
		answered := make(map[string]bool)
		for ; j < len(h) && h[j].Role == RoleTool; j++ {
			for _, p := range h[j].Parts {
				if p.Type == PartToolResult && p.ToolResult != nil {
					answered[p.ToolResult.CallID] = true
				}
			}
		}
		if j == len(h) {
			continue // the end of the history: pending, not dangling
		}
		var parts []Part
		for _, c := range calls {
			if !answered[c.ID] {
				parts = append(parts, Part{Type: PartToolResult, ToolResult: &ToolResult{
					CallID: c.ID, Name: c.Name, IsError: true,
					Content: "no result: the conversation went on before this call was answered",
				}})
			}
		}
		if parts == nil {
			continue
		}
		out = append(out, h[i+1:j]...)
		out = append(out, Message{Role: RoleTool, Parts: parts})
		i = j - 1
	}
	return out
}
