package agentloop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Effects carries out a run's effects: its model calls and its tool calls.
// It is the seam a durable-execution engine plugs into (the dbosrun module
// runs a run as a DBOS workflow through it), in the manner of
// database/sql/driver: the loop calls it, an engine implements it.
//
// A run given no Effects ([RunOptions.Effects]) runs its calls in process, directly,
// at no cost. An engine runs each call as a step whose result it records,
// and on recovery replays the recorded results in the same order: the loop
// re-emits a replayed model call's items from its [ModelReply] and goes on
// from the first step without a result. So that replays match:
//
//   - The loop is deterministic between steps. It reads no clock and makes
//     no random ids outside a step: tool-call and approval ids derive from
//     the history (§9 of the design), timeouts run inside tool steps. An
//     engine therefore needs no clock or id hooks.
//   - Waits are not effects: a run that needs a client result or an
//     approval ends with a [Pending] whose History is the whole state, and
//     the caller resumes it with a new run when the answer arrives (hours or
//     days later, in any process). An engine keeps nothing open meanwhile.
//   - Model is called on the goroutine that ranges over the run, one call
//     at a time. Tool is called on that goroutine too, in call order, once
//     for each tool call of a turn that runs on the server, before any
//     result of the turn is awaited; the calls then run concurrently (up to
//     [Agent.ToolConcurrency]).
//
// Steps are at least once: a step that was in flight when its process died
// runs again on recovery (see [Tool] and [IdempotencyKey]); a step whose
// result was recorded never runs again. Hooks and items are not effects:
// a replayed model call calls the delta hooks and yields its items again
// (whole parts, not the original deltas), while BeforeToolCall,
// AfterToolCall and ToolContext run inside the tool step and are not
// repeated by a replay. Go errors behind results ([ToolResult.Err], a
// [TurnError]'s Err) keep their types only while nothing was replayed.
type Effects interface {
	// Model makes the model call step describes by calling call, or
	// returns the reply recorded for it without calling call. call streams
	// the model's reply into the run (its items reach the consumer as they
	// come) and returns the whole reply; its error is the model's, returned
	// along with the part of the reply that came before it.
	Model(ctx context.Context, step Step, call func() (ModelReply, error)) (ModelReply, error)

	// Tool starts the tool call step describes, without waiting for it:
	// it calls call (from any goroutine), or takes the result recorded for
	// it, and then calls done with the result, exactly once, from any
	// goroutine. call never fails: errors are results. For an
	// [AgentTool]'s call, call returns once the run has yielded the
	// [Nested] items the call handed over (or dropped them, having
	// stopped), so a step may record what its sub-run did as the run's
	// consumer saw it (its usage, say): call must not be called on the
	// goroutine that ranges over the run.
	Tool(ctx context.Context, step Step, call func() ToolResult, done func(ToolResult))
}

// Step names one effect of a run, the same on every replay of it.
type Step struct {
	// ConversationID is the run's [RunOptions.ConversationID]; "" if none.
	ConversationID string
	// Parent is the idempotency key of the tool call the run runs inside
	// (an [AgentTool]'s sub-run, or any run a tool starts with its ctx);
	// "" for a run of its own. It keeps the steps of two sub-runs apart:
	// the same sub-agent called twice, or in two conversations.
	Parent string
	// Turn counts the assistant messages of the conversation up to and
	// including the one the step makes (a model call) or belongs to (a
	// tool call): 1 for the first reply of a conversation. Unlike
	// [Request.Turn], it does not start again when a paused run resumes.
	Turn int
	// CallID is the tool call's id; "" for a model call.
	CallID string
	// Name is the tool's name; "" for a model call.
	Name string
}

// IdempotencyKey returns a key that names the step across replays, retries
// and processes: a hex SHA-256 of the parent call's key (for a sub-run),
// the conversation, turn and call id. It is unique among a conversation's
// steps, sub-runs' steps included; across conversations only when their
// ids are set and differ.
func (s Step) IdempotencyKey() string {
	h := sha256.New()
	if s.Parent != "" {
		// "p" cannot start the encoding of a run of its own (a length),
		// so a sub-run's step never shares a key with a top-level one.
		h.Write([]byte("p" + strconv.Itoa(len(s.Parent)) + ":" + s.Parent))
	}
	// Length-prefixed fields: no two steps share an encoding.
	for _, f := range []string{s.ConversationID, strconv.Itoa(s.Turn), s.CallID} {
		h.Write([]byte(strconv.Itoa(len(f))))
		h.Write([]byte{':'})
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// IdempotencyKey returns the idempotency key of the tool call that runs
// with ctx ([Step.IdempotencyKey] of its step): the same each time the call
// runs, whether the run retries it, an engine replays the run, or another
// process recovers it. Pass it to a payment or email API, or keep it with
// the tool's own writes, so that a call that runs twice has effect once. It
// returns "" outside a tool call run by the loop.
func IdempotencyKey(ctx context.Context) string {
	s, _ := ctx.Value(progressKey{}).(*progressSink)
	if s == nil {
		return ""
	}
	return s.step().IdempotencyKey()
}

// ModelReply is what a model call produced: the assistant message and what
// the loop needs to replay the turn. It round-trips through encoding/json
// (the message as in a history's JSON), so engines can record it.
type ModelReply struct {
	// Message is the assistant message, with the loop's tool-call ids; its
	// parts in the order produced. Approval requests are not in it.
	Message Message `json:"message"`
	// Usage is the call's token usage.
	Usage Usage `json:"usage"`
	// Finish is the model's finish reason; "" if it gave none.
	Finish FinishReason `json:"finish,omitempty"`
	// Partial is true when the model streamed tool-call deltas (a reply cut
	// off mid-call is then a truncated turn, not an answer).
	Partial bool `json:"partial,omitempty"`
}

// modelStep returns the step of the run's next model call.
func (r *run) modelStep() Step {
	return Step{ConversationID: r.conversationID, Parent: r.parent, Turn: r.assistants + 1}
}

// step returns the step of the tool call the sink belongs to.
func (s *progressSink) step() Step {
	return Step{ConversationID: s.conversation, Parent: s.parent, Turn: s.turn, CallID: s.call.ID, Name: s.call.Name}
}

// reply returns what the assembler has assembled.
func (a *assembler) reply() ModelReply {
	return ModelReply{Message: Message{Role: RoleAssistant, Parts: a.parts}, Usage: a.usage, Finish: a.finish, Partial: a.sawDeltas}
}

// replay feeds a recorded reply through the assembler: the run yields the
// reply's items and calls its hooks as if the model streamed it in whole
// parts, and the assembler ends up with the same parts.
func (a *assembler) replay(rep ModelReply) error {
	for _, p := range rep.Message.Parts {
		var err error
		switch p.Type {
		case PartText:
			if p.Text == "" {
				a.parts = append(a.parts, p)
				continue
			}
			err = a.add(TextDelta{Text: p.Text})
		case PartReasoning:
			if p.Text != "" {
				err = a.add(ReasoningDelta{Text: p.Text})
			}
			if err == nil {
				err = a.add(ReasoningEnd{Signature: p.Signature, Redacted: p.Redacted})
			}
		case PartToolCall:
			if p.ToolCall != nil {
				err = a.add(*p.ToolCall)
			}
		default:
			if err = a.closeBlocks(); err == nil {
				a.parts = append(a.parts, p)
			}
		}
		if err != nil {
			return err
		}
	}
	a.usage = a.usage.Add(rep.Usage)
	a.finish = rep.Finish
	a.sawDeltas = a.sawDeltas || rep.Partial
	return a.closeBlocks()
}

// modelCall streams the model's reply into asm: directly, or through the
// run's effects, replaying a recorded reply.
func (r *run) modelCall(req *Request, asm *assembler) error {
	if r.effects == nil {
		return r.streamModel(req, asm)
	}
	called := false
	rep, err := r.effects.Model(r.ctx, r.modelStep(), func() (ModelReply, error) {
		called = true
		err := r.streamModel(req, asm)
		asm.flushAll()
		return asm.reply(), err
	})
	if called || r.stopped() {
		return err
	}
	if rerr := asm.replay(rep); rerr != nil {
		return rerr
	}
	return err
}

// streamModel ranges over the model's stream, feeding asm. A cancel
// stops it before the next chunk: no hook runs and no item is yielded
// after it.
func (r *run) streamModel(req *Request, asm *assembler) error {
	var streamErr error
	for chunk, err := range r.agent.Model.Stream(r.ctx, req) {
		if r.stopped() {
			break // after a cancel: no hook, no item
		}
		if err != nil {
			streamErr = err
			break
		}
		// The bulk of a stream: text that goes on an open text block.
		// asm.add does the same, one call deeper.
		if c, ok := chunk.(TextDelta); ok && asm.open == PartText && c.Text != "" {
			asm.text = append(asm.text, c.Text...)
			if asm.onText != nil {
				if err := asm.onText(r.ctx, c.Text); err != nil {
					streamErr = r.hookCancel("OnTextDelta", err)
					break
				}
			}
			// The chunk is yielded as the model boxed it: no allocation.
			if !r.yield(chunk.(Item), nil) {
				streamErr = r.consumerStopped()
				break
			}
			continue
		}
		if streamErr = asm.add(chunk); streamErr != nil {
			break
		}
	}
	if streamErr == nil && !r.stopped() {
		streamErr = asm.closeBlocks()
	}
	return streamErr
}

// flushNested waits until the run has yielded the Nested items that job i
// handed over (or dropped them, having stopped), so that an engine's tool
// step that records what its sub-runs did (their usage, from the items)
// records all of it: a mark behind the items in the box is closed when
// the ranging goroutine takes it.
func (r *run) flushNested(i int) {
	mark := make(chan struct{})
	if r.box.put(r.ctx, progress{job: i, mark: mark}) != nil {
		return
	}
	select {
	case <-mark:
	case <-r.done:
	}
}

// dispatchEffects starts the runnable jobs through the run's effects, in
// call order; each job's step takes a ToolConcurrency slot on a goroutine
// of its own, and done[i] is closed once results[i] is set.
func (r *run) dispatchEffects(jobs []job, runnable []int, results []ToolResult, done []chan struct{}) {
	turn := r.assistants
	for _, i := range runnable {
		j := &jobs[i]
		step := Step{ConversationID: r.conversationID, Parent: r.parent, Turn: turn, CallID: j.call.ID, Name: j.call.Name}
		r.effects.Tool(r.ctx, step, func() ToolResult {
			var res ToolResult
			finished := make(chan struct{})
			// A goroutine of its own, so that a tool calling
			// runtime.Goexit ends it and not the engine's.
			go func() {
				select {
				case r.slots <- struct{}{}:
				case <-r.done:
					res = r.cancelledResult(j.call)
					close(finished)
					return
				}
				r.runJob(j, &res, finished)
			}()
			<-finished
			if j.tool.nests {
				r.flushNested(i)
			}
			return res
		}, func(res ToolResult) {
			results[i] = res
			close(done[i])
		})
	}
}
