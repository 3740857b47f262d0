package telemetry

import "go.opentelemetry.io/otel/attribute"

// The names this package records, from the OpenTelemetry semantic conventions
// for generative AI, release v1.41.0 (status "Development"), the last release
// of the conventions repository that holds them:
//
//	https://github.com/open-telemetry/semantic-conventions/tree/v1.41.0/docs/gen-ai
//
// Spans: gen-ai-agent-spans.md (invoke_agent, INTERNAL) and gen-ai-spans.md
// (chat, CLIENT; execute_tool, INTERNAL). Metrics: gen-ai-metrics.md. Content:
// gen-ai-input-messages.json, gen-ai-output-messages.json and
// gen-ai-system-instructions.json. The Go semconv packages dropped their
// GenAI constants after v1.41.0, so the keys are declared here, once.
const (
	keyOperationName       = attribute.Key("gen_ai.operation.name")
	keyProviderName        = attribute.Key("gen_ai.provider.name")
	keyRequestModel        = attribute.Key("gen_ai.request.model")
	keyRequestMaxTokens    = attribute.Key("gen_ai.request.max_tokens")
	keyRequestTemperature  = attribute.Key("gen_ai.request.temperature")
	keyRequestTopP         = attribute.Key("gen_ai.request.top_p")
	keyRequestSeed         = attribute.Key("gen_ai.request.seed")
	keyRequestStopSeqs     = attribute.Key("gen_ai.request.stop_sequences")
	keyRequestStream       = attribute.Key("gen_ai.request.stream")
	keyResponseFinish      = attribute.Key("gen_ai.response.finish_reasons")
	keyResponseTTFC        = attribute.Key("gen_ai.response.time_to_first_chunk")
	keyUsageInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	keyUsageOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	keyUsageCacheRead      = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyUsageCacheCreation  = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	keyUsageReasoning      = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	keyTokenType           = attribute.Key("gen_ai.token.type")
	keyAgentName           = attribute.Key("gen_ai.agent.name")
	keyConversationID      = attribute.Key("gen_ai.conversation.id")
	keyToolName            = attribute.Key("gen_ai.tool.name")
	keyToolDescription     = attribute.Key("gen_ai.tool.description")
	keyToolCallID          = attribute.Key("gen_ai.tool.call.id")
	keyToolCallArguments   = attribute.Key("gen_ai.tool.call.arguments")
	keyToolCallResult      = attribute.Key("gen_ai.tool.call.result")
	keyInputMessages       = attribute.Key("gen_ai.input.messages")
	keyOutputMessages      = attribute.Key("gen_ai.output.messages")
	keySystemInstructions  = attribute.Key("gen_ai.system_instructions")
	keyErrorType           = attribute.Key("error.type")
	keyExceptionType       = attribute.Key("exception.type")
	keyExceptionMessage    = attribute.Key("exception.message")
	keyExceptionStacktrace = attribute.Key("exception.stacktrace")
)

// Values of gen_ai.operation.name, gen_ai.token.type and error.type.
const (
	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"

	tokenInput  = "input"
	tokenOutput = "output"

	errorOther = "_OTHER"
)

// Metric names, units and the bucket boundaries the conventions advise.
const (
	metricTokenUsage = "gen_ai.client.token.usage"
	metricDuration   = "gen_ai.client.operation.duration"
	metricTTFC       = "gen_ai.client.operation.time_to_first_chunk"
)

var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// Attributes of this SDK, for what the conventions have no name for. They
// live under "agentloop." as the conventions ask of custom attributes.
const (
	// keyRunPaused is true on the invoke_agent span of a run that ended
	// with a Pending item: it waits for client tool results or approvals.
	keyRunPaused = attribute.Key("agentloop.run.paused")
	// keyPendingCallIDs lists the ids of the calls a paused run waits for.
	keyPendingCallIDs = attribute.Key("agentloop.run.pending.tool_call.ids")
	// keyPendingApprovals counts the calls that wait for approval.
	keyPendingApprovals = attribute.Key("agentloop.run.pending.approvals")
	// keyPendingClientCalls counts the calls that wait for the front end.
	keyPendingClientCalls = attribute.Key("agentloop.run.pending.client_tool_calls")
	// keyRunResumed is true on the invoke_agent span of a run that
	// continues a paused one; the span links to the paused run's span.
	keyRunResumed = attribute.Key("agentloop.run.resumed")
	// keyRunTurns is the number of model calls the run made.
	keyRunTurns = attribute.Key("agentloop.run.turns")
	// keyLinkPaused marks a link to the span of the run that paused.
	keyLinkPaused = attribute.Key("agentloop.link.paused_run")
)
