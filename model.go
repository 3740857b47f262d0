package agentloop

import (
	"context"
	"encoding/json"
	"iter"
)

// Model is an LLM behind one streaming call. Providers (providers/ollama,
// providers/openai, providers/anthropic) and the scripted simtest.Model
// implement it.
//
// Stream sends req and returns the reply as a sequence of chunks in the
// order the model produced them: [TextDelta], [ReasoningDelta],
// [ReasoningEnd], [ToolCallDelta], [ToolCall], [Usage] and [Finish]. A
// sequence that fails yields one non-nil error as its last element. The
// sequence is used once. When the consumer stops early, or ctx is done, the
// implementation must release the connection and every goroutine it started
// before its iterator function returns.
//
// Stream must not modify req or anything it points to; the loop may reuse
// them. Implementations must be safe for concurrent use by several runs.
type Model interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// ModelFunc adapts a function to the [Model] interface.
type ModelFunc func(ctx context.Context, req *Request) iter.Seq2[Chunk, error]

// Stream calls f(ctx, req).
func (f ModelFunc) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return f(ctx, req)
}

// Request is one model call.
type Request struct {
	// Turn is the 1-based number of this model call within its run.
	Turn int
	// System is the system prompt; "" means none. Providers put it where
	// their API wants it. System messages inside Messages are sent as well.
	System string
	// Messages is the history so far, oldest first. Every tool call in it
	// has a result. Without a BeforeModelCall hook it shares memory with the
	// run's history; with one, it is a deep copy the hooks may change. After
	// a handoff to an agent with a HandoffFilter, it is what the filter
	// returned (the hooks may change it too).
	Messages History
	// Tools are the tools offered on this call; empty means none.
	Tools []ToolDef
	// Settings are optional sampling settings. Zero values mean the
	// provider's defaults.
	Settings Settings
	// Agent names the agent whose model is called, in runs with handoffs
	// (as [TurnStart.Agent]); "" in other runs. Hooks that serve several
	// agents of a run tell them apart by it (ctxwindow's Config.Agent).
	Agent string
}

// Settings are the sampling settings of a [Request]. A nil pointer or a zero
// value means the provider's default.
type Settings struct {
	// MaxTokens bounds the tokens of one model call's output; 0 means the
	// provider's default.
	MaxTokens int `json:"maxTokens,omitempty"`
	// Temperature is the sampling temperature; nil means the default.
	Temperature *float64 `json:"temperature,omitempty"`
	// TopP is the nucleus-sampling probability mass; nil means the default.
	TopP *float64 `json:"topP,omitempty"`
	// Seed asks for reproducible sampling where supported; nil means none.
	Seed *int `json:"seed,omitempty"`
	// Stop are sequences that end the output; nil means none.
	Stop []string `json:"stop,omitempty"`
	// ResponseFormat asks for a final answer that is JSON matching a
	// schema; nil means free text. See [ResponseFormat] for how each
	// provider honours it, and [Structured] for a run that decodes and
	// validates the answer.
	ResponseFormat *ResponseFormat `json:"responseFormat,omitempty"`
}

// ModelInfo names a model for logs and traces.
type ModelInfo struct {
	// Provider is the provider's name as OpenTelemetry's gen_ai.provider.name
	// spells it: "ollama", "openai", "anthropic"…
	Provider string
	// Model is the name of the model requested.
	Model string
}

// ModelDescriber is implemented by models that can name themselves; the
// providers' models do. Observability code checks for it with a type
// assertion; a Model need not implement it.
type ModelDescriber interface {
	ModelInfo() ModelInfo
}

// ToolDef is what the model is told about a tool.
type ToolDef struct {
	// Name is what the model calls the tool by; unique within a request.
	Name string `json:"name"`
	// Description tells the model what the tool does; "" means none.
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the tool's arguments: an object schema,
	// with no $ref and an explicit "required" list.
	Schema json.RawMessage `json:"schema"`
}

// Chunk is one piece of a model's streamed reply: [TextDelta],
// [ReasoningDelta], [ReasoningEnd], [ToolCallDelta], [ToolCall], [Usage] or
// [Finish]. The set is closed.
type Chunk interface{ isChunk() }

// Item is one element of a run's stream, yielded by [Agent.Stream] in the
// order things happen. Each turn yields [TurnStart]; the model's
// [ReasoningDelta], [ReasoningEnd], [TextDelta], [ToolCallDelta] and
// [ToolCallReady] as they stream; [TurnEnd]; then, while the turn's tools run,
// [ToolProgress] and [ToolResultReady] (results in call order). The last item
// of a run that did not fail is a [Final] or a [Pending]. The set is closed.
type Item interface{ isItem() }

// TextDelta is a piece of the model's visible answer. It is both a [Chunk]
// and an [Item]; the loop passes it through unchanged, as the same interface
// value: a model that yields a TextDelta it holds boxed already (chunks
// kept in memory and streamed again) costs no allocation per delta, and
// one that boxes a new TextDelta per delta costs that one allocation.
type TextDelta struct {
	// Text is the piece, never empty when yielded by the loop.
	Text string
}

// ReasoningDelta is a piece of the model's reasoning ("thinking"). It is both
// a [Chunk] and an [Item].
type ReasoningDelta struct {
	// Text is the piece, never empty when yielded by the loop.
	Text string
}

// ReasoningEnd closes the current reasoning block. It is both a [Chunk] and an
// [Item]. A provider yields it when the block's signature or redacted content
// is known; a provider that has neither may leave it out, and the loop then
// closes the block itself when something else starts. As an Item it is
// always yielded, once per block.
//
// A block with Redacted content may have no deltas at all.
type ReasoningEnd struct {
	// Signature is the provider's signature of the block; "" if none.
	Signature string
	// Redacted is the block's opaque, provider-encrypted content; "" if none.
	Redacted string
}

// ToolCallDelta is a piece of a tool call's arguments as the model writes
// them. It is both a [Chunk] and an [Item]. Index is the call's 0-based
// position within this model call: the n-th [ToolCall] chunk of a model call
// completes the call whose deltas had Index n. As a Chunk, ID is the server's
// id for the call or "" when it gave none, and Name is set when known. As an
// Item, ID is the loop's id for the call, the same as on its
// [ToolCallReady] and in the history. Providers that receive calls whole
// (Ollama) may yield no deltas.
type ToolCallDelta struct {
	// Index is the call's 0-based position within its model call.
	Index int
	// ID is the call's id, when known.
	ID string
	// Name is the called tool's name, when known.
	Name string
	// Args is the next piece of the argument text; the pieces of one call
	// join to its whole arguments.
	Args string
}

// Usage counts tokens. As a [Chunk], the loop adds up every Usage of a
// model call, so a provider yields increments (usually one, at the end).
//
// The counts nest, as OpenTelemetry's gen_ai.usage attributes do: Input is
// every prompt token the model read, cached or not, so CacheRead and
// CacheWrite are parts of Input (Input - CacheRead - CacheWrite were read
// without the cache); Reasoning is part of Output. Providers whose API
// counts cache tokens apart from the input (Anthropic, Gemini's thoughts
// apart from the candidates) add them in, so Input and Output mean the same
// for every provider and a token is never counted twice. A zero count means
// none or not reported.
type Usage struct {
	// Input counts every prompt token, including CacheRead and CacheWrite.
	Input int `json:"input"`
	// Output counts every generated token, including Reasoning.
	Output int `json:"output"`
	// CacheRead counts the prompt tokens served from the provider's prompt
	// cache (gen_ai.usage.cache_read.input_tokens); part of Input.
	CacheRead int `json:"cacheRead,omitempty"`
	// CacheWrite counts the prompt tokens written to the provider's prompt
	// cache (gen_ai.usage.cache_creation.input_tokens); part of Input.
	CacheWrite int `json:"cacheWrite,omitempty"`
	// Reasoning counts the output tokens spent on reasoning
	// (gen_ai.usage.reasoning.output_tokens); part of Output.
	Reasoning int `json:"reasoning,omitempty"`
}

// Add returns the sum of u and v, count by count.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:      u.Input + v.Input,
		Output:     u.Output + v.Output,
		CacheRead:  u.CacheRead + v.CacheRead,
		CacheWrite: u.CacheWrite + v.CacheWrite,
		Reasoning:  u.Reasoning + v.Reasoning,
	}
}

// Total returns Input + Output: every token the model read or wrote.
func (u Usage) Total() int { return u.Input + u.Output }

// FinishReason says why a model call ended.
type FinishReason string

// Finish reasons. Providers map their own onto these.
const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishContentFilter FinishReason = "content_filter"
	FinishError         FinishReason = "error"
	FinishOther         FinishReason = "other"
)

// Finish is the [Chunk] that gives the finish reason, normally last. When a
// model yields none, the loop uses [FinishToolCalls] if the call produced
// tool calls and [FinishStop] otherwise.
type Finish struct {
	// Reason says why the model call ended.
	Reason FinishReason
}

func (TextDelta) isChunk()      {}
func (ReasoningDelta) isChunk() {}
func (ReasoningEnd) isChunk()   {}
func (ToolCallDelta) isChunk()  {}
func (ToolCall) isChunk()       {}
func (Usage) isChunk()          {}
func (Finish) isChunk()         {}
