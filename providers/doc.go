// Package providers holds what the model providers of agentloop share: the
// [APIError] type that every provider returns for an HTTP error answer, and
// sentinel errors to check it against with errors.Is.
//
// The providers themselves live in the sub-packages ollama, openai (Chat
// Completions), openairesponses (the Responses API), anthropic and gemini
// (a Go module of its own, on Google's SDK); each has a Config, a New
// constructor and a *Model that implements agentloop.Model. The fallback
// sub-package chains several models.
//
// # What every provider does the same way
//
// Tool-call ids: a provider passes on the id the server gave a call, and
// yields an empty id when the server gave none; the loop (agentloop.Agent)
// then makes one. Providers never invent ids.
//
// Usage: Input counts every prompt token and Output every generated one;
// cache reads, cache writes and reasoning tokens are reported as parts of
// them (agentloop.Usage), by every provider whose API counts them.
//
// The length limit: when the output token limit (Settings.MaxTokens) falls
// on or just after the token that completes the model's tool calls, servers
// disagree on what to report (Ollama's /api/chat says "length", its
// OpenAI- and Anthropic-compatible endpoints say the calls ended the turn).
// Every provider reports such a turn as agentloop.FinishToolCalls, so the
// calls run and the model gets to answer from their results. A turn is
// agentloop.FinishLength when the limit cut the text, or cut a call before
// its arguments were whole JSON; the loop then runs none of the turn's
// calls and the run fails with agentloop.ErrTruncated. (A further call that
// the model never got to start is not known to anyone; the model can still
// make it on the next turn.)
//
// Errors: a non-2xx answer, and an error event inside a 200 stream, is an
// [*APIError]. A server that cannot be reached is an error wrapping
// [ErrUnreachable] that names the URL once. A 200 stream that ends before
// its final event wraps io.ErrUnexpectedEOF; the message says whether the
// server ended it cleanly (Ollama does when its repeat limit stops a
// runaway generation) or the connection broke. A request ended by its
// context wraps ctx.Err() and context.Cause(ctx). Requests are retried on
// 429 and 5xx and failed connections, only before the answer's body is
// read.
//
// Naming the model: every provider's Model implements
// agentloop.ModelDescriber; its ModelInfo method returns the OpenTelemetry
// gen_ai.provider.name and the configured model name, for logs and
// telemetry.
package providers
