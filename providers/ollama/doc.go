// Package ollama is an [agentloop.Model] for Ollama's /api/chat endpoint,
// built on the official client's types, github.com/ollama/ollama/api.
//
// # Server and client
//
// [New] needs only a model name. The server is Config.Host, else the
// OLLAMA_HOST environment variable (read the way the official client reads
// it), else [DefaultHost]. The client it builds retries 429 and 5xx answers
// and failed connections before any of the body is read, with backoff and
// Retry-After; give Config.Client to use your own *api.Client instead (it
// is used as is).
//
// Without Config.Client, a Model reads the NDJSON stream itself: the
// official client's Chat allocates an 8 MB line buffer for every call,
// while this reader's buffer starts at 4 KB and grows only as far as the
// longest line needs, up to the same 8 MB, so a stream allocates tens of
// kilobytes (BenchmarkStream measures both). It sends the request the official client sends and decodes
// the lines into the same api.ChatResponse values. Requests that need the
// official client's key-signed authorization (OLLAMA_AUTH set, or a Host of
// ollama.com) and every call through a Config.Client go through the
// official client's Chat.
//
// # What a model call yields
//
// The model's thinking (with Config.Think on) streams as
// [agentloop.ReasoningDelta], closed by an empty [agentloop.ReasoningEnd]
// when text or tool calls start or the stream ends; Ollama has no reasoning
// signatures. Text streams as [agentloop.TextDelta]. Ollama sends each tool
// call whole, possibly one per chunk, so each becomes one complete
// [agentloop.ToolCall] (no deltas): the server's id when it sends one, else
// an empty id, which the loop fills; the arguments as a JSON object ({} when
// empty). The last chunk gives one [agentloop.Usage] (prompt_eval_count,
// eval_count; Ollama reports no cache counts, and its prompt_eval_count
// leaves out the prompt tokens it reused from its own KV cache) and one [agentloop.Finish]: done_reason "stop" is
// [agentloop.FinishToolCalls] when the reply made calls (Ollama does not say
// so itself) and [agentloop.FinishStop] otherwise; "length" is
// [agentloop.FinishLength], or [agentloop.FinishToolCalls] when the reply
// made calls, since Ollama passes on only calls it parsed whole (see the
// providers package doc); anything else ("load", "unload") is
// [agentloop.FinishOther].
//
// # What a request sends
//
// The system prompt and system messages as "system" messages; user text and
// images (file parts with Data, or data: URLs; Ollama takes no other files
// and cannot fetch URLs); assistant text, reasoning (in "thinking") and tool
// calls with their ids, names and arguments; each tool result as a "tool"
// message with tool_call_id and tool_name. Approval parts are not sent.
// Tools are sent as Ollama function tools; their JSON Schema must describe an
// object, and the keywords Ollama's tool type has no field for
// (additionalProperties, minimum, format, …) are left out, as the Ollama
// server would drop them anyway. Settings map to the options num_predict,
// temperature, top_p, seed and stop, over Config.Options, Config.Temperature
// and Config.NumCtx; Config.KeepAlive is sent as keep_alive.
// Settings.ResponseFormat's schema is sent as the request's "format": the
// server then constrains every token of the reply to the schema with a
// grammar, so a model cannot call tools in a request that has one (Ollama
// applies the grammar to the whole reply, a tool call's text included).
//
// # Errors
//
// An HTTP error answer, and an {"error": …} line inside a 200 stream, is a
// *providers.APIError (Provider "ollama"), checkable with errors.Is against
// providers.ErrModelNotFound, providers.ErrRateLimited and the other sentinels;
// its RetryAfter is always 0, as the official client does not pass the
// header on. A missing model is that error wrapped in one that tells the
// user to run `ollama pull NAME`. A server that cannot be reached gives an
// error that wraps providers.ErrUnreachable and the network error, and
// names the URL tried and OLLAMA_HOST. A stream that ends without its final
// chunk wraps io.ErrUnexpectedEOF; a line that is not JSON is an error that
// quotes it; a line longer than 8 MB is an error that names it (this
// package's reader; the official client's Chat stops reading at such a
// line, which is then reported as a stream without its final chunk). A cancelled context gives an error wrapping ctx.Err() and its
// cause.
package ollama
