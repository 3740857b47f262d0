package simtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
)

// This file is a Go stand-in for the AI SDK's useChat (ai@7 Chat +
// DefaultChatTransport) with automatic re-send. It validates every chunk of
// the UI message stream against the protocol's schema and ordering rules on
// its own (it shares no code with the server side), builds the assistant
// message the way processUIMessageStream does, and re-posts while the last
// assistant message is complete with client tool outputs or approval
// responses.

// UIMessage is a chat message as the AI SDK client holds and posts it.
type UIMessage struct {
	ID       string          `json:"id"`
	Role     string          `json:"role"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Parts    []UIPart        `json:"parts"`
}

// UIPart is one part of a [UIMessage]: a union of the fields of every part
// type. Fields that do not apply to Type are zero and left out of the JSON.
// For tool parts, Type is "tool-<name>" (or "dynamic-tool" with ToolName).
type UIPart struct {
	Type  string `json:"type"`
	State string `json:"state,omitempty"`
	// Text holds the text of text and reasoning parts.
	Text string `json:"text,omitempty"`
	// ID is the id of reasoning, data and steering-message parts.
	ID string `json:"id,omitempty"`

	ToolCallID       string          `json:"toolCallId,omitempty"`
	ToolName         string          `json:"toolName,omitempty"`
	Title            string          `json:"title,omitempty"`
	Input            json.RawMessage `json:"input,omitempty"`
	RawInput         string          `json:"rawInput,omitempty"`
	Output           json.RawMessage `json:"output,omitempty"`
	ErrorText        string          `json:"errorText,omitempty"`
	ProviderExecuted *bool           `json:"providerExecuted,omitempty"`
	Preliminary      *bool           `json:"preliminary,omitempty"`
	Approval         *UIApproval     `json:"approval,omitempty"`

	// Data is the payload of data-* parts.
	Data json.RawMessage `json:"data,omitempty"`
	// Raw is the chunk a source, file, custom or steering-message part was
	// made from; such parts are posted back as that chunk.
	Raw json.RawMessage `json:"-"`
}

// MarshalJSON posts parts made from a chunk as the chunk's fields, and
// tool parts with their input always present.
func (p UIPart) MarshalJSON() ([]byte, error) {
	if p.Raw != nil {
		return p.Raw, nil
	}
	type plain UIPart
	if isToolPart(p.Type) && p.Input == nil {
		p.Input = json.RawMessage("null")
	}
	b, err := json.Marshal(plain(p))
	if err == nil && p.Text == "" && (p.Type == "text" || p.Type == "reasoning") {
		// "text" is required on text and reasoning parts, even when empty.
		b = append([]byte(`{"text":"",`), b[1:]...)
	}
	return b, err
}

// UIApproval is the approval of a tool part.
type UIApproval struct {
	ID       string `json:"id"`
	Approved *bool  `json:"approved,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// ClientToolFunc answers a client tool call the way a useChat onToolCall
// handler does with addToolOutput: the output (marshalled to JSON) or an
// error (posted as an output-error with the error's text).
type ClientToolFunc func(input json.RawMessage) (output any, err error)

// ApprovalFunc answers a tool approval request the way a UI calls
// addToolApprovalResponse.
type ApprovalFunc func(toolName string, input json.RawMessage) (approved bool, reason string)

// Exchange is one POST of a [ChatClient] and the chunks of its answer.
type Exchange struct {
	// Request is the posted JSON body.
	Request json.RawMessage
	// Status is the HTTP status of the response.
	Status int
	// Chunks holds the data of every SSE event, "[DONE]" excluded, in order.
	Chunks []json.RawMessage
	// Done reports whether the stream ended with data: [DONE].
	Done bool
}

// DefaultMaxRoundTrips is the bound on POSTs per [ChatClient.Send] when
// MaxRoundTrips is zero.
const DefaultMaxRoundTrips = 8

// ErrTooManyRoundTrips is wrapped by the error of a [ChatClient.Send] that
// would re-post more than MaxRoundTrips times: the server keeps ending
// responses that the client must continue (the re-POST loop).
var ErrTooManyRoundTrips = errors.New("simtest: too many automatic re-sends")

// ErrProtocol is wrapped by every error about a chunk or stream that breaks
// the UI message stream protocol.
var ErrProtocol = errors.New("simtest: UI message stream protocol violation")

// ChunkError reports a chunk that fails validation. It wraps [ErrProtocol].
type ChunkError struct {
	// Request is the 1-based index of the POST in this Send, Index the
	// 1-based index of the chunk in its response.
	Request, Index int
	// Chunk is the chunk's data as received.
	Chunk string
	// Reason says what is wrong.
	Reason string
}

func (e *ChunkError) Error() string {
	return fmt.Sprintf("simtest: response %d, chunk %d %s: %s", e.Request, e.Index, e.Chunk, e.Reason)
}

func (e *ChunkError) Unwrap() error { return ErrProtocol }

// StreamError is the error of a response that sent an error chunk: what
// useChat shows as the chat's error (status "error").
type StreamError struct {
	ErrorText string
}

func (e *StreamError) Error() string { return "simtest: error chunk: " + e.ErrorText }

// HTTPStatusError is the error of a non-2xx response.
type HTTPStatusError struct {
	Status int
	Body   string
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("simtest: HTTP %d: %s", e.Status, strings.TrimSpace(e.Body))
}

// ChatClient drives a chat handler like useChat with
// sendAutomaticallyWhen set to lastAssistantMessageIsCompleteWithToolCalls
// or lastAssistantMessageIsCompleteWithApprovalResponses. Set Handler (run
// in-process) or URL. The zero value of the other fields is usable. A
// ChatClient is not safe for concurrent use.
type ChatClient struct {
	// Handler, when non-nil, serves the POSTs in-process.
	Handler http.Handler
	// URL is posted to when Handler is nil, with HTTPClient (nil means
	// http.DefaultClient).
	URL        string
	HTTPClient *http.Client
	// ChatID is the body's "id"; "" means "chat-1".
	ChatID string
	// Body holds extra body fields merged under the chat fields, as
	// DefaultChatTransport's body option does (for example assistant-ui's
	// "tools", "system" and "metadata").
	Body map[string]any
	// Tools answers client tool calls by tool name. A call whose tool is
	// not here is left alone (a server tool, or one awaiting approval).
	Tools map[string]ClientToolFunc
	// Approve answers approval requests. Nil leaves them unanswered, which
	// ends the Send with the request pending.
	Approve ApprovalFunc
	// MaxRoundTrips bounds the POSTs of one Send; 0 means
	// DefaultMaxRoundTrips.
	MaxRoundTrips int

	messages   []UIMessage
	transcript []Exchange
	nextID     int
}

// Messages returns the chat's messages. The caller must not modify them.
func (c *ChatClient) Messages() []UIMessage { return c.messages }

// Transcript returns every POST so far with its chunks, in order.
func (c *ChatClient) Transcript() []Exchange { return c.transcript }

// SetMessages replaces the chat's messages (a chat loaded from storage).
func (c *ChatClient) SetMessages(msgs []UIMessage) { c.messages = msgs }

// Send posts a user message with text, then re-posts automatically while
// the last assistant message is complete with client tool outputs or
// approval responses. It returns the chat's messages after the last
// response. The error is a *[ChunkError] for an invalid chunk, a
// *[StreamError] for an error chunk, a *[HTTPStatusError] for a non-2xx
// answer, or wraps [ErrTooManyRoundTrips]; the messages then hold what the
// client had applied.
func (c *ChatClient) Send(ctx context.Context, text string) ([]UIMessage, error) {
	c.messages = append(c.messages, UIMessage{
		ID:    c.newID("user"),
		Role:  "user",
		Parts: []UIPart{{Type: "text", Text: text}},
	})
	limit := c.MaxRoundTrips
	if limit <= 0 {
		limit = DefaultMaxRoundTrips
	}
	messageID := ""
	for n := 1; ; n++ {
		if n > limit {
			return c.messages, fmt.Errorf("%w: %d POSTs and the last assistant message still asks for another (the server ends responses on completed tool calls)", ErrTooManyRoundTrips, limit)
		}
		finish, err := c.post(ctx, n, messageID)
		if err != nil {
			return c.messages, err
		}
		if finish == "interrupted" {
			return c.messages, nil
		}
		c.answerApprovals()
		if !CompleteWithToolCalls(c.messages) && !CompleteWithApprovalResponses(c.messages) {
			return c.messages, nil
		}
		messageID = c.messages[len(c.messages)-1].ID
	}
}

func (c *ChatClient) newID(prefix string) string {
	c.nextID++
	return prefix + "-" + strconv.Itoa(c.nextID)
}

// answerApprovals answers the approval requests of the last step.
func (c *ChatClient) answerApprovals() {
	if c.Approve == nil || len(c.messages) == 0 {
		return
	}
	m := &c.messages[len(c.messages)-1]
	if m.Role != "assistant" {
		return
	}
	for i := lastStepStart(m.Parts) + 1; i < len(m.Parts); i++ {
		p := &m.Parts[i]
		if !isToolPart(p.Type) || p.State != "approval-requested" || p.Approval == nil {
			continue
		}
		ok, reason := c.Approve(toolName(*p), p.Input)
		p.State = "approval-responded"
		p.Approval.Approved = &ok
		p.Approval.Reason = reason
	}
}

// post sends the chat and applies the response; it returns the finish
// reason.
func (c *ChatClient) post(ctx context.Context, n int, messageID string) (string, error) {
	body := map[string]any{}
	for k, v := range c.Body {
		body[k] = v
	}
	id := c.ChatID
	if id == "" {
		id = "chat-1"
	}
	body["id"], body["messages"], body["trigger"] = id, c.messages, "submit-message"
	if messageID != "" {
		body["messageId"] = messageID
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("simtest: marshal the request: %w", err)
	}
	c.transcript = append(c.transcript, Exchange{Request: raw})
	ex := &c.transcript[len(c.transcript)-1]

	resp, err := c.do(ctx, raw)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	ex.Status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return "", &HTTPStatusError{Status: resp.StatusCode, Body: string(b)}
	}

	// Continue the last assistant message, or start a new one.
	var asst UIMessage
	continued := messageID != "" && c.messages[len(c.messages)-1].Role == "assistant"
	if continued {
		asst = c.messages[len(c.messages)-1]
		c.messages = c.messages[:len(c.messages)-1]
	} else {
		asst = UIMessage{ID: c.newID("client-msg"), Role: "assistant"}
	}
	b := &builder{client: c, msg: &asst, continued: continued, request: n,
		text: map[string]int{}, reasoning: map[string]int{}, streaming: map[string]bool{}, inputs: map[string]bool{}}
	err = readSSE(resp.Body, func(data string) error {
		if data == "[DONE]" {
			ex.Done = true
			return nil
		}
		ex.Chunks = append(ex.Chunks, json.RawMessage(data))
		if b.stopped {
			return nil
		}
		return b.apply(len(ex.Chunks), data)
	})
	if err == nil && !b.stopped {
		err = b.checkEnd()
	}
	if len(asst.Parts) > 0 || continued || asst.Metadata != nil {
		c.messages = append(c.messages, asst)
	}
	if err != nil {
		return "", err
	}
	if b.errorText != nil {
		return "", &StreamError{ErrorText: *b.errorText}
	}
	return b.finish, nil
}

func (c *ChatClient) do(ctx context.Context, body []byte) (*http.Response, error) {
	url := c.URL
	if c.Handler != nil && url == "" {
		url = "http://simtest.local/api/chat"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("simtest: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Handler != nil {
		rec := httptest.NewRecorder()
		c.Handler.ServeHTTP(rec, req)
		return rec.Result(), nil
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("simtest: POST %s: %w", url, err)
	}
	return resp, nil
}

// readSSE calls fn with the data of every event of an SSE body, the way
// eventsource-parser does: CR, LF or CRLF line ends, "data:" with or without
// a space, several data lines joined by "\n", comments and other fields
// ignored, an event dispatched at a blank line.
func readSSE(r io.Reader, fn func(data string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	sc.Split(scanLines)
	var data []string
	has := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if has {
				if err := fn(strings.Join(data, "\n")); err != nil {
					return err
				}
			}
			data, has = data[:0], false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		if field == "data" {
			data = append(data, value)
			has = true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("simtest: reading the stream: %w", err)
	}
	return nil
}

// scanLines splits at CRLF, LF or CR.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	for i, b := range data {
		switch b {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // need more to tell CR from CRLF
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// CompleteWithToolCalls reports what the AI SDK's
// lastAssistantMessageIsCompleteWithToolCalls does: the last message is an
// assistant message whose last step has client tool parts (not
// providerExecuted), all with an output (not preliminary) or an error, and
// no unfinished text after the last of them.
func CompleteWithToolCalls(msgs []UIMessage) bool {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "assistant" {
		return false
	}
	parts := msgs[len(msgs)-1].Parts
	step := parts[lastStepStart(parts)+1:]
	last, count := -1, 0
	for i, p := range step {
		if !isToolPart(p.Type) || isTrue(p.ProviderExecuted) {
			continue
		}
		last, count = i, count+1
		if !(p.State == "output-available" && !isTrue(p.Preliminary)) && p.State != "output-error" {
			return false
		}
	}
	if count == 0 {
		return false
	}
	for _, p := range step[last+1:] {
		if p.Type == "text" && p.State != "done" {
			return false
		}
	}
	return true
}

// CompleteWithApprovalResponses reports what the AI SDK's
// lastAssistantMessageIsCompleteWithApprovalResponses does: the last
// step of the last (assistant) message has an approval-responded tool part,
// and every tool part of it is answered, denied or approval-responded.
func CompleteWithApprovalResponses(msgs []UIMessage) bool {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "assistant" {
		return false
	}
	parts := msgs[len(msgs)-1].Parts
	responded := false
	for _, p := range parts[lastStepStart(parts)+1:] {
		if !isToolPart(p.Type) {
			continue
		}
		switch {
		case p.State == "approval-responded":
			responded = true
		case p.State == "output-available" && !isTrue(p.Preliminary), p.State == "output-error", p.State == "output-denied":
		default:
			return false
		}
	}
	return responded
}

func lastStepStart(parts []UIPart) int {
	last := -1
	for i, p := range parts {
		if p.Type == "step-start" {
			last = i
		}
	}
	return last
}

func isToolPart(typ string) bool { return strings.HasPrefix(typ, "tool-") || typ == "dynamic-tool" }

func toolName(p UIPart) string {
	if p.Type == "dynamic-tool" {
		return p.ToolName
	}
	return strings.TrimPrefix(p.Type, "tool-")
}

func isTrue(b *bool) bool { return b != nil && *b }

// fieldKind is the schema type of a chunk field.
type fieldKind uint8

const (
	kString fieldKind = iota + 1
	kBool
	kAny      // unknown: any JSON, null included
	kProvMeta // record<string, record<string, JSON>>
	kRecord   // record<string, JSON>
	kArray
	kFinishReason
	kInputEncoding
	kNonNegInt
	kStringRecord  // record<string, string>
	kCitations     // array of citations (text-end)
	kSteeringParts // array of steering-message parts
)

type fieldSpec struct {
	name string
	kind fieldKind
}

var (
	pm       = fieldSpec{"providerMetadata", kProvMeta}
	toolOpts = []fieldSpec{{"providerExecuted", kBool}, pm, {"toolMetadata", kRecord}, {"dynamic", kBool}, {"title", kString}}
)

// chunkSchemas holds, per chunk type, its required and optional fields
// (ui-message-stream.md §2.1). Unknown extra keys are allowed.
var chunkSchemas = map[string]struct{ req, opt []fieldSpec }{
	"start":                  {nil, []fieldSpec{{"messageId", kString}, {"messageMetadata", kAny}}},
	"start-step":             {},
	"finish-step":            {},
	"reset-step":             {},
	"text-start":             {[]fieldSpec{{"id", kString}}, []fieldSpec{pm}},
	"text-delta":             {[]fieldSpec{{"id", kString}, {"delta", kString}}, []fieldSpec{pm}},
	"text-end":               {[]fieldSpec{{"id", kString}}, []fieldSpec{{"citations", kCitations}, pm}},
	"reasoning-start":        {[]fieldSpec{{"id", kString}}, []fieldSpec{pm}},
	"reasoning-delta":        {[]fieldSpec{{"id", kString}, {"delta", kString}}, []fieldSpec{pm}},
	"reasoning-end":          {[]fieldSpec{{"id", kString}}, []fieldSpec{pm}},
	"error":                  {[]fieldSpec{{"errorText", kString}}, nil},
	"tool-input-start":       {[]fieldSpec{{"toolCallId", kString}, {"toolName", kString}}, append([]fieldSpec{{"inputEncoding", kInputEncoding}}, toolOpts...)},
	"tool-input-delta":       {[]fieldSpec{{"toolCallId", kString}, {"inputTextDelta", kString}}, nil},
	"tool-input-available":   {[]fieldSpec{{"toolCallId", kString}, {"toolName", kString}, {"input", kAny}}, toolOpts},
	"tool-input-error":       {[]fieldSpec{{"toolCallId", kString}, {"toolName", kString}, {"input", kAny}, {"errorText", kString}}, toolOpts},
	"tool-approval-request":  {[]fieldSpec{{"approvalId", kString}, {"toolCallId", kString}}, []fieldSpec{{"approvalDescriptor", kAny}, {"inputSchemaInput", kAny}, {"reason", kString}, {"isAutomatic", kBool}, {"signature", kString}}},
	"tool-approval-response": {[]fieldSpec{{"approvalId", kString}, {"approved", kBool}}, []fieldSpec{{"reason", kString}, {"providerExecuted", kBool}, pm}},
	"tool-output-available":  {[]fieldSpec{{"toolCallId", kString}, {"output", kAny}}, []fieldSpec{{"providerExecuted", kBool}, pm, {"toolMetadata", kRecord}, {"dynamic", kBool}, {"preliminary", kBool}}},
	"tool-output-error":      {[]fieldSpec{{"toolCallId", kString}, {"errorText", kString}}, []fieldSpec{{"providerExecuted", kBool}, pm, {"toolMetadata", kRecord}, {"dynamic", kBool}}},
	"tool-output-denied":     {[]fieldSpec{{"toolCallId", kString}}, nil},
	"source-url":             {[]fieldSpec{{"sourceId", kString}, {"url", kString}}, []fieldSpec{{"title", kString}, pm}},
	"source-document":        {[]fieldSpec{{"sourceId", kString}, {"mediaType", kString}, {"title", kString}}, []fieldSpec{{"filename", kString}, pm}},
	"file":                   {[]fieldSpec{{"url", kString}, {"mediaType", kString}}, []fieldSpec{pm}},
	"reasoning-file":         {[]fieldSpec{{"url", kString}, {"mediaType", kString}}, []fieldSpec{pm}},
	"custom":                 {[]fieldSpec{{"kind", kString}}, []fieldSpec{pm}},
	"steering-message":       {[]fieldSpec{{"id", kString}, {"parts", kSteeringParts}}, nil},
	"finish":                 {nil, []fieldSpec{{"finishReason", kFinishReason}, {"messageMetadata", kAny}}},
	"abort":                  {nil, []fieldSpec{{"reason", kString}}},
	"message-metadata":       {[]fieldSpec{{"messageMetadata", kAny}}, nil},
}

var dataChunkSchema = struct{ req, opt []fieldSpec }{[]fieldSpec{{"data", kAny}}, []fieldSpec{{"id", kString}, {"transient", kBool}}}

// ValidateChunk checks one chunk (the data of an SSE event) against the AI
// SDK client's chunk schema (uiMessageChunkSchema of ai@7): known type,
// required fields present, typed optional fields absent rather than null,
// finishReason and inputEncoding enums, providerMetadata two levels deep,
// citations and steering-message parts. Unknown extra keys are allowed. It
// does not check ordering (a [ChatClient] does). The error wraps
// [ErrProtocol] and names the field.
func ValidateChunk(data []byte) error {
	if _, _, err := validateChunk(string(data)); err != nil {
		return fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	return nil
}

// validateChunk checks a chunk against the client's schema and returns its
// fields and type.
func validateChunk(data string) (map[string]json.RawMessage, string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &fields); err != nil {
		return nil, "", fmt.Errorf("not a JSON object: %w", err)
	}
	var typ string
	if err := json.Unmarshal(fields["type"], &typ); err != nil || fields["type"] == nil {
		return nil, "", errors.New(`"type" is missing or not a string`)
	}
	schema, ok := chunkSchemas[typ]
	if !ok {
		if !strings.HasPrefix(typ, "data-") {
			return nil, typ, fmt.Errorf("unknown chunk type %q", typ)
		}
		schema = dataChunkSchema
	}
	if err := checkFields(fields, schema.req, schema.opt); err != nil {
		return nil, typ, fmt.Errorf("%s: %w", typ, err)
	}
	return fields, typ, nil
}

// checkFields checks an object's required and optional fields.
func checkFields(fields map[string]json.RawMessage, req, opt []fieldSpec) error {
	for _, f := range req {
		raw, ok := fields[f.name]
		if !ok {
			return fmt.Errorf("required field %q is missing", f.name)
		}
		if err := checkKind(raw, f.kind); err != nil {
			return fmt.Errorf("field %q: %w", f.name, err)
		}
	}
	for _, f := range opt {
		raw, ok := fields[f.name]
		if !ok {
			continue
		}
		if err := checkKind(raw, f.kind); err != nil {
			return fmt.Errorf("optional field %q: %w (omit the key instead)", f.name, err)
		}
	}
	return nil
}

// checkUnion checks each element of an array against the variant its
// discriminator key selects.
func checkUnion(raw json.RawMessage, key string, variants map[string][2][]fieldSpec) error {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return fmt.Errorf("want an array of objects, got %s", raw)
	}
	for i, it := range items {
		var d string
		_ = json.Unmarshal(it[key], &d)
		v, ok := variants[d]
		if !ok {
			return fmt.Errorf("element %d: %q %s is not one of the allowed kinds", i, key, it[key])
		}
		if err := checkFields(it, v[0], v[1]); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

var (
	citationSources = map[string][2][]fieldSpec{
		"url":      {{{"type", kString}, {"id", kString}, {"url", kString}}, {{"title", kString}, pm}},
		"document": {{{"type", kString}, {"id", kString}, {"mediaType", kString}, {"title", kString}}, {{"filename", kString}, pm}},
	}
	steeringParts = map[string][2][]fieldSpec{
		"text": {{{"text", kString}}, {pm}},
		"file": {{{"mediaType", kString}, {"url", kString}}, {{"filename", kString}, {"providerReference", kStringRecord}, pm}},
	}
)

func checkCitations(raw json.RawMessage) error {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return fmt.Errorf("want an array of citations, got %s", raw)
	}
	for i, it := range items {
		if err := checkFields(it, []fieldSpec{{"source", kRecord}}, []fieldSpec{{"startIndex", kNonNegInt}, {"endIndex", kNonNegInt}, {"citedText", kString}}); err != nil {
			return fmt.Errorf("citation %d: %w", i, err)
		}
		if string(it["source"]) == "null" {
			return fmt.Errorf("citation %d: source is null", i)
		}
		var src map[string]json.RawMessage
		_ = json.Unmarshal(it["source"], &src)
		if string(src["type"]) != `"source"` {
			return fmt.Errorf(`citation %d: source.type %s, want "source"`, i, src["type"])
		}
		if err := checkUnion(json.RawMessage("["+string(it["source"])+"]"), "sourceType", citationSources); err != nil {
			return fmt.Errorf("citation %d source: %w", i, err)
		}
	}
	return nil
}

var finishReasons = []string{"stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other"}

func checkKind(raw json.RawMessage, kind fieldKind) error {
	isNull := string(bytes.TrimSpace(raw)) == "null"
	if kind == kAny {
		return nil
	}
	if isNull {
		return errors.New("null is not allowed")
	}
	switch kind {
	case kString:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("want a string, got %s", raw)
		}
	case kBool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return fmt.Errorf("want a boolean, got %s", raw)
		}
	case kArray:
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) != nil {
			return fmt.Errorf("want an array, got %s", raw)
		}
	case kRecord:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return fmt.Errorf("want an object, got %s", raw)
		}
	case kProvMeta:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return fmt.Errorf("want an object of objects, got %s", raw)
		}
		for k, v := range m {
			var inner map[string]json.RawMessage
			if json.Unmarshal(v, &inner) != nil || string(bytes.TrimSpace(v)) == "null" {
				return fmt.Errorf("want {provider: {key: value}}, but %q is %s", k, v)
			}
		}
	case kNonNegInt:
		var n int64
		if json.Unmarshal(raw, &n) != nil || n < 0 {
			return fmt.Errorf("want a non-negative integer, got %s", raw)
		}
	case kStringRecord:
		var m map[string]string
		if json.Unmarshal(raw, &m) != nil {
			return fmt.Errorf("want an object of strings, got %s", raw)
		}
	case kCitations:
		return checkCitations(raw)
	case kSteeringParts:
		return checkUnion(raw, "type", steeringParts)
	case kFinishReason, kInputEncoding:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("want a string, got %s", raw)
		}
		allowed := []string{"json", "text"}
		if kind == kFinishReason {
			allowed = finishReasons
		}
		for _, a := range allowed {
			if s == a {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", s, strings.Join(allowed, ", "))
	}
	return nil
}

// builder applies the chunks of one response to the assistant message, as
// processUIMessageStream does, and enforces the ordering rules.
type builder struct {
	client    *ChatClient
	msg       *UIMessage
	continued bool
	request   int

	text, reasoning map[string]int  // active part ids → part index
	streaming       map[string]bool // tool calls started in this response
	inputs          map[string]bool // tool calls whose input this response completed
	finish          string
	errorText       *string
	stopped         bool
}

func (b *builder) apply(index int, data string) error {
	fail := func(format string, args ...any) error {
		return &ChunkError{Request: b.request, Index: index, Chunk: data, Reason: fmt.Sprintf(format, args...)}
	}
	f, typ, err := validateChunk(data)
	if err != nil {
		return fail("%v", err)
	}
	str := func(name string) string {
		var s string
		_ = json.Unmarshal(f[name], &s)
		return s
	}
	flag := func(name string) *bool {
		if f[name] == nil {
			return nil
		}
		var v bool
		_ = json.Unmarshal(f[name], &v)
		return &v
	}
	parts := &b.msg.Parts
	switch typ {
	case "start":
		if id := str("messageId"); f["messageId"] != nil {
			if b.continued && id != b.msg.ID {
				return fail("start.messageId %q differs from the continued assistant message %q (the chat would show two assistant messages)", id, b.msg.ID)
			}
			b.msg.ID = id
		}
		b.mergeMetadata(f["messageMetadata"])
	case "start-step":
		*parts = append(*parts, UIPart{Type: "step-start"})
	case "finish-step", "abort":
	case "reset-step":
		*parts = (*parts)[:lastStepStart(*parts)+1]
		clear(b.text)
		clear(b.reasoning)
		clear(b.streaming)
		clear(b.inputs)
	case "text-start", "reasoning-start":
		active := b.text
		p := UIPart{Type: "text", State: "streaming"}
		if typ == "reasoning-start" {
			active, p = b.reasoning, UIPart{Type: "reasoning", State: "streaming", ID: str("id")}
		}
		*parts = append(*parts, p)
		active[str("id")] = len(*parts) - 1
	case "text-delta", "text-end", "reasoning-delta", "reasoning-end":
		active, kind := b.text, "text"
		if strings.HasPrefix(typ, "reasoning") {
			active, kind = b.reasoning, "reasoning"
		}
		i, ok := active[str("id")]
		if !ok {
			return fail("no active %s part with id %q (a %s-start must come first)", kind, str("id"), kind)
		}
		if strings.HasSuffix(typ, "-delta") {
			(*parts)[i].Text += str("delta")
		} else {
			(*parts)[i].State = "done"
			delete(active, str("id"))
		}
	case "error":
		t := str("errorText")
		b.errorText, b.stopped = &t, true
	case "tool-input-start":
		id := str("toolCallId")
		if b.toolPart(id) != nil {
			return fail("tool call %q already has a part in this message (toolCallIds must be unique)", id)
		}
		*parts = append(*parts, b.newToolPart(f, "input-streaming"))
		b.streaming[id] = true
	case "tool-input-delta":
		p := b.toolPart(str("toolCallId"))
		if p == nil || !b.streaming[str("toolCallId")] {
			return fail("no tool-input-start for tool call %q in this response", str("toolCallId"))
		}
		p.RawInput += str("inputTextDelta")
	case "tool-input-available", "tool-input-error":
		id := str("toolCallId")
		p := b.toolPart(id)
		if p != nil && !b.streaming[id] && (b.inputs[id] || !awaitsClient(p.State)) {
			return fail("tool call %q already has a part in this message (toolCallIds must be unique)", id)
		}
		if p == nil {
			*parts = append(*parts, b.newToolPart(f, ""))
			p = &(*parts)[len(*parts)-1]
		}
		delete(b.streaming, id)
		b.inputs[id] = true
		p.Input, p.RawInput = f["input"], ""
		if pe := flag("providerExecuted"); pe != nil {
			p.ProviderExecuted = pe
		}
		if typ == "tool-input-error" {
			p.State, p.ErrorText = "output-error", str("errorText")
			break
		}
		p.State = "input-available"
		if !isTrue(p.ProviderExecuted) && !isTrue(flag("dynamic")) {
			if err := b.client.runTool(p); err != nil {
				return fail("%v", err)
			}
		}
	case "tool-approval-request":
		p := b.toolPart(str("toolCallId"))
		if p == nil {
			return fail("no tool part for tool call %q", str("toolCallId"))
		}
		p.State, p.Approval = "approval-requested", &UIApproval{ID: str("approvalId")}
	case "tool-approval-response":
		var p *UIPart
		for i := range *parts {
			if a := (*parts)[i].Approval; a != nil && a.ID == str("approvalId") {
				p = &(*parts)[i]
			}
		}
		if p == nil {
			return fail("no tool part awaits approval %q", str("approvalId"))
		}
		p.State = "approval-responded"
		p.Approval.Approved, p.Approval.Reason = flag("approved"), str("reason")
	case "tool-output-available", "tool-output-error", "tool-output-denied":
		p := b.toolPart(str("toolCallId"))
		if p == nil {
			return fail("no tool part for tool call %q (a tool-input-available must come first, in this response or the continued message)", str("toolCallId"))
		}
		switch typ {
		case "tool-output-available":
			p.State, p.Output, p.ErrorText, p.Preliminary = "output-available", f["output"], "", flag("preliminary")
		case "tool-output-error":
			p.State, p.Output, p.ErrorText = "output-error", nil, str("errorText")
		default:
			p.State = "output-denied"
		}
		if pe := flag("providerExecuted"); pe != nil {
			p.ProviderExecuted = pe
		}
	case "source-url", "source-document", "file", "reasoning-file", "custom", "steering-message":
		*parts = append(*parts, UIPart{Type: typ, Raw: json.RawMessage(data)})
	case "finish":
		b.finish = str("finishReason")
		b.mergeMetadata(f["messageMetadata"])
	case "message-metadata":
		b.mergeMetadata(f["messageMetadata"])
	default: // data-*
		if isTrue(flag("transient")) {
			break
		}
		id := str("id")
		for i := range *parts {
			if p := &(*parts)[i]; f["id"] != nil && p.Type == typ && p.ID == id {
				p.Data = f["data"]
				return nil
			}
		}
		*parts = append(*parts, UIPart{Type: typ, ID: id, Data: f["data"]})
	}
	return nil
}

// awaitsClient reports whether a tool part in state may be handed to the
// client again by a later response (the client updates the part, as for a
// client tool the user has just approved): it has no output yet. Within
// one response a second tool-input-available for a call is an error.
func awaitsClient(state string) bool {
	switch state {
	case "input-available", "approval-requested", "approval-responded":
		return true
	}
	return false
}

// checkEnd reports parts a finished response left open.
func (b *builder) checkEnd() error {
	for kind, active := range map[string]map[string]int{"text": b.text, "reasoning": b.reasoning} {
		for id := range active {
			return fmt.Errorf("%w: response %d ended with %s part %q never closed (no %s-end)", ErrProtocol, b.request, kind, id, kind)
		}
	}
	for id := range b.streaming {
		return fmt.Errorf("%w: response %d ended with tool call %q still streaming its input (no tool-input-available)", ErrProtocol, b.request, id)
	}
	return nil
}

func (b *builder) toolPart(id string) *UIPart {
	for i := range b.msg.Parts {
		if p := &b.msg.Parts[i]; isToolPart(p.Type) && p.ToolCallID == id {
			return p
		}
	}
	return nil
}

func (b *builder) newToolPart(f map[string]json.RawMessage, state string) UIPart {
	var name, id, title string
	_ = json.Unmarshal(f["toolName"], &name)
	_ = json.Unmarshal(f["toolCallId"], &id)
	_ = json.Unmarshal(f["title"], &title)
	p := UIPart{Type: "tool-" + name, ToolCallID: id, State: state, Title: title}
	var dynamic bool
	if json.Unmarshal(f["dynamic"], &dynamic) == nil && dynamic {
		p.Type, p.ToolName = "dynamic-tool", name
	}
	if f["providerExecuted"] != nil {
		var pe bool
		_ = json.Unmarshal(f["providerExecuted"], &pe)
		p.ProviderExecuted = &pe
	}
	return p
}

// mergeMetadata merges an object into the message metadata (top-level keys;
// a non-object replaces it).
func (b *builder) mergeMetadata(raw json.RawMessage) {
	if raw == nil || string(raw) == "null" {
		return
	}
	var add, have map[string]json.RawMessage
	if json.Unmarshal(raw, &add) != nil || json.Unmarshal(b.msg.Metadata, &have) != nil || have == nil {
		b.msg.Metadata = raw
		return
	}
	for k, v := range add {
		have[k] = v
	}
	merged, err := json.Marshal(have)
	if err == nil {
		b.msg.Metadata = merged
	}
}

// runTool answers a client tool call with the test's func, as onToolCall +
// addToolOutput do.
func (c *ChatClient) runTool(p *UIPart) error {
	fn := c.Tools[toolName(*p)]
	if fn == nil {
		return nil
	}
	out, err := fn(p.Input)
	if err != nil {
		p.State, p.ErrorText = "output-error", err.Error()
		return nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("client tool %q returned an output that does not marshal: %w", toolName(*p), err)
	}
	p.State, p.Output = "output-available", raw
	return nil
}
