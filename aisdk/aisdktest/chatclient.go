// Package aisdktest tests servers of the AI SDK UI message stream, in the
// manner of net/http/httptest for net/http: [ChatClient] drives a chat
// route (an [aisdk.Handler], or any server at a URL) the way the AI SDK's
// useChat does, and [ValidateChunk] checks one chunk against the client's
// schema.
//
// A ChatClient is a Go stand-in for useChat (ai@7 Chat and
// DefaultChatTransport) with automatic re-send. It validates every chunk of
// a response against the protocol's schema and ordering rules with code of
// its own (it shares none with the aisdk package's encoder and parser),
// builds the assistant message the way the client's processUIMessageStream
// does (keeping what the client keeps, such as the providerMetadata and
// approval signatures that the aisdk Handler signs its parts with, and
// posting it back unchanged), runs client tools with funcs the test gives,
// answers approvals, and re-posts while the last assistant message is
// complete with tool outputs or approval responses. The package's own tests
// check it against the real JavaScript client.
package aisdktest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/internal/sse"
)

// ClientToolFunc answers a client tool call the way a useChat onToolCall
// handler does with addToolOutput: the output (marshalled to JSON) or an
// error (posted as an output-error with the error's text).
type ClientToolFunc func(input json.RawMessage) (output any, err error)

// ApprovalFunc answers a tool approval request the way a UI calls
// addToolApprovalResponse.
type ApprovalFunc func(toolName string, input json.RawMessage) (approved bool, reason string)

// Exchange is one request of a [ChatClient] (a POST, or the GET of
// [ChatClient.Resume]) and the chunks of its answer.
type Exchange struct {
	// Request is the posted JSON body; nil for a resume GET.
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
var ErrTooManyRoundTrips = errors.New("aisdktest: too many automatic re-sends")

// ErrProtocol is wrapped by every error about a chunk or stream that breaks
// the UI message stream protocol.
var ErrProtocol = errors.New("aisdktest: UI message stream protocol violation")

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
	return fmt.Sprintf("aisdktest: response %d, chunk %d %s: %s", e.Request, e.Index, e.Chunk, e.Reason)
}

// Unwrap returns [ErrProtocol].
func (e *ChunkError) Unwrap() error { return ErrProtocol }

// StreamError is the error of a response that sent an error chunk: what
// useChat shows as the chat's error (status "error").
type StreamError struct {
	ErrorText string
}

func (e *StreamError) Error() string { return "aisdktest: error chunk: " + e.ErrorText }

// HTTPStatusError is the error of a non-2xx response.
type HTTPStatusError struct {
	Status int
	Body   string
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("aisdktest: HTTP %d: %s", e.Status, strings.TrimSpace(e.Body))
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
	// OnChunk, if set, sees the data of every chunk received, before it is
	// applied, with the 1-based index of the request in the transcript. A
	// test uses it to go away at a chosen moment (by cancelling the
	// context of the call), as a page that reloads does.
	OnChunk func(request int, data json.RawMessage)

	messages   []aisdk.UIMessage
	transcript []Exchange
	nextID     int
}

// Messages returns the chat's messages. The caller must not modify them.
func (c *ChatClient) Messages() []aisdk.UIMessage { return c.messages }

// Transcript returns every request so far with its chunks, in order.
func (c *ChatClient) Transcript() []Exchange { return c.transcript }

// SetMessages replaces the chat's messages (a chat loaded from storage, or
// one a test changes to play a client that does not echo what it got).
func (c *ChatClient) SetMessages(msgs []aisdk.UIMessage) { c.messages = msgs }

// Send posts a user message with text, then re-posts automatically while
// the last assistant message is complete with client tool outputs or
// approval responses. It returns the chat's messages after the last
// response. The error is a *[ChunkError] for an invalid chunk, a
// *[StreamError] for an error chunk, a *[HTTPStatusError] for a non-2xx
// answer, or wraps [ErrTooManyRoundTrips]; the messages then hold what the
// client had applied.
func (c *ChatClient) Send(ctx context.Context, text string) ([]aisdk.UIMessage, error) {
	c.messages = append(c.messages, aisdk.UIMessage{
		ID:    c.newID("user"),
		Role:  "user",
		Parts: []aisdk.UIPart{{Type: "text", Text: text}},
	})
	return c.resend(ctx, "")
}

// Resend posts the chat as it is, as the client's automatic re-send does
// after the caller changed the last assistant message (answered a tool
// outside Tools, or an approval outside Approve), and goes on like Send.
func (c *ChatClient) Resend(ctx context.Context) ([]aisdk.UIMessage, error) {
	messageID := ""
	if n := len(c.messages); n > 0 && c.messages[n-1].Role == "assistant" {
		messageID = c.messages[n-1].ID
	}
	return c.resend(ctx, messageID)
}

// Resume asks for the chat's stream in progress, as useChat({resume:
// true}) does on load and Chat.resumeStream() does: a GET of the chat
// route's "/{chat id}/stream". It reports false, with nothing changed,
// when the server answers 204 No Content (no stream in progress).
// Otherwise it applies the replayed stream as the AI SDK client does: the
// first start chunk starts the assistant message afresh (the stream is
// replayed from its start), under the start's messageId; the message then
// replaces the chat's message with that id, or is added. Client tools run
// and the chat is re-posted as after Send. The errors are Send's.
func (c *ChatClient) Resume(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.routeURL("stream"), nil)
	if err != nil {
		return false, fmt.Errorf("aisdktest: %w", err)
	}
	c.transcript = append(c.transcript, Exchange{})
	ex := &c.transcript[len(c.transcript)-1]
	resp, err := c.send(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	ex.Status = resp.StatusCode
	if resp.StatusCode == http.StatusNoContent {
		return false, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return true, &HTTPStatusError{Status: resp.StatusCode, Body: string(b)}
	}
	asst := aisdk.UIMessage{ID: c.newID("client-msg"), Role: "assistant"}
	b := newBuilder(c, &asst, false, len(c.transcript))
	b.replay = true
	err = c.read(resp.Body, ex, b)
	if len(asst.Parts) > 0 || b.sawStart {
		i := len(c.messages) - 1
		for i >= 0 && c.messages[i].ID != asst.ID {
			i--
		}
		if i >= 0 {
			c.messages[i] = asst
		} else {
			c.messages = append(c.messages, asst)
		}
	}
	if err != nil {
		return true, err
	}
	if b.errorText != nil {
		return true, &StreamError{ErrorText: *b.errorText}
	}
	if b.finish == aisdk.FinishReasonInterrupted {
		return true, nil
	}
	c.answerApprovals()
	if CompleteWithToolCalls(c.messages) || CompleteWithApprovalResponses(c.messages) {
		_, err = c.resend(ctx, c.messages[len(c.messages)-1].ID)
	}
	return true, err
}

// Stop asks the server to stop the chat's run in progress, wherever it
// runs: a POST to the chat route's "/{chat id}/stop" (aisdk.ChatServer with a
// Store). A status other than 2xx is an *[HTTPStatusError].
func (c *ChatClient) Stop(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.routeURL("stop"), nil)
	if err != nil {
		return fmt.Errorf("aisdktest: %w", err)
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return &HTTPStatusError{Status: resp.StatusCode, Body: string(b)}
	}
	return nil
}

func (c *ChatClient) chatID() string {
	if c.ChatID == "" {
		return "chat-1"
	}
	return c.ChatID
}

// routeURL returns the chat route's URL with "/{chat id}/"+action
// appended, the id escaped as encodeURIComponent does.
func (c *ChatClient) routeURL(action string) string {
	return strings.TrimSuffix(c.chatURL(), "/") + "/" + url.PathEscape(c.chatID()) + "/" + action
}

func (c *ChatClient) chatURL() string {
	if c.Handler != nil && c.URL == "" {
		return "http://aisdktest.local/api/chat"
	}
	return c.URL
}

func (c *ChatClient) resend(ctx context.Context, messageID string) ([]aisdk.UIMessage, error) {
	limit := c.MaxRoundTrips
	if limit <= 0 {
		limit = DefaultMaxRoundTrips
	}
	for n := 1; ; n++ {
		if n > limit {
			return c.messages, fmt.Errorf("%w: %d POSTs and the last assistant message still asks for another (the server ends responses on completed tool calls)", ErrTooManyRoundTrips, limit)
		}
		finish, err := c.post(ctx, n, messageID)
		if err != nil {
			return c.messages, err
		}
		if finish == aisdk.FinishReasonInterrupted {
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

// answerApprovals answers the approval requests of the last step, keeping
// the rest of each approval (its signature) as addToolApprovalResponse
// does.
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
		if !p.IsTool() || p.State != aisdk.StateApprovalRequested || p.Approval == nil {
			continue
		}
		ok, reason := c.Approve(p.ToolNameOf(), p.Input)
		a := *p.Approval
		a.Approved, a.Reason = &ok, reason
		p.State, p.Approval = aisdk.StateApprovalResponded, &a
	}
}

// post sends the chat and applies the response; it returns the finish
// reason.
func (c *ChatClient) post(ctx context.Context, n int, messageID string) (aisdk.FinishReason, error) {
	body := map[string]any{}
	for k, v := range c.Body {
		body[k] = v
	}
	body["id"], body["messages"], body["trigger"] = c.chatID(), c.messages, aisdk.TriggerSubmit
	if messageID != "" {
		body["messageId"] = messageID
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("aisdktest: marshal the request: %w", err)
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
	var asst aisdk.UIMessage
	continued := messageID != "" && c.messages[len(c.messages)-1].Role == "assistant"
	if continued {
		asst = c.messages[len(c.messages)-1]
		c.messages = c.messages[:len(c.messages)-1]
	} else {
		asst = aisdk.UIMessage{ID: c.newID("client-msg"), Role: "assistant"}
	}
	b := newBuilder(c, &asst, continued, n)
	err = c.read(resp.Body, ex, b)
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

// read applies the events of a response body with b, recording its chunks
// in ex.
func (c *ChatClient) read(body io.Reader, ex *Exchange, b *builder) error {
	err := readEvents(body, func(data string, unterminated bool) error {
		if unterminated {
			return &ChunkError{Request: b.request, Index: len(ex.Chunks) + 1, Chunk: data,
				Reason: "the stream ends inside this event (no blank line after it): the AI SDK client drops it"}
		}
		if data == "[DONE]" {
			ex.Done = true
			return nil
		}
		ex.Chunks = append(ex.Chunks, json.RawMessage(data))
		if c.OnChunk != nil {
			c.OnChunk(len(c.transcript), json.RawMessage(data))
		}
		if b.stopped {
			return nil
		}
		return b.apply(len(ex.Chunks), data)
	})
	if err == nil && !b.stopped {
		err = b.checkEnd()
	}
	return err
}

func (c *ChatClient) do(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.chatURL(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("aisdktest: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	return c.send(req)
}

// send makes a request, in-process with Handler or over HTTPClient.
func (c *ChatClient) send(req *http.Request) (*http.Response, error) {
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
		return nil, fmt.Errorf("aisdktest: %s %s: %w", req.Method, req.URL, err)
	}
	return resp, nil
}

// readEvents calls fn with the data of every event of an SSE body, read as
// eventsource-parser reads it (the shared, fuzzed reader of
// internal/sse), and whether the stream ended before the event's blank
// line.
func readEvents(r io.Reader, fn func(data string, unterminated bool) error) error {
	sr := sse.NewReader(r)
	sr.MaxEventSize = 16 << 20
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("aisdktest: reading the stream: %w", err)
		}
		if err := fn(string(ev.Data), ev.Unterminated); err != nil {
			return err
		}
	}
}

// CompleteWithToolCalls reports what the AI SDK's
// lastAssistantMessageIsCompleteWithToolCalls does: the last message is an
// assistant message whose last step has client tool parts (not
// providerExecuted), all with an output (not preliminary) or an error, and
// no unfinished text after the last of them.
func CompleteWithToolCalls(msgs []aisdk.UIMessage) bool {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "assistant" {
		return false
	}
	parts := msgs[len(msgs)-1].Parts
	step := parts[lastStepStart(parts)+1:]
	last, count := -1, 0
	for i, p := range step {
		if !p.IsTool() || isTrue(p.ProviderExecuted) {
			continue
		}
		last, count = i, count+1
		if !(p.State == aisdk.StateOutputAvailable && !isTrue(p.Preliminary)) && p.State != aisdk.StateOutputError {
			return false
		}
	}
	if count == 0 {
		return false
	}
	for _, p := range step[last+1:] {
		if p.Type == "text" && p.State != aisdk.StateDone {
			return false
		}
	}
	return true
}

// CompleteWithApprovalResponses reports what the AI SDK's
// lastAssistantMessageIsCompleteWithApprovalResponses does: the last
// step of the last (assistant) message has an approval-responded tool part,
// and every tool part of it is answered, denied or approval-responded.
func CompleteWithApprovalResponses(msgs []aisdk.UIMessage) bool {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "assistant" {
		return false
	}
	parts := msgs[len(msgs)-1].Parts
	responded := false
	for _, p := range parts[lastStepStart(parts)+1:] {
		if !p.IsTool() {
			continue
		}
		switch {
		case p.State == aisdk.StateApprovalResponded:
			responded = true
		case p.State == aisdk.StateOutputAvailable && !isTrue(p.Preliminary), p.State == aisdk.StateOutputError, p.State == aisdk.StateOutputDenied:
		default:
			return false
		}
	}
	return responded
}

func lastStepStart(parts []aisdk.UIPart) int {
	last := -1
	for i, p := range parts {
		if p.Type == "step-start" {
			last = i
		}
	}
	return last
}

func isTrue(b *bool) bool { return b != nil && *b }

// builder applies the chunks of one response to the assistant message, as
// processUIMessageStream does, and enforces the ordering rules.
type builder struct {
	client    *ChatClient
	msg       *aisdk.UIMessage
	continued bool
	request   int
	replay    bool // a resumed stream: the first start chunk starts the message afresh
	sawStart  bool

	text, reasoning map[string]int    // active part ids → part index
	streaming       map[string]bool   // tool calls started in this response
	partial         map[string]string // their input text so far
	inputs          map[string]bool   // tool calls whose input this response completed
	finish          aisdk.FinishReason
	errorText       *string
	stopped         bool
}

func newBuilder(c *ChatClient, msg *aisdk.UIMessage, continued bool, request int) *builder {
	return &builder{client: c, msg: msg, continued: continued, request: request,
		text: map[string]int{}, reasoning: map[string]int{}, streaming: map[string]bool{}, inputs: map[string]bool{},
		partial: map[string]string{}}
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
	meta := f["providerMetadata"] // kept on the part, as the client keeps it
	parts := &b.msg.Parts
	switch typ {
	case "start":
		if b.replay && !b.sawStart {
			*b.msg = aisdk.UIMessage{ID: b.msg.ID, Role: "assistant"}
			clear(b.text)
			clear(b.reasoning)
			clear(b.streaming)
			clear(b.inputs)
			clear(b.partial)
		}
		b.sawStart = true
		if id := str("messageId"); f["messageId"] != nil {
			if b.continued && id != b.msg.ID {
				return fail("start.messageId %q differs from the continued assistant message %q (the chat would show two assistant messages)", id, b.msg.ID)
			}
			b.msg.ID = id
		}
		b.mergeMetadata(f["messageMetadata"])
	case "start-step":
		*parts = append(*parts, aisdk.UIPart{Type: "step-start"})
	case "finish-step", "abort":
	case "reset-step":
		*parts = (*parts)[:lastStepStart(*parts)+1]
		clear(b.text)
		clear(b.reasoning)
		clear(b.streaming)
		clear(b.inputs)
	case "text-start", "reasoning-start":
		active := b.text
		p := aisdk.UIPart{Type: "text", State: aisdk.StateStreaming, ProviderMetadata: meta}
		if typ == "reasoning-start" {
			active, p = b.reasoning, aisdk.UIPart{Type: "reasoning", State: aisdk.StateStreaming, ID: str("id"), ProviderMetadata: meta}
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
		p := &(*parts)[i]
		if meta != nil {
			p.ProviderMetadata = meta
		}
		if strings.HasSuffix(typ, "-delta") {
			p.Text += str("delta")
		} else {
			p.State = aisdk.StateDone
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
		p := b.newToolPart(f, aisdk.StateInputStreaming)
		p.CallProviderMetadata = meta
		*parts = append(*parts, p)
		b.streaming[id] = true
	case "tool-input-delta":
		p := b.toolPart(str("toolCallId"))
		if p == nil || !b.streaming[str("toolCallId")] {
			return fail("no tool-input-start for tool call %q in this response", str("toolCallId"))
		}
		raw := b.partial[str("toolCallId")] + str("inputTextDelta")
		b.partial[str("toolCallId")] = raw
		// The client parses the input so far as partial JSON; once the
		// text is whole, that is its value.
		if json.Valid([]byte(raw)) {
			p.Input = json.RawMessage(raw)
		}
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
		p.Input = f["input"]
		if pe := flag("providerExecuted"); pe != nil {
			p.ProviderExecuted = pe
		}
		if typ == "tool-input-error" {
			p.State, p.ErrorText = aisdk.StateOutputError, str("errorText")
			if meta != nil {
				p.ResultProviderMetadata = meta
			}
			break
		}
		p.State = aisdk.StateInputAvailable
		if meta != nil {
			p.CallProviderMetadata = meta
		}
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
		delete(b.streaming, str("toolCallId")) // the part moves on from input-streaming
		p.State, p.Approval = aisdk.StateApprovalRequested, &aisdk.UIApproval{ID: str("approvalId"), RequestReason: str("reason"), Signature: str("signature")}
	case "tool-approval-response":
		var p *aisdk.UIPart
		for i := range *parts {
			if a := (*parts)[i].Approval; a != nil && a.ID == str("approvalId") {
				p = &(*parts)[i]
			}
		}
		if p == nil {
			return fail("no tool part awaits approval %q", str("approvalId"))
		}
		a := *p.Approval
		a.Approved, a.Reason = flag("approved"), str("reason")
		p.State, p.Approval = aisdk.StateApprovalResponded, &a
	case "tool-output-available", "tool-output-error", "tool-output-denied":
		p := b.toolPart(str("toolCallId"))
		if p == nil {
			return fail("no tool part for tool call %q (a tool-input-available must come first, in this response or the continued message)", str("toolCallId"))
		}
		delete(b.streaming, str("toolCallId")) // the part moves on from input-streaming
		switch typ {
		case "tool-output-available":
			p.State, p.Output, p.ErrorText, p.Preliminary = aisdk.StateOutputAvailable, f["output"], "", flag("preliminary")
		case "tool-output-error":
			p.State, p.Output, p.ErrorText, p.Preliminary = aisdk.StateOutputError, nil, str("errorText"), nil
		default:
			p.State = aisdk.StateOutputDenied
		}
		if meta != nil && typ != "tool-output-denied" {
			p.ResultProviderMetadata = meta
		}
		if pe := flag("providerExecuted"); pe != nil {
			p.ProviderExecuted = pe
		}
	case "source-url", "source-document", "file", "reasoning-file", "custom", "steering-message":
		// The part holds the chunk's fields.
		var p aisdk.UIPart
		if err := json.Unmarshal([]byte(data), &p); err != nil {
			return fail("%v", err)
		}
		*parts = append(*parts, p)
	case "finish":
		b.finish = aisdk.FinishReason(str("finishReason"))
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
		*parts = append(*parts, aisdk.UIPart{Type: typ, ID: id, Data: f["data"]})
	}
	return nil
}

// awaitsClient reports whether a tool part in state may be handed to the
// client again by a later response (the client updates the part, as for a
// client tool the user has just approved): it has no output yet. Within
// one response a second tool-input-available for a call is an error.
func awaitsClient(state aisdk.PartState) bool {
	switch state {
	case aisdk.StateInputAvailable, aisdk.StateApprovalRequested, aisdk.StateApprovalResponded:
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

func (b *builder) toolPart(id string) *aisdk.UIPart {
	for i := range b.msg.Parts {
		if p := &b.msg.Parts[i]; p.IsTool() && p.ToolCallID == id {
			return p
		}
	}
	return nil
}

func (b *builder) newToolPart(f map[string]json.RawMessage, state aisdk.PartState) aisdk.UIPart {
	var name, id, title string
	_ = json.Unmarshal(f["toolName"], &name)
	_ = json.Unmarshal(f["toolCallId"], &id)
	_ = json.Unmarshal(f["title"], &title)
	p := aisdk.UIPart{Type: "tool-" + name, ToolCallID: id, State: state, Title: title}
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
// addToolOutput do (keeping the rest of the part, its call signature
// included).
func (c *ChatClient) runTool(p *aisdk.UIPart) error {
	fn := c.Tools[p.ToolNameOf()]
	if fn == nil {
		return nil
	}
	out, err := fn(p.Input)
	if err != nil {
		p.State, p.ErrorText = aisdk.StateOutputError, err.Error()
		return nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("client tool %q returned an output that does not marshal: %w", p.ToolNameOf(), err)
	}
	p.State, p.Output = aisdk.StateOutputAvailable, raw
	return nil
}
