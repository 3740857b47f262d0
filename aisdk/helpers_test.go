package aisdk

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
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// sseEvents splits an SSE body into the data of its events, checking the
// framing this package writes: "data: …" lines each followed by a blank
// line, comments allowed, and "[DONE]" last.
func sseEvents(t testing.TB, body string) (data []string, comments int, done bool) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		if expectBlank {
			if line != "" {
				t.Fatalf("SSE: want a blank line after an event, got %q", line)
			}
			expectBlank = false
			continue
		}
		switch {
		case strings.HasPrefix(line, ":"):
			comments++
			expectBlank = true
		case strings.HasPrefix(line, "data: "):
			if done {
				t.Fatalf("SSE: event after [DONE]: %q", line)
			}
			d := strings.TrimPrefix(line, "data: ")
			if d == "[DONE]" {
				done = true
			} else {
				data = append(data, d)
			}
			expectBlank = true
		default:
			t.Fatalf("SSE: unexpected line %q", line)
		}
	}
	if expectBlank {
		t.Fatalf("SSE: body ends without the blank line of its last event")
	}
	return data, comments, done
}

// parseStream parses an SSE body into checked chunks.
func parseStream(t testing.TB, body string) []Chunk {
	t.Helper()
	data, _, done := sseEvents(t, body)
	if !done {
		t.Fatalf("SSE: no data: [DONE] at the end of:\n%s", body)
	}
	chunks := make([]Chunk, 0, len(data))
	for _, d := range data {
		c, err := ParseChunk([]byte(d))
		if err != nil {
			t.Fatalf("chunk %s: %v", d, err)
		}
		chunks = append(chunks, c)
	}
	return chunks
}

// chunkTypes returns the types of chunks, for compact assertions.
func typesOf(chunks []Chunk) []string {
	out := make([]string, len(chunks))
	for i, c := range chunks {
		out[i] = ChunkType(c)
	}
	return out
}

// wire returns the chunks as their JSON lines.
func wire(t testing.TB, chunks []Chunk) []string {
	t.Helper()
	out := make([]string, len(chunks))
	for i, c := range chunks {
		b, err := marshalChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// uiClient applies chunks to an assistant message the way the AI SDK's
// processUIMessageStream does (keeping providerMetadata and approval
// signatures where the client keeps them), and reports the ordering errors
// the client would raise. It is a small stand-in for the real client in
// these tests, which cannot import aisdktest.
type uiClient struct {
	msg       *UIMessage
	text      map[string]int
	reasoning map[string]int
	inputs    map[string]bool
	finish    FinishReason
	errorText string
	stopped   bool
}

func newUIClient(msg *UIMessage) *uiClient {
	return &uiClient{msg: msg, text: map[string]int{}, reasoning: map[string]int{}, inputs: map[string]bool{}}
}

func (c *uiClient) toolPart(id string) (int, error) {
	for i := len(c.msg.Parts) - 1; i >= 0; i-- {
		if c.msg.Parts[i].IsTool() && c.msg.Parts[i].ToolCallID == id {
			return i, nil
		}
	}
	return -1, fmt.Errorf("no tool part with toolCallId %q", id)
}

// startStreamed, deltaStreamed and endStreamed play a streamed part's
// start, delta and end chunks: a text or a reasoning part (the kind), whose
// active ids and part indexes are in active.
func (c *uiClient) startStreamed(active map[string]int, kind, id string) {
	active[id] = len(c.msg.Parts)
	c.msg.Parts = append(c.msg.Parts, UIPart{Type: kind, State: StateStreaming})
}

func (c *uiClient) deltaStreamed(active map[string]int, kind, id, delta string) error {
	i, ok := active[id]
	if !ok {
		return fmt.Errorf("%s-delta for inactive id %q", kind, id)
	}
	c.msg.Parts[i].Text += delta
	return nil
}

func (c *uiClient) endStreamed(active map[string]int, kind, id string, meta ProviderMetadata) error {
	i, ok := active[id]
	if !ok {
		return fmt.Errorf("%s-end for inactive id %q", kind, id)
	}
	c.msg.Parts[i].State = StateDone
	if meta != nil {
		c.msg.Parts[i].ProviderMetadata, _ = json.Marshal(meta)
	}
	delete(active, id)
	return nil
}

func (c *uiClient) apply(ch Chunk) error {
	if c.stopped {
		return nil
	}
	m := c.msg
	switch v := ch.(type) {
	case StartChunk:
		if v.MessageID != "" {
			m.ID = v.MessageID
		}
	case StartStepChunk:
		m.Parts = append(m.Parts, UIPart{Type: "step-start"})
	case TextStartChunk:
		c.startStreamed(c.text, "text", v.ID)
	case TextDeltaChunk:
		return c.deltaStreamed(c.text, "text", v.ID, v.Delta)
	case TextEndChunk:
		return c.endStreamed(c.text, "text", v.ID, v.ProviderMetadata)
	case ReasoningStartChunk:
		c.startStreamed(c.reasoning, "reasoning", v.ID)
	case ReasoningDeltaChunk:
		return c.deltaStreamed(c.reasoning, "reasoning", v.ID, v.Delta)
	case ReasoningEndChunk:
		return c.endStreamed(c.reasoning, "reasoning", v.ID, v.ProviderMetadata)
	case ToolInputStartChunk:
		if v.ProviderExecuted != nil || v.Dynamic != nil {
			return fmt.Errorf("tool-input-start for %q carries providerExecuted or dynamic", v.ToolCallID)
		}
		c.inputs[v.ToolCallID] = true
		m.Parts = append(m.Parts, UIPart{Type: "tool-" + v.ToolName, ToolCallID: v.ToolCallID, State: StateInputStreaming})
	case ToolInputDeltaChunk:
		if !c.inputs[v.ToolCallID] {
			return fmt.Errorf("tool-input-delta without tool-input-start for %q", v.ToolCallID)
		}
	case ToolInputAvailableChunk:
		if v.ProviderExecuted != nil || v.Dynamic != nil {
			return fmt.Errorf("tool-input-available for %q carries providerExecuted or dynamic", v.ToolCallID)
		}
		i, err := c.toolPart(v.ToolCallID)
		if err != nil {
			i = len(m.Parts)
			m.Parts = append(m.Parts, UIPart{Type: "tool-" + v.ToolName, ToolCallID: v.ToolCallID})
		}
		m.Parts[i].State = StateInputAvailable
		m.Parts[i].Input = v.Input
		if v.ProviderMetadata != nil {
			m.Parts[i].CallProviderMetadata, _ = json.Marshal(v.ProviderMetadata)
		}
	case ToolInputErrorChunk:
		i, err := c.toolPart(v.ToolCallID)
		if err != nil {
			i = len(m.Parts)
			m.Parts = append(m.Parts, UIPart{Type: "tool-" + v.ToolName, ToolCallID: v.ToolCallID})
		}
		m.Parts[i].State = StateOutputError
		m.Parts[i].Input = v.Input
		m.Parts[i].ErrorText = v.ErrorText
		if v.ProviderMetadata != nil {
			m.Parts[i].ResultProviderMetadata, _ = json.Marshal(v.ProviderMetadata)
		}
	case ToolApprovalRequestChunk:
		i, err := c.toolPart(v.ToolCallID)
		if err != nil {
			return fmt.Errorf("tool-approval-request: %w", err)
		}
		m.Parts[i].State = StateApprovalRequested
		m.Parts[i].Approval = &UIApproval{ID: v.ApprovalID, Signature: v.Signature}
	case ToolOutputAvailableChunk:
		i, err := c.toolPart(v.ToolCallID)
		if err != nil {
			return fmt.Errorf("tool-output-available: %w", err)
		}
		m.Parts[i].State = StateOutputAvailable
		m.Parts[i].Output = v.Output
		m.Parts[i].Preliminary = v.Preliminary
		if v.ProviderMetadata != nil {
			m.Parts[i].ResultProviderMetadata, _ = json.Marshal(v.ProviderMetadata)
		}
	case ToolOutputErrorChunk:
		i, err := c.toolPart(v.ToolCallID)
		if err != nil {
			return fmt.Errorf("tool-output-error: %w", err)
		}
		m.Parts[i].State = StateOutputError
		m.Parts[i].ErrorText = v.ErrorText
		m.Parts[i].Preliminary = nil
		if v.ProviderMetadata != nil {
			m.Parts[i].ResultProviderMetadata, _ = json.Marshal(v.ProviderMetadata)
		}
	case ToolOutputDeniedChunk:
		i, err := c.toolPart(v.ToolCallID)
		if err != nil {
			return fmt.Errorf("tool-output-denied: %w", err)
		}
		m.Parts[i].State = StateOutputDenied
	case DataChunk:
		// A part with the same type and id has its data replaced.
		typ := "data-" + v.Name
		for i := range m.Parts {
			if m.Parts[i].Type == typ && m.Parts[i].ID == v.ID && v.ID != "" {
				m.Parts[i].Data = v.Data
				return nil
			}
		}
		m.Parts = append(m.Parts, UIPart{Type: typ, ID: v.ID, Data: v.Data})
	case MessageMetadataChunk:
	case FinishStepChunk:
	case FinishChunk:
		c.finish = v.FinishReason
	case ErrorChunk:
		c.errorText = v.ErrorText
		c.stopped = true
	default:
		return fmt.Errorf("unexpected chunk %T", ch)
	}
	return nil
}

// completeWithToolCalls is the AI SDK's
// lastAssistantMessageIsCompleteWithToolCalls for one message.
func completeWithToolCalls(m UIMessage) bool {
	last := 0
	for i, p := range m.Parts {
		if p.Type == "step-start" {
			last = i
		}
	}
	step := m.Parts[last:]
	lastTool := -1
	for i, p := range step {
		if p.IsTool() && (p.ProviderExecuted == nil || !*p.ProviderExecuted) {
			lastTool = i
			if (p.State != StateOutputAvailable || isTrue(p.Preliminary)) && p.State != StateOutputError {
				return false
			}
		}
	}
	if lastTool < 0 {
		return false
	}
	for _, p := range step[lastTool+1:] {
		if p.Type == "text" && p.State != StateDone {
			return false
		}
	}
	return true
}

// chat is a minimal useChat: it holds the messages, posts them, and applies
// the streamed chunks to the assistant message (a continuation extends the
// last one).
type chat struct {
	t       testing.TB
	url     string
	id      string
	msgs    []UIMessage
	extra   map[string]any
	lastRaw string
}

func (c *chat) post(messageID string) (*uiClient, int, string) {
	c.t.Helper()
	body := map[string]any{"id": c.id, "messages": c.msgs, "trigger": "submit-message"}
	if messageID != "" {
		body["messageId"] = messageID
	}
	for k, v := range c.extra {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		c.t.Fatal(err)
	}
	resp, err := http.Post(c.url, "application/json", bytes.NewReader(b))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	c.lastRaw = string(raw)
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, string(raw)
	}
	chunks := parseStream(c.t, string(raw))
	var target *UIMessage
	if n := len(c.msgs); n > 0 && c.msgs[n-1].Role == "assistant" {
		target = &c.msgs[n-1]
		if s, ok := chunks[0].(StartChunk); ok && s.MessageID != "" && s.MessageID != target.ID {
			c.t.Fatalf("continuation of %q answered with messageId %q", target.ID, s.MessageID)
		}
	} else {
		c.msgs = append(c.msgs, UIMessage{Role: "assistant", Parts: []UIPart{}})
		target = &c.msgs[len(c.msgs)-1]
	}
	client := newUIClient(target)
	for _, ch := range chunks {
		if err := client.apply(ch); err != nil {
			c.t.Fatalf("client would reject the stream: %v\n%s", err, raw)
		}
	}
	return client, resp.StatusCode, string(raw)
}

func (c *chat) say(id, text string) {
	c.msgs = append(c.msgs, UIMessage{ID: id, Role: "user", Parts: []UIPart{{Type: "text", Text: text}}})
}

func (c *chat) last() *UIMessage { return &c.msgs[len(c.msgs)-1] }

func newServer(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// marshalChunk returns the wire JSON of c, as the Writer writes it.
func marshalChunk(c Chunk) ([]byte, error) {
	var buf bytes.Buffer
	if err := appendChunk(&buf, c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// newMemStore returns a store in memory, closed when t ends.
func newMemStore(t testing.TB) *memstore.Store {
	s := memstore.New(memstore.Options{})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// storedHistory returns the stored history of chat id (nil when there is
// no such chat).
func storedHistory(t testing.TB, st ChatStore, id string) agentloop.History {
	t.Helper()
	c, err := st.GetChat(context.Background(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return c.History
}
