package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// job is one tool call of a turn, on its way to a result.
type job struct {
	index     int // in the turn's calls
	call      ToolCall
	tool      *Tool    // nil: unknown or not offered
	available []string // names of the tools the call could use, when tool is nil
	preset    *ToolResult
	denied    bool
	pending   bool // left for the caller

	// Set while the job runs, on the goroutine that runs it.
	sink      progressSink // what ReportProgress finds in the func's ctx
	inFunc    bool         // the tool's func runs on the job's goroutine now
	handedOff bool         // a func with a timeout frees the slot when it returns
}

// handleCalls runs the server tools among calls, yields their progress and
// their results in call order, and appends the results to the history. It
// returns a Pending item when some calls are left for the caller.
func (r *run) handleCalls(calls []ToolCall, tools map[string]*Tool, decisions map[string]Approval) (Item, error) {
	jobs := make([]job, len(calls))
	var pending Pending
	var available []string
	for i, c := range calls {
		j := job{index: i, call: c, tool: tools[c.Name]}
		if j.tool == nil {
			if available == nil {
				available = slices.Sorted(maps.Keys(tools))
			}
			j.available = available
		}
		d, decided := decisions[c.ID]
		switch {
		case j.tool == nil:
		case decided && !d.Approved:
			j.preset = &ToolResult{CallID: c.ID, Name: c.Name, Content: DeniedContent(d.Reason), IsError: true, Err: ErrDenied}
			j.denied = true
		case j.tool.NeedsApproval && !decided:
			j.pending = true
			pending.Approvals = append(pending.Approvals, c)
		case j.tool.RunsOnClient():
			if _, err := j.tool.checkArgs(c.Args); err != nil {
				res := errorResult(c, err)
				j.preset = &res
			} else {
				j.pending = true
				pending.ClientCalls = append(pending.ClientCalls, c)
			}
		}
		jobs[i] = j
	}

	if r.box == nil {
		for i := range jobs {
			if jobs[i].tool != nil && jobs[i].tool.nests {
				r.box = newNestedBox()
				if r.effects == nil {
					// An engine runs a call inside its step: not on the
					// ranging goroutine.
					r.drives = make(chan *driveReq)
				}
				break
			}
		}
	}
	results := make([]ToolResult, len(jobs))
	done := make([]chan struct{}, len(jobs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	r.turnDone = done
	defer r.releaseHeld()
	r.dispatch(jobs, results, done)

	if r.effects != nil {
		// An engine's steps run outside the run's WaitGroup: the run
		// returns only once each has finished (after a stop, promptly).
		// Meanwhile it drops what they hand over, so that none waits for
		// the run to take it (flushNested; a consumer that panicked has
		// not stopped the run yet).
		defer func() {
			for _, d := range done {
				r.awaitDropping(d)
			}
		}()
	}
	var parts []Part
	for i := range jobs {
		if err := r.await(i, done[i]); err != nil {
			return nil, err
		}
		if jobs[i].pending {
			continue
		}
		var sp *subPending
		if results[i].Err != nil && errors.As(results[i].Err, &sp) && !r.stopped() {
			// A sub-agent paused: so does this run, keeping its state.
			sr := sp.run
			parts = append(parts, Part{Type: PartSubRun, SubRun: &sr})
			pending.ClientCalls = append(pending.ClientCalls, prefixCalls(sr.CallID, sp.pending.ClientCalls)...)
			pending.Approvals = append(pending.Approvals, prefixCalls(sr.CallID, sp.pending.Approvals)...)
			continue
		}
		parts = append(parts, Part{Type: PartToolResult, ToolResult: &results[i]})
		if r.stopped() {
			continue
		}
		if err := r.emit(ToolResultReady{Result: results[i], Denied: jobs[i].denied}); err != nil {
			return nil, err
		}
	}
	if len(parts) > 0 {
		r.history = append(r.history, Message{Role: RoleTool, Parts: parts})
	}
	if r.stopped() {
		return nil, r.cancelled()
	}
	if len(pending.ClientCalls) == 0 && len(pending.Approvals) == 0 {
		return nil, nil
	}
	pending.History = r.snapshot()
	pending.Usage = r.usage
	pending.AgentUsage = r.agentUsage()
	return pending, nil
}

// await waits for done, the end of the job at index i, yielding the
// progress that tools report meanwhile. Progress of a job before i, whose
// result was yielded already, is dropped.
func (r *run) await(i int, done <-chan struct{}) error {
	var wake <-chan struct{}
	if r.box != nil {
		wake = r.box.wake
	}
	if d := r.held; d != nil && d.job == i {
		r.held = nil
		if err := r.drive(d); err != nil {
			return err
		}
	}
	for {
		select {
		case d := <-r.drives:
			if err := r.onDrive(i, d); err != nil {
				return err
			}
		case <-done:
			// Items the job handed over before it ended come before its result.
			return r.drainNested(i)
		case <-wake:
			if err := r.drainNested(i); err != nil {
				return err
			}
		case p := <-r.progress:
			if r.stopped() || p.job < i {
				continue
			}
			if p.item != nil {
				r.countNested(p.item)
				if err := r.emit(p.item); err != nil {
					return err
				}
				continue
			}
			if err := r.emit(p.ToolProgress); err != nil {
				return err
			}
		}
	}
}

// awaitDropping waits for done, emptying the run's box of Nested items
// meanwhile without yielding them.
func (r *run) awaitDropping(done <-chan struct{}) {
	if r.box == nil {
		<-done
		return
	}
	for {
		select {
		case <-done:
			return
		case <-r.box.wake:
			for _, p := range r.box.take() {
				if p.mark != nil {
					close(p.mark)
				}
			}
		}
	}
}

// dispatch settles the jobs that run nothing (left for the caller, or
// answered already) and starts workers for the others. Workers take one of
// the run's ToolConcurrency slots, then the next job in call order, so jobs
// start in call order and a freed slot goes to the earliest waiting one;
// done[i] is closed once results[i] is set. A worker runs many jobs, so a
// turn of many calls starts a few goroutines, not one per call.
func (r *run) dispatch(jobs []job, results []ToolResult, done []chan struct{}) {
	var runnable []int
	for i := range jobs {
		switch j := &jobs[i]; {
		case j.pending:
			close(done[i])
		case j.preset != nil:
			results[i] = *j.preset
			close(done[i])
		default:
			runnable = append(runnable, i)
		}
	}
	if len(runnable) == 0 {
		return
	}
	if r.effects != nil {
		r.dispatchEffects(jobs, runnable, results, done)
		return
	}
	q := &jobQueue{jobs: jobs, results: results, done: done, order: runnable}
	for range min(cap(r.slots), len(runnable)) {
		r.wg.Add(1)
		go r.work(q)
	}
}

// jobQueue hands out a turn's runnable jobs in call order.
type jobQueue struct {
	jobs    []job
	results []ToolResult
	done    []chan struct{}
	order   []int // indices of the jobs to run
	next    atomic.Int64
}

// take returns the index of the next job, or false when none is left.
func (q *jobQueue) take() (int, bool) {
	k := q.next.Add(1) - 1
	if k >= int64(len(q.order)) {
		return 0, false
	}
	return q.order[k], true
}

// work runs jobs from q until none is left. A job whose tool or hook calls
// runtime.Goexit ends the worker's goroutine; a new worker takes over.
func (r *run) work(q *jobQueue) {
	defer r.wg.Done()
	exited := true
	defer func() {
		if exited { // runtime.Goexit in a job: keep the queue moving
			r.wg.Add(1)
			go r.work(q)
		}
	}()
	for {
		select {
		case r.slots <- struct{}{}:
		case <-r.done:
			// Cancelled: no job starts; the rest get cancelled results.
			for i, ok := q.take(); ok; i, ok = q.take() {
				q.results[i] = r.cancelledResult(q.jobs[i].call)
				close(q.done[i])
			}
			exited = false
			return
		}
		i, ok := q.take()
		if !ok {
			<-r.slots
			exited = false
			return
		}
		r.runJob(&q.jobs[i], &q.results[i], q.done[i])
	}
}

// runJob produces the result of a job that holds a slot, and closes done.
func (r *run) runJob(j *job, res *ToolResult, done chan<- struct{}) {
	defer close(done)
	completed := false
	defer func() {
		if completed {
			return
		}
		// The goroutine ends without a result: runtime.Goexit.
		if j.inFunc { // in the tool's func, which ran on this goroutine
			r.logf(slog.LevelError, "agentloop: a tool called runtime.Goexit", "tool", j.call.Name, "call", j.call.ID)
			*res = errorResultErr(j.call, "the tool stopped without returning a result (runtime.Goexit)", errGoexit)
			r.afterToolCall(j.call, res)
			return
		}
		const hook = "BeforeToolCall or AfterToolCall"
		r.hookCancel(hook, &HookPanicError{Hook: hook, Value: "runtime.Goexit", Stack: debug.Stack()})
		*res = r.cancelledResult(j.call)
	}()
	*res = r.execute(j)
	completed = true
}

// execute produces the result of one server-side call: hooks, argument
// checks, then the tool itself. It frees the call's slot when it returns,
// unless a tool func that timed out runs on and frees it when it returns.
func (r *run) execute(j *job) ToolResult {
	call := j.call
	defer func() {
		if !j.handedOff {
			<-r.slots
		}
	}()
	if r.stopped() {
		return r.cancelledResult(call) // no hook and no tool after a cancel
	}
	h := r.hooks
	var res ToolResult
	substituted := false
	if h != nil && h.BeforeToolCall != nil {
		c := call
		sub, err := r.beforeToolCall(&c)
		if err != nil {
			r.hookCancel("BeforeToolCall", err)
			res = r.cancelledResult(call)
			r.afterToolCall(call, &res)
			return res
		}
		if sub != nil {
			res = *sub
			res.CallID, res.Name = call.ID, call.Name
			substituted = true
		}
		call.Args = c.Args
	}
	if !substituted {
		res = r.runTool(j, call)
	}
	r.afterToolCall(call, &res)
	return res
}

// beforeToolCall calls the BeforeToolCall hook, turning a panic into an
// error.
func (r *run) beforeToolCall(call *ToolCall) (res *ToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &HookPanicError{Hook: "BeforeToolCall", Value: p, Stack: debug.Stack()}
		}
	}()
	return r.hooks.BeforeToolCall(r.ctx, call)
}

// toolContext calls the ToolContext hook, turning a panic into an error.
func (r *run) toolContext(ctx context.Context, call ToolCall) (next context.Context, err error) {
	defer func() {
		if p := recover(); p != nil {
			next, err = nil, &HookPanicError{Hook: "ToolContext", Value: p, Stack: debug.Stack()}
		}
	}()
	if next = r.hooks.ToolContext(ctx, call); next == nil {
		next = ctx
	}
	return next, nil
}

// afterToolCall calls the AfterToolCall hook, if any; an error or a panic
// cancels the run (the result stands).
func (r *run) afterToolCall(call ToolCall, res *ToolResult) {
	h := r.hooks
	if h == nil || h.AfterToolCall == nil {
		return
	}
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = &HookPanicError{Hook: "AfterToolCall", Value: p, Stack: debug.Stack()}
			}
		}()
		return h.AfterToolCall(r.ctx, call, res)
	}()
	if err != nil {
		r.hookCancel("AfterToolCall", err)
	}
}

// Tool func outcomes, as runTool and the goroutine that runs a func with
// a timeout agree on them.
const (
	funcRunning int32 = iota
	funcReturned
	funcAbandoned // runTool gave up waiting (timeout); the result is dropped
)

type outcome struct {
	content string
	err     error
}

// runTool checks the arguments and runs the tool func: on the calling
// goroutine, or, when the call has a timeout, on a goroutine of its own that
// runTool stops waiting for at the timeout (j.handedOff is then set: that
// goroutine frees the slot when the func returns).
func (r *run) runTool(j *job, call ToolCall) ToolResult {
	t := j.tool
	if t == nil {
		return errorResult(call, unknownTool(call.Name, j.available))
	}
	args, err := t.checkArgs(call.Args)
	if err != nil {
		return errorResult(call, err)
	}
	j.sink = progressSink{ch: r.progress, job: j.index, call: call, conversation: r.conversationID, parent: r.parent, turn: r.assistants, history: r.history, box: r.box, drives: r.drives}
	ctx := context.WithValue(r.ctx, progressKey{}, &j.sink)
	if h := r.hooks; h != nil && h.ToolContext != nil {
		next, err := r.toolContext(ctx, call)
		if err != nil {
			r.hookCancel("ToolContext", err)
			return r.cancelledResult(call)
		}
		ctx = next
	}
	timeout := t.Timeout
	if timeout == 0 {
		timeout = r.agent.ToolTimeout
	}
	if timeout <= 0 {
		// Without a timeout the run waits for the func whatever happens (a
		// result that is ready wins over a cancel), so it runs right here.
		j.inFunc = true
		o := callFunc(t, ctx, args)
		j.inFunc = false
		return r.toolResult(t, call, ctx, 0, o)
	}
	var cancel context.CancelFunc
	ctx, cancel = context.WithTimeout(ctx, timeout)
	defer cancel()
	var state atomic.Int32
	ch := make(chan outcome, 1)
	j.handedOff = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() { <-r.slots }()
		o := outcome{err: errGoexit} // kept if the func calls runtime.Goexit
		defer func() {
			if !state.CompareAndSwap(funcRunning, funcReturned) {
				r.logf(slog.LevelWarn, "agentloop: a tool returned after its timeout; its result was dropped",
					"tool", t.Name, "call", call.ID, "err", o.err)
				return
			}
			ch <- o
		}()
		o = callFunc(t, ctx, args)
	}()

	var o outcome
	select {
	case o = <-ch:
	case <-ctx.Done():
		if r.stopped() {
			// Cancelled: tools return once their context is done, and a
			// result that is ready wins over the cancel.
			o = <-ch
			break
		}
		if state.CompareAndSwap(funcRunning, funcAbandoned) {
			return errorResult(call, &toolError{kind: ErrToolTimeout,
				msg: fmt.Sprintf("error: the tool did not finish within %v", timeout)})
		}
		o = <-ch // it returned just now: its result wins
	}
	return r.toolResult(t, call, ctx, timeout, o)
}

// callFunc calls the tool's func, turning a panic into a *ToolPanicError.
func callFunc(t *Tool, ctx context.Context, args json.RawMessage) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			if dp, ok := p.(*drivenPanic); ok { // a sub-run's, on the ranging goroutine
				o = outcome{err: &ToolPanicError{Tool: t.Name, Value: dp.value, Stack: dp.stack}}
				return
			}
			o = outcome{err: &ToolPanicError{Tool: t.Name, Value: p, Stack: debug.Stack()}}
		}
	}()
	o.content, o.err = t.Func(ctx, args)
	return o
}

// toolResult turns what a tool func returned into its result.
func (r *run) toolResult(t *Tool, call ToolCall, ctx context.Context, timeout time.Duration, o outcome) ToolResult {
	pe, panicked := o.err.(*ToolPanicError)
	switch {
	case o.err == nil:
		return ToolResult{CallID: call.ID, Name: call.Name, Content: o.content}
	case panicked:
		r.logf(slog.LevelError, "agentloop: a tool panicked", "tool", t.Name, "call", call.ID,
			"panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
		return errorResultErr(call, fmt.Sprintf("the tool crashed (panic: %v)", pe.Value), pe)
	case o.err == errGoexit:
		r.logf(slog.LevelError, "agentloop: a tool called runtime.Goexit", "tool", t.Name, "call", call.ID)
		return errorResultErr(call, "the tool stopped without returning a result (runtime.Goexit)", o.err)
	case r.stopped() && (errors.Is(o.err, context.Canceled) || errors.Is(o.err, context.DeadlineExceeded)):
		return r.cancelledResult(call)
	case errors.Is(o.err, context.DeadlineExceeded) && ctx.Err() != nil:
		return errorResult(call, &toolError{kind: ErrToolTimeout,
			msg: fmt.Sprintf("error: the tool did not finish within %v", timeout)})
	}
	return errorResultErr(call, "error: "+o.err.Error(), o.err)
}

var errGoexit = errors.New("agentloop: the tool called runtime.Goexit")

func (r *run) cancelledResult(c ToolCall) ToolResult {
	cause := context.Cause(r.ctx)
	reason := reasonOf(cause)
	return ToolResult{CallID: c.ID, Name: c.Name, Content: "cancelled: " + reason, IsError: true,
		Err: &CancelledError{Reason: reason, Cause: cause}}
}

// errorResult returns an error result whose content is err's text.
func errorResult(c ToolCall, err error) ToolResult {
	return errorResultErr(c, err.Error(), err)
}

func errorResultErr(c ToolCall, content string, err error) ToolResult {
	return ToolResult{CallID: c.ID, Name: c.Name, Content: content, IsError: true, Err: err}
}

// toolError is an error written for the model (msg) that matches one of
// the package's sentinels (kind).
type toolError struct {
	kind error
	msg  string
}

func (e *toolError) Error() string { return e.msg }
func (e *toolError) Unwrap() error { return e.kind }

// unknownTool returns the error of a call to a tool that is not available;
// available lists the names that are.
func unknownTool(name string, available []string) error {
	if len(available) == 0 {
		return &toolError{kind: ErrUnknownTool, msg: fmt.Sprintf("unknown tool %q; no tools are available now, answer in text", name)}
	}
	return &toolError{kind: ErrUnknownTool, msg: fmt.Sprintf("unknown tool %q; the available tools are: %s", name, strings.Join(available, ", "))}
}

type progressKey struct{}

// progressSink is what ReportProgress finds in a tool call's context.
type progressSink struct {
	ch   chan<- progress
	job  int
	call ToolCall
	// The call's conversation and turn, for IdempotencyKey.
	conversation string
	parent       string // the run's Step.Parent
	turn         int
	// history is the run's history when the call started (AgentTool reads
	// the conversation and a paused sub-run's state from it).
	history History
	box     *nestedBox // nil unless the run has agent tools
	// drives takes an agent tool's request to have its sub-run ranged by
	// the run's ranging goroutine; nil under an engine.
	drives chan<- *driveReq
}

// progress is a ToolProgress on its way from a tool to the ranging
// goroutine, with the index of the job that reported it.
type progress struct {
	ToolProgress
	job  int
	item *Nested         // an AgentTool call's item, instead of the ToolProgress
	mark chan<- struct{} // flushNested's mark, instead of either: closed when taken, never yielded
}

// ReportProgress sends interim output of the tool call that runs with ctx
// (a long download's percentage, a partial answer): the run yields it as a
// [ToolProgress] item before the call's result, and aisdk sends it to the
// browser as preliminary tool output. Call it from the tool's func with the
// context the func got, from any goroutine of the tool, as often as useful;
// each call blocks until the run takes the report, and returns ctx's error
// when ctx is done first (the call timed out or the run was cancelled).
// Outside a tool call run by the loop it does nothing and returns nil.
func ReportProgress(ctx context.Context, content string) error {
	s, _ := ctx.Value(progressKey{}).(*progressSink)
	if s == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case s.ch <- progress{ToolProgress: ToolProgress{CallID: s.call.ID, Name: s.call.Name, Content: content}, job: s.job}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
