// Package ctxwindow keeps a long conversation's model calls within the
// model's context window, without ever breaking the transcript.
//
// A [Manager] plugs into an agent through hooks ([Manager.Hooks]). Before
// each model call it estimates what the request costs and, when that is
// over the budget (the context window minus an output reserve), shapes what
// this call sends with its strategies, in order, until it fits:
// [DropReasoning] leaves out the reasoning of old turns, [ShortenResults]
// sends old tool results as previews, [Summarize] has a model summarize the
// older turns (the summary is kept per conversation as a document of the
// versioned store, Config.Docs: beside the chat, and deleted with it), and
// [SlidingWindow] leaves out the oldest turns. The stored history is never
// changed: the run's items, its TurnEnd.History and its Final keep every
// message, so nothing is lost and the next run can shape differently.
//
// Every strategy keeps a tool call with its results and approval decisions,
// never sends a history that starts with a result, and always sends the
// system messages at the start, the first and the newest user message, and
// the latest turn, so that every provider accepts the request.
//
// In a run with handoffs the run's hooks serve every agent the conversation
// is handed to; Config.Agent limits a Manager to one agent's requests, so
// that Managers of different windows compose, one per model.
//
// [LargeResults] keeps huge tool results out of every request (a preview is
// sent), and [Manager.ReadResultTool] gives the model a tool to read the
// rest.
package ctxwindow
