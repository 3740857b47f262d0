// Package telemetry traces and measures agent runs with OpenTelemetry,
// following the semantic conventions for generative AI (release v1.41.0;
// the conventions are still in "Development"). It plugs into an Agent
// through [agentloop.Hooks]; the agentloop package itself does not import
// OpenTelemetry.
//
//	hooks, err := telemetry.NewHooks(telemetry.Options{}) // the global providers
//	agent := &agentloop.Agent{Model: telemetry.WrapModel(model), Tools: tools, Hooks: hooks}
//
// # Spans
//
// Each run is an "invoke_agent {Agent.Name}" span (kind INTERNAL), a child
// of the span in the context given to [agentloop.Agent.Stream]: serve
// [github.com/agentloop/agentloop/aisdk.Handler] through otelhttp and the
// run's span is a child of the request's span. Under it, each model call is
// a "chat {model}" span (kind CLIENT) and each server tool call an
// "execute_tool {tool}" span (kind INTERNAL). Tool calls that run
// concurrently get sibling spans that overlap in time. Client tools, which
// run in the front end, and calls denied approval get no span.
//
// The spans carry gen_ai.operation.name, gen_ai.provider.name,
// gen_ai.request.model, gen_ai.agent.name, gen_ai.conversation.id (from
// [agentloop.RunOptions.ConversationID]), gen_ai.request.max_tokens, temperature,
// top_p, seed and stop_sequences, gen_ai.request.stream,
// gen_ai.response.finish_reasons, gen_ai.response.time_to_first_chunk,
// gen_ai.usage.input_tokens and output_tokens, and when not zero
// gen_ai.usage.cache_read.input_tokens, cache_creation.input_tokens and
// reasoning.output_tokens (parts of the input and output counts, as
// agentloop.Usage has them; per call on chat spans, summed on the run's
// span), gen_ai.tool.name, gen_ai.tool.description and
// gen_ai.tool.call.id. The provider and model come from the model's
// [agentloop.ModelInfo]; a model that does not implement
// [agentloop.ModelDescriber] is named by the last element of its Go
// package path ("simtest"), with no model name.
//
// The time to first chunk runs from the BeforeModelCall hook to the first
// text, reasoning or tool-call delta of the call; a call that streams none
// (an Ollama reply with only whole tool calls) has none. Later deltas cost
// a context lookup and a comparison, with no allocation, whether or not the
// span is sampled.
//
// Spans that a model makes itself (an otelhttp transport on a provider's
// HTTP client) are children of the chat span when the agent's model is
// wrapped with [WrapModel]; otherwise they are children of the run's span,
// beside the chat span. A tool func gets its call's execute_tool span in
// its context (through the ToolContext hook), so spans a tool makes (a
// database call) are children of that span.
//
// A sub-agent ([agentloop.AgentTool]) traced with the same hooks (its
// Agent.Hooks, or AgentToolOptions.RunOptions.Hooks) is an
// "invoke_agent {sub-agent's Name}" span with gen_ai.agent.name, a child of
// the execute_tool span of the call that runs it, with its own chat and
// execute_tool spans under it, at any depth. A sub-agent without the hooks
// is not traced. The sub-run's items that reach the caller as
// [*agentloop.Nested] items get no span of their own.
//
// # Errors
//
// A failed or cancelled run, model call or tool call has the span status
// Error, with the error's text as its description, and error.type:
//
//	cancelled          cancelled by a hook or the context (its cause)
//	stopped            the consumer stopped ranging over the run
//	timeout            a tool ran out of time, or a deadline passed
//	panic              the tool panicked; the span also has an "exception"
//	                   event with the panic's stack in exception.stacktrace
//	unknown_tool       the model called a tool that is not offered
//	denied             the call was denied approval
//	invalid_arguments  the arguments did not fit the tool's schema
//	not_run            the call was not run because the run could not go on
//	turn_limit         the run reached Agent.MaxTurns
//	truncated          the model's output was cut off during a tool call
//	429, 503, …        a provider's HTTP status (providers.APIError)
//	rate_limit_error…  a provider's error type, for errors inside a stream
//	unreachable        the provider's server could not be reached
//	unexpected_eof     the provider's stream ended early
//	*pkg.Type          the Go type of any other error, unwrapped through
//	                   fmt.Errorf's %w
//	_OTHER             an error made by errors.New or fmt.Errorf alone, or
//	                   an error result that carries no Go error
//
// A tool's error result is an error of its execute_tool span, not of the
// run: the model sees it and the run goes on.
//
// # Paused and resumed runs
//
// A run that pauses for client tools or approvals ends its span without an
// error and with agentloop.run.paused=true,
// agentloop.run.pending.tool_call.ids and the counts
// agentloop.run.pending.client_tool_calls and
// agentloop.run.pending.approvals. The run that resumes it has
// agentloop.run.resumed=true and a span link (with
// agentloop.link.paused_run=true) to the paused run's span; each run stays
// a trace of its own, since the two are separate requests. The link
// survives between the runs as a document of the versioned store
// ([Options.Pauses], [PauseDoc]): one per conversation, beside the chat,
// shared by every replica of the store.
//
// # Content
//
// Messages, the system prompt, tool arguments and tool results are not
// recorded unless [Options.RecordContent] is set; then they follow the
// conventions' JSON shapes (gen_ai.input.messages, gen_ai.output.messages,
// gen_ai.system_instructions, gen_ai.tool.call.arguments,
// gen_ai.tool.call.result), recorded as JSON strings, after the
// [Options.Redact] hook.
//
// # Metrics
//
// gen_ai.client.operation.duration (seconds) is recorded for every run
// (invoke_agent), model call (chat) and tool call (execute_tool, with
// gen_ai.tool.name), with error.type when it failed: filter by
// gen_ai.operation.name. gen_ai.client.token.usage is recorded per model
// call that reported usage, and gen_ai.client.operation.time_to_first_chunk
// per model call that streamed a delta. The histograms use the bucket
// boundaries the conventions advise. Metrics do not depend on sampling.
//
// # Logs
//
// [LogHandler] wraps a slog.Handler to add the trace and span ids of the
// record's context; as Agent.Logger, it ties the loop's logs (tool panics,
// hook errors) to the run's span.
package telemetry
