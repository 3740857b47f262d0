// Package aisdk serves an [agentloop.Agent] to Vercel AI SDK front ends
// (useChat from @ai-sdk/react, and assistant-ui through
// @assistant-ui/react-ai-sdk) by speaking the AI SDK 7 "UI message stream"
// protocol, so that a Go server cannot be told from a JavaScript
// streamText(…).toUIMessageStreamResponse() route.
//
// The pieces, from the wire up:
//
//   - [Chunk] and its types (StartChunk, TextDeltaChunk, …): every chunk of
//     the protocol, marshalling to its wire JSON; [ParseChunk] decodes and
//     checks one the way the client does.
//   - [Writer]: the server-sent-events framing (headers, "data: <json>",
//     flushing, keep-alive comments, "data: [DONE]").
//   - [Mapper]: turns the items of a run into chunks (steps, text and
//     reasoning parts, tool input, outputs, approvals, finish or error).
//   - [DecodeRequest], [ToHistory] and [FromHistory]: the request body of
//     useChat and assistant-ui, and the conversion between UIMessages and
//     an [agentloop.History].
//   - [Handler]: an http.Handler that does all of the above for a chat
//     route, with limits, per-request options, cancellation when the client
//     goes away, and an optional [ChatStore] that makes the server's history
//     authoritative ([Reconcile]).
//
// Tools that run in the browser need no server state: the model's call
// ends the response (finish reason "tool-calls"), the client runs the tool
// and posts the conversation again with the output, and the handler
// continues the same assistant message. Tools that need approval work the
// same way, with the client's decision instead of an output.
package aisdk
