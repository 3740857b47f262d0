package agentloop

import (
	"errors"
	"iter"
)

// TurnStart is yielded before each model call.
type TurnStart struct {
	// Turn is the 1-based number of the model call within the run.
	Turn int
	// Agent names the agent that makes the call, in runs of agents with
	// [Agent.Handoffs]; "" otherwise.
	Agent string
}

// ToolCallReady is yielded when a tool call is complete, in the order the
// model made the calls, before any of the turn's tools run.
type ToolCallReady struct {
	// Call is the complete call, with its id (made up by the loop if the
	// provider gave none) and its arguments as the model wrote them.
	Call ToolCall
	// RunsOnClient is true for a client tool ([NewClientTool]), one that
	// runs in the caller's front end; the run pauses with a [Pending] item
	// instead of running it.
	RunsOnClient bool
	// NeedsApproval is true when the call waits for an approval decision
	// before it runs; the run pauses with a [Pending] item.
	NeedsApproval bool
	// Err is non-nil when the loop will neither run the call nor hand it to
	// the caller: the tool is unknown or was not offered on this turn
	// ([ErrUnknownTool]), or the call's arguments do not fit a client
	// tool's schema ([ErrInvalidArgs]). The call then gets an error result
	// that the model sees; a front end must not run it.
	Err error
}

// ToolProgress is yielded when a running tool reports interim output with
// [ReportProgress]. A call's progress items come in the order reported and
// before its [ToolResultReady]; the progress of calls that run at the same
// time interleaves as it happens.
type ToolProgress struct {
	// CallID is the id of the call that reported.
	CallID string
	// Name is the name of the tool.
	Name string
	// Content is the interim output, as the tool reported it.
	Content string
}

// ToolResultReady is yielded for each tool result the loop produces, in call
// order, whatever order the tools finished in.
type ToolResultReady struct {
	// Result is the call's result, as recorded in the history.
	Result ToolResult
	// Denied is true when the result answers a call that was denied approval.
	Denied bool
}

// TurnEnd is yielded when a model call has ended, after its assistant message
// was appended to the history and before the turn's tools run. Every
// [TurnStart] is followed by exactly one TurnEnd, also when the model call
// failed or the run was cancelled during it (Err is then set, and the run's
// error follows), unless the consumer stopped ranging.
type TurnEnd struct {
	// Turn is the 1-based number of the model call within the run.
	Turn int
	// Usage is this model call's usage (the sum of its Usage chunks).
	Usage Usage
	// FinishReason says why the call ended: the provider's reason, with
	// [FinishStop] turned into [FinishToolCalls] when the call produced tool
	// calls; [FinishToolCalls] or [FinishStop] when the provider gave none;
	// [FinishError] when the call failed or was cancelled.
	FinishReason FinishReason
	// Message is the assistant message the turn produced (on a failed turn,
	// what the model produced before it failed).
	Message Message
	// History is the run's transcript up to and including Message, without
	// the turn's tool results (they come later). It shares memory with the
	// run: read it, or Clone it to keep and change it. Store it to lose at
	// most the turn in flight if the process dies.
	History History
	// Err is nil for a model call that ended normally. Otherwise it is the
	// error the run ends with: a [*TurnError] or a [*CancelledError].
	Err error
}

// Pending is the last item of a run that paused for its caller: the model
// called client tools, or tools that need approval. The run ended normally.
// To resume, append the results ([History.AppendResults]) and decisions
// ([History.AppendApprovals]) to History and call [Agent.Stream] again.
// Calls of a paused sub-agent ([AgentTool]) are listed with ids
// "<callID>/<id>" and answered the same way.
type Pending struct {
	// ClientCalls are calls to client tools that await results, in call order.
	ClientCalls []ToolCall
	// Approvals are calls that await an approval decision, in call order.
	Approvals []ToolCall
	// History is the transcript so far; it ends with the assistant message
	// that made the calls and the results of its server tools.
	History History
	// Usage is summed over the run's model calls and its sub-agents'
	// ([AgentTool]).
	Usage Usage
	// AgentUsage is Usage per agent name (this run's agent included) when
	// sub-agents ran; nil otherwise.
	AgentUsage map[string]Usage
}

// Final is the last item of a run that ended with the model's answer.
type Final struct {
	// Text is the text of the last turn.
	Text string
	// Usage is summed over the run's model calls and its sub-agents'
	// ([AgentTool]), at every depth.
	Usage Usage
	// AgentUsage is Usage per agent name (this run's agent included) when
	// sub-agents ran; nil otherwise. Agents with one name add up.
	AgentUsage map[string]Usage
	// Turns is the number of model calls the run made.
	Turns int
	// History is the full transcript, ending with the answer.
	History History
}

func (TurnStart) isItem()       {}
func (TextDelta) isItem()       {}
func (ReasoningDelta) isItem()  {}
func (ReasoningEnd) isItem()    {}
func (ToolCallDelta) isItem()   {}
func (ToolCallReady) isItem()   {}
func (ToolResultReady) isItem() {}
func (ToolProgress) isItem()    {}
func (TurnEnd) isItem()         {}
func (Pending) isItem()         {}
func (Final) isItem()           {}

// ErrPending is returned by [Text] when the run paused for client tools or
// approvals instead of answering.
var ErrPending = errors.New("agentloop: run paused for client tools or approvals")

// Drain consumes a run and returns its last item, a [Final] or a [Pending],
// or the run's error.
func Drain(seq iter.Seq2[Item, error]) (Item, error) {
	var last Item
	for item, err := range seq {
		if err != nil {
			return nil, err
		}
		last = item
	}
	if last == nil {
		return nil, errors.New("agentloop: run ended without a final item")
	}
	return last, nil
}

// Text consumes a run and returns the final answer's text. A run that paused
// returns [ErrPending]; a failed run returns its error.
func Text(seq iter.Seq2[Item, error]) (string, error) {
	last, err := Drain(seq)
	if err != nil {
		return "", err
	}
	if f, ok := last.(Final); ok {
		return f.Text, nil
	}
	return "", ErrPending
}
