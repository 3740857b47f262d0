package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"runtime/debug"
	"strings"
	"sync"
)

// Nested is yielded, as a *Nested, for each item of a sub-agent's run (an
// [AgentTool] call), as the sub-run yields it, so a consumer sees a
// sub-agent's text, tool calls and results while they happen. A sub-run's
// items come between the parent call's [ToolCallReady] (and [TurnEnd]) and
// its [ToolResultReady], in the order the sub-run yielded them; items of
// sub-runs that run at the same time interleave as they happen, as
// [ToolProgress] does.
//
// It is the one item yielded as a pointer (match it with
// case *agentloop.Nested; a Nested value is not an [Item]), so that a
// nested item costs little more than the item it carries: the loop cuts
// them from blocks of up to 64 allocated at once (design.md §3.10). Each
// is handed out once and never changed afterwards, so a consumer may keep
// it; a kept one keeps its block (and the Items it holds) from being
// collected. Its tags (the embedded [SubAgent]: n.CallID, n.Agent,
// n.Model, n.Depth, n.Path) are shared by the items of one sub-run; the
// SubAgent is never nil in an item the loop yields. Read both, do not
// change them.
//
// Items of agents within agents are not wrapped twice: an item of a
// sub-agent's sub-agent is one Nested with Depth 2. A consumer that does not
// care for sub-agents' work skips Nested items; the run's own items are the
// same as without sub-agents.
type Nested struct {
	*SubAgent
	// Item is the sub-run's item: never a Nested. A sub-run's [TurnEnd]
	// carries its usage, which the yielding run adds to its own (see
	// [Final.AgentUsage]); its [Final] or [Pending] is the sub-run's last
	// item.
	Item Item
}

// SubAgent tags the items of one sub-agent's run ([Nested]): which call of
// the yielding run they belong to, and which agent, how deep down, produced
// them. One SubAgent is shared by the items of one sub-run (at Depth 1, all
// of them; deeper down, those of one deeper run): compare pointers to group
// them, and do not change it.
type SubAgent struct {
	// CallID is the id of the call, in the history of the run that yields
	// the item, whose sub-run (directly or deeper down) produced it: the
	// call a front end shows the sub-agent's work under.
	CallID string
	// Agent is the name of the agent whose run produced the item.
	Agent string
	// Model names the model of that agent (empty when it cannot name itself).
	Model ModelInfo
	// Depth is 1 for items of a sub-agent that this run called, 2 for items
	// of that sub-agent's sub-agents, and so on.
	Depth int
	// Path holds the call ids from CallID down to the call that started
	// the run that produced the item, one per level: len(Path) == Depth and
	// Path[0] == CallID. Each id is unique within its own run's history.
	Path []string
}

func (*Nested) isItem() {}

// AgentToolOptions configures [AgentTool]. The zero value is useful: a tool
// named after the agent that gives it the task alone.
type AgentToolOptions struct {
	// Name is the tool's name; "" means the agent's Name.
	Name string
	// Description tells the calling model what the agent does; "" means a
	// generic description naming the agent.
	Description string
	// Conversation makes the sub-agent see the calling run's conversation
	// (its messages up to the call, without the calling turn's tool calls)
	// followed by the task, instead of the task alone.
	Conversation bool
	// RunOptions, when not nil, are passed to each sub-run's [Agent.Stream]
	// (tools, budget, hooks for the sub-agent).
	RunOptions *RunOptions
}

// AgentTool returns a tool that runs agent: the calling model gives it a
// task, the sub-run answers it, and the sub-run's final text (with a
// [ResponseFormat], its structured output) is the call's result.
//
// The sub-run is a run of agent like any other (its own Model, System,
// Tools, Hooks, MaxTurns and Budget), with the call's context: a cancel of
// the calling run, a break of its consumer, and the call's timeout
// ([Tool.Timeout], [Agent.ToolTimeout]) reach it. Its items reach the
// calling run's consumer as [*Nested] items while they happen, and its
// token usage adds up to the calling run's (so its budget counts it). A
// sub-run that fails gives the call an error result that names the agent
// and the error; one that panics, a [*ToolPanicError] result.
//
// When the call is the only one of its turn still running, the sub-run
// runs on the calling run's own goroutine (the one ranging over it), with
// no handoff per item; otherwise on the call's goroutine. The call's hooks
// run on the call's goroutine either way.
//
// A sub-run that pauses (its model called a client tool, or a tool that
// needs approval) pauses the calling run: the calling run's [Pending] lists
// the sub-run's calls with ids of the form "<callID>/<sub-run's id>", and
// its history holds the sub-run's state (a [PartSubRun] part). Answer them
// with [History.AppendResults] and [History.AppendApprovals] as any other,
// and resume the calling run: the sub-run goes on from its state.
//
// The tool may be shared by any number of agents and concurrent runs. Run
// outside a loop (its Func called directly) it runs the sub-run and drops
// its items.
func AgentTool(agent *Agent, o AgentToolOptions) (*Tool, error) {
	if agent == nil {
		return nil, errors.New("agentloop: AgentTool: nil agent")
	}
	name := o.Name
	if name == "" {
		name = agent.Name
	}
	if name == "" {
		return nil, errors.New("agentloop: AgentTool: the agent has no Name and AgentToolOptions.Name is empty")
	}
	desc := o.Description
	if desc == "" {
		desc = fmt.Sprintf("Ask the %s agent to carry out a task and report back. Describe the task fully: the agent sees only what you write.", name)
		if o.Conversation {
			desc = fmt.Sprintf("Ask the %s agent to carry out a task and report back. The agent sees this conversation.", name)
		}
	}
	at := &agentTool{agent: agent, opts: o, model: modelInfo(agent.Model)}
	t, err := NewRawTool(name, desc, agentToolSchema, at.call)
	if err != nil {
		return nil, err
	}
	t.nests = true
	return t, nil
}

var agentToolSchema = json.RawMessage(`{"type":"object","properties":{"task":{"type":"string","description":"The task for the agent, with everything it needs to know."}},"required":["task"],"additionalProperties":false}`)

type agentTool struct {
	agent *Agent
	opts  AgentToolOptions
	model ModelInfo
}

// call runs one sub-run for the call that runs with ctx.
func (at *agentTool) call(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Task string `json:"task"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", fmt.Errorf("arguments do not fit the tool's schema: %w", err)
	}
	s, _ := ctx.Value(progressKey{}).(*progressSink)
	var h History
	var state *SubRun
	if s != nil {
		state = latestSubRun(s.history, s.call.ID)
	}
	switch {
	case state != nil:
		h = state.History
	case at.opts.Conversation && s != nil:
		h = conversationFor(s.history, args.Task)
	default:
		h = History{UserMessage(args.Task)}
	}
	fw := forwarder{sink: s, ctx: ctx, done: ctx.Done()}
	if s != nil {
		id := s.call.ID
		fw.tags = &SubAgent{CallID: id, Agent: at.agent.Name, Model: at.model, Depth: 1, Path: []string{id}}
	}
	seq := at.agent.Stream(ctx, h, at.opts.RunOptions)
	var text string
	var err error
	body := func(send func(*Nested) error) { text, err = at.consume(ctx, seq, &fw, send) }
	if s != nil && s.drives != nil {
		// Ask the calling run's ranging goroutine to range the sub-run
		// itself: no handoff per item (design.md §3.10).
		req := &driveReq{job: s.job, body: body, reply: make(chan driveReply, 1)}
		select {
		case s.drives <- req:
		case <-ctx.Done():
			return "", fmt.Errorf("agent %q: %w", at.agent.Name, ctx.Err())
		}
		rep := <-req.reply // always sent, also when the run stops
		switch {
		case rep.panicked:
			panic(&drivenPanic{value: rep.value, stack: rep.stack}) // callFunc makes it the call's result
		case rep.aborted:
			return "", fmt.Errorf("agent %q: %w", at.agent.Name, ErrStopped)
		case rep.ran:
			return text, err
		}
		// Declined: other calls of the turn run, so the sub-run runs here.
	}
	body(fw.put)
	return text, err
}

// consume ranges over a sub-run, handing each of its items to send as a
// Nested item, and returns the sub-run's answer.
func (at *agentTool) consume(ctx context.Context, seq iter.Seq2[Item, error], fw *forwarder, send func(*Nested) error) (string, error) {
	for it, err := range seq {
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return "", fmt.Errorf("agent %q: %w", at.agent.Name, cerr)
			}
			return "", fmt.Errorf("agent %q failed: %w", at.agent.Name, err)
		}
		if fw.sink != nil {
			select {
			case <-fw.done:
				return "", fmt.Errorf("agent %q: %w", at.agent.Name, ctx.Err())
			default:
			}
			if err := send(fw.wrap(it)); err != nil {
				return "", fmt.Errorf("agent %q: %w", at.agent.Name, err)
			}
		}
		switch last := it.(type) {
		case Final:
			return last.Text, nil
		case Pending:
			callID := ""
			if fw.sink != nil {
				callID = fw.sink.call.ID
			}
			return "", &subPending{run: SubRun{CallID: callID, Agent: at.agent.Name, History: last.History}, pending: last}
		}
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("agent %q: %w", at.agent.Name, err)
	}
	return "", fmt.Errorf("agent %q: the run ended without an answer", at.agent.Name)
}

// forwarder makes a sub-run's items the calling run's Nested items.
type forwarder struct {
	sink *progressSink   // nil: outside a loop, items are dropped
	ctx  context.Context // the call's
	done <-chan struct{} // ctx.Done()
	tags *SubAgent       // of the sub-run's own items
	// The tags of the last deeper item and the tags made from them, so
	// that the items of one deeper run share one SubAgent.
	inner, outer *SubAgent
	slab         []Nested // the items wrap hands out next
	slabSize     int
}

// wrap returns the Nested item that carries it.
func (f *forwarder) wrap(it Item) *Nested {
	n := f.cut()
	in, ok := it.(*Nested)
	if !ok {
		*n = Nested{SubAgent: f.tags, Item: it}
		return n
	}
	if in.SubAgent != f.inner {
		id := f.sink.call.ID
		f.inner = in.SubAgent
		f.outer = &SubAgent{CallID: id, Agent: in.Agent, Model: in.Model, Depth: in.Depth + 1,
			Path: append(append(make([]string, 0, len(in.Path)+1), id), in.Path...)}
	}
	*n = Nested{SubAgent: f.outer, Item: in.Item}
	return n
}

// maxSlab is the most Nested items a forwarder allocates at once.
const maxSlab = 64

// cut returns a new Nested from the forwarder's slab: a sub-run's items
// are allocated in batches (8, 16, 32, then 64 at a time), so that a
// nested item costs a fraction of an allocation. A slot is used once.
func (f *forwarder) cut() *Nested {
	if len(f.slab) == 0 {
		f.slabSize = min(max(2*f.slabSize, 8), maxSlab)
		f.slab = make([]Nested, f.slabSize)
	}
	n := &f.slab[0]
	f.slab = f.slab[1:]
	return n
}

// put hands n to the calling run from the call's goroutine.
func (f *forwarder) put(n *Nested) error {
	s, ctx := f.sink, f.ctx
	if s.box != nil {
		return s.box.put(ctx, progress{job: s.job, item: n})
	}
	select {
	case s.ch <- progress{job: s.job, item: n}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// driveReq asks the calling run's ranging goroutine to run body, which
// ranges a sub-run and hands each item to the emit func it is given.
type driveReq struct {
	job   int
	body  func(emit func(*Nested) error)
	reply chan driveReply // cap 1; gets exactly one reply
}

// driveReply says what became of a driveReq.
type driveReply struct {
	ran      bool // body ran on the ranging goroutine (false: declined)
	aborted  bool // body did not return: the consumer panicked, or runtime.Goexit was called
	panicked bool // the sub-run panicked with value
	value    any
	stack    []byte
}

// drivenPanic carries a sub-run's panic from the ranging goroutine to the
// call's goroutine, where it becomes the call's result.
type drivenPanic struct {
	value any
	stack []byte
}

// onDrive answers a sub-run's request to be ranged by this goroutine while
// it awaits job i. It runs the sub-run when every other call of the turn
// has ended (so no other call waits for this goroutine meanwhile): at once
// if the sub-run is job i's, after the results before it otherwise. When
// other calls run, it declines: the sub-run runs on its call's goroutine.
func (r *run) onDrive(i int, d *driveReq) error {
	for k, done := range r.turnDone {
		if k == d.job {
			continue
		}
		select {
		case <-done:
		default:
			d.reply <- driveReply{}
			return nil
		}
	}
	if d.job != i {
		r.held = d // job i has ended: its result comes first
		return nil
	}
	return r.drive(d)
}

// drive runs a sub-run's body on the ranging goroutine, yielding its
// Nested items as they come. It returns ErrStopped when the consumer
// stopped ranging. A panic of the sub-run goes back to the call's
// goroutine; one of the consumer goes on up.
func (r *run) drive(d *driveReq) error {
	var rep driveReply
	var stop error
	emitting, returned := false, false
	defer func() {
		if !emitting && !returned {
			if p := recover(); p != nil {
				rep.panicked, rep.value, rep.stack = true, p, debug.Stack()
			} else {
				rep.aborted = true // runtime.Goexit
			}
		} else if !returned {
			rep.aborted = true
		}
		rep.ran = true
		d.reply <- rep
	}()
	d.body(func(n *Nested) error {
		if r.stopped() {
			return nil // dropped, as after a stop on the other path
		}
		r.countNested(n)
		emitting = true
		err := r.emit(n)
		emitting = false
		if err != nil {
			stop = err
		}
		return err
	})
	returned = true
	return stop
}

// releaseHeld declines a held request the run will not get to.
func (r *run) releaseHeld() {
	if r.held != nil {
		r.held.reply <- driveReply{}
		r.held = nil
	}
}

// nestedBoxSize bounds how far a sub-run may run ahead of the consumer.
const nestedBoxSize = 64

// nestedBox carries Nested items from agent tools' goroutines to the
// ranging goroutine in batches: a producer waits only when the box is
// full, and the ranging goroutine takes everything in it at each wake, so
// a sub-run's items do not cost a goroutine handoff each.
type nestedBox struct {
	mu      sync.Mutex
	items   []progress
	spare   []progress    // the ranging goroutine's buffer, swapped with items
	wake    chan struct{} // cap 1: the box became non-empty
	room    chan struct{} // closed (and replaced) when a full box was emptied
	waiters int
}

func newNestedBox() *nestedBox {
	return &nestedBox{wake: make(chan struct{}, 1), room: make(chan struct{})}
}

// put adds p to the box, waiting while it is full; it returns ctx's error
// when ctx ends first.
func (b *nestedBox) put(ctx context.Context, p progress) error {
	b.mu.Lock()
	for len(b.items) >= nestedBoxSize {
		room := b.room
		b.waiters++
		b.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			b.mu.Lock()
			b.waiters--
			b.mu.Unlock()
			return ctx.Err()
		}
		b.mu.Lock()
		b.waiters--
	}
	b.items = append(b.items, p)
	first := len(b.items) == 1
	b.mu.Unlock()
	if first {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// take returns the items in the box and empties it. The returned slice is
// valid until the next take.
func (b *nestedBox) take() []progress {
	b.mu.Lock()
	items := b.items
	clear(b.spare) // drop the previous batch's items
	b.items = b.spare[:0]
	b.spare = items
	if b.waiters > 0 {
		close(b.room)
		b.room = make(chan struct{})
	}
	b.mu.Unlock()
	return items
}

// drainNested yields the Nested items in the run's box, dropping those of
// jobs before i (their results were yielded) and all after a stop.
func (r *run) drainNested(i int) error {
	if r.box == nil {
		return nil
	}
	items := r.box.take()
	k := 0
	defer func() {
		// A stop or a panic of the consumer left the rest of the batch:
		// its marks are closed, so that no step waits for them.
		for _, p := range items[k:] {
			if p.mark != nil {
				close(p.mark)
			}
		}
	}()
	for ; k < len(items); k++ {
		p := items[k]
		if p.mark != nil {
			close(p.mark)
			continue
		}
		if r.stopped() || p.job < i {
			continue
		}
		r.countNested(p.item)
		if err := r.emit(p.item); err != nil {
			return err
		}
	}
	return nil
}

// subPending is the error an AgentTool call returns when its sub-run
// paused: the calling run pauses too, keeping the sub-run's state.
type subPending struct {
	run     SubRun
	pending Pending
}

func (e *subPending) Error() string {
	return fmt.Sprintf("agentloop: agent %q paused for its caller", e.run.Agent)
}

// Unwrap returns ErrPending.
func (e *subPending) Unwrap() error { return ErrPending }

// SubRun is the state of a sub-agent's run ([AgentTool]) that paused for
// the caller: a [PartSubRun] part of a tool message after the assistant
// message that made the call. The latest such part for a call is its
// state; [History.AppendResults] and [History.AppendApprovals] append a new
// one that holds the answers to the sub-run's calls.
type SubRun struct {
	// CallID is the id of the call that runs the sub-agent.
	CallID string `json:"callId"`
	// Agent is the sub-agent's name.
	Agent string `json:"agent,omitempty"`
	// History is the sub-run's history: it ends with the sub-run's pending
	// calls, and the answers given to them so far.
	History History `json:"history"`
}

// SubRunPause is the pause of an [AgentTool] call whose sub-run paused, in
// the form a durable engine records with the call's step (§3.9 of the
// design): the call's [ToolResult] does not carry it through JSON, since
// its Err is not serialized. An engine takes it from a step's live result
// with [PausedSubRun], records it beside the result, and puts it back into
// the replayed result with [SubRunPause.Result], so that a replayed call
// pauses the run as the live one did. It round-trips through
// encoding/json.
type SubRunPause struct {
	// SubRun is the paused sub-run's state.
	SubRun SubRun `json:"subRun"`
	// ClientCalls and Approvals are the calls the sub-run waits for, with
	// the sub-run's own ids (the calling run prefixes them).
	ClientCalls []ToolCall `json:"clientCalls,omitempty"`
	Approvals   []ToolCall `json:"approvals,omitempty"`
}

// PausedSubRun returns the pause behind res when res is the result of an
// [AgentTool] call whose sub-run paused (res.Err matches [ErrPending]),
// and nil for any other result, including one that went through JSON.
func PausedSubRun(res ToolResult) *SubRunPause {
	var sp *subPending
	if !errors.As(res.Err, &sp) {
		return nil
	}
	return &SubRunPause{SubRun: sp.run, ClientCalls: sp.pending.ClientCalls, Approvals: sp.pending.Approvals}
}

// Result returns res with the pause p behind its Err, as [PausedSubRun]
// found it: handed to the loop as a tool step's result, it pauses the
// calling run with the sub-run's state, as the live result did.
func (p *SubRunPause) Result(res ToolResult) ToolResult {
	res.Err = &subPending{run: p.SubRun, pending: Pending{ClientCalls: p.ClientCalls, Approvals: p.Approvals}}
	return res
}

// prefixCalls returns calls with their ids prefixed by callID and "/".
func prefixCalls(callID string, calls []ToolCall) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		c.ID = callID + "/" + c.ID
		out[i] = c
	}
	return out
}

// latestSubRun returns the state of the sub-run of call callID that
// follows the last assistant message of h, or nil.
func latestSubRun(h History, callID string) *SubRun {
	i := h.lastAssistant()
	if i < 0 {
		return nil
	}
	var out *SubRun
	for _, m := range h[i+1:] {
		for _, p := range m.Parts {
			if p.Type == PartSubRun && p.SubRun != nil && p.SubRun.CallID == callID {
				out = p.SubRun
			}
		}
	}
	return out
}

// conversationFor returns what a sub-agent that sees the conversation gets:
// h up to the last assistant message, that message's text and reasoning
// (its calls would be unanswered in the sub-run), and the task.
func conversationFor(h History, task string) History {
	i := h.lastAssistant()
	if i < 0 {
		return append(h[:len(h):len(h)], UserMessage(task))
	}
	out := make(History, 0, i+2)
	out = append(out, h[:i]...)
	var keep []Part
	for _, p := range h[i].Parts {
		if p.Type == PartText || p.Type == PartReasoning {
			keep = append(keep, p)
		}
	}
	if len(keep) > 0 {
		out = append(out, Message{Role: RoleAssistant, Parts: keep})
	}
	return append(out, UserMessage(task))
}

// splitNested splits a nested call id "<callID>/<rest>" when callID names
// a call of calls that has a sub-run state in h.
func splitNested(h History, calls map[string]ToolCall, id string) (*SubRun, string, bool) {
	for k := 0; k < len(id); k++ {
		k2 := strings.IndexByte(id[k:], '/')
		if k2 < 0 {
			return nil, "", false
		}
		k += k2
		head, rest := id[:k], id[k+1:]
		if _, ok := calls[head]; ok {
			if sr := latestSubRun(h, head); sr != nil {
				return sr, rest, true
			}
		}
	}
	return nil, "", false
}

// subUsage is the usage of one sub-agent's model calls within a run.
type subUsage struct {
	agent string
	model ModelInfo
	usage Usage
}

// countNested adds the usage of a sub-run's finished model call to the
// run's: a Nested TurnEnd, at any depth.
func (r *run) countNested(n *Nested) {
	if _, ok := n.Item.(TurnEnd); ok { // inlined: most items are not
		r.addSubUsage(n)
	}
}

// addSubUsage adds the usage of n, a sub-run's TurnEnd. It is not inlined
// into countNested, so the TurnEnd is copied for TurnEnds only.
func (r *run) addSubUsage(n *Nested) {
	u := n.Item.(TurnEnd).Usage
	r.usage = r.usage.Add(u)
	for i := range r.subs {
		if s := &r.subs[i]; s.agent == n.Agent && s.model == n.Model {
			s.usage = s.usage.Add(u)
			return
		}
	}
	r.subs = append(r.subs, subUsage{agent: n.Agent, model: n.Model, usage: u})
}

// agentUsage returns the run's usage per agent name, or nil when no
// sub-agent ran.
func (r *run) agentUsage() map[string]Usage {
	if r.subs == nil {
		return nil
	}
	m := map[string]Usage{r.agent.Name: r.own}
	for _, s := range r.subs {
		m[s.agent] = m[s.agent].Add(s.usage)
	}
	return m
}
