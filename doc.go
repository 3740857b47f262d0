// Package agentloop runs an LLM agent's multi-turn, streaming tool-calling
// loop and hands it to the application as a Go iterator.
//
// Build an [Agent] from a [Model] (a provider from the providers/ packages,
// or the scripted simtest.Model in tests) and [Tool]s, then range over
// [Agent.Stream]:
//
//	for item, err := range agent.Stream(ctx, history, nil) { … }
//
// One call of Stream is a run; a run makes one or more turns, each one model
// call plus the tools it asked for. The model's text, reasoning and tool
// calls are yielded as they stream ([TextDelta], [ReasoningDelta],
// [ToolCallDelta], [ToolCallReady]); after each model call the loop runs the
// requested tools concurrently and yields their results in call order
// ([ToolResultReady]); then it calls the model again with the results, until
// the model answers without tools ([Final]).
//
// Tools that run in the caller's front end ([NewClientTool]) and tools that
// need approval ([Tool.NeedsApproval]) pause the run with a [Pending] item;
// the caller appends the results or decisions to the history
// ([History.AppendResults], [History.AppendApprovals]) and calls Stream again.
// No server state is needed: the [History] is the whole state, and it
// round-trips through versioned JSON.
//
// A tool reports interim output with [ReportProgress]; the run yields it as
// [ToolProgress] before the call's result. The loop owns tool-call ids:
// every id in a history is unique and the same on every item.
//
// An agent can use another as a tool ([AgentTool]): the sub-agent's run
// streams into the caller's as [*Nested] items, tagged with the call, the
// agent and the depth; its usage adds up to the caller's (per agent in
// [Final.AgentUsage]); a cancel, a break or the call's timeout ends it; and
// a sub-agent's client call or approval pauses the whole run, its state kept
// in the caller's history ([SubRun]) so that it resumes like any other.
// An agent can also hand the conversation to another ([Agent.Handoffs]):
// the next turns run with that agent, and the history records who spoke
// ([Message.Agent]). The receiving agent's [Agent.HandoffFilter] chooses
// what its model is given of the conversation before it
// ([DropToolsBeforeHandoff]: without the earlier agents' tool work).
//
// [Hooks] observe or steer every step and can cancel the run with a reason
// ([Cancel]), as can the caller (a context cancelled with a [Cancel] cause).
// They come in pairs a tracer can rely on (OnRunStart/OnRunEnd,
// BeforeModelCall/OnTurnEnd, BeforeToolCall/AfterToolCall), and the errors
// behind error results stay checkable ([ToolResult.Err]). A failed run ends with one error: a
// [*CancelledError], [*TurnLimitError], [*BudgetError] ([Agent.Budget]) or
// [*TurnError], each carrying a history in which every tool call has a
// result ([HistoryOf]).
//
// A run's effects, its model calls and tool calls, go through [Effects]
// when a run is given one ([RunOptions.Effects]); without one they run in process
// as described above. A durable-execution engine implements Effects to
// record each call as a step and replay the recorded results after a
// crash, so a run outlives its process (the dbosrun module runs it on DBOS).
// Waits are not effects: a [Pending] run is resumed from its history. Tools
// get a key stable across such replays from [IdempotencyKey].
//
// Everything this SDK persists (histories, tool states, stored chats) is
// versioned JSON with camelCase keys and values; see [History.MarshalJSON].
package agentloop
