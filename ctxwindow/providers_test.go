package ctxwindow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/ollama"
	"github.com/agentloop/agentloop/providers/openai"
)

// providerServers are loopback servers that check each request body the
// way the real APIs do where a trimmed transcript could break it, answer a
// valid one with a short streamed reply and refuse any other with a 400
// that names the violation; and the three providers' models pointed at
// them. A request that a provider's builder refuses never reaches them.
type providerServers struct {
	models map[string]agentloop.Model
}

func newProviderServers(t *testing.T) *providerServers {
	t.Helper()
	ps := &providerServers{models: map[string]agentloop.Model{}}
	serve := func(check func([]byte) error, ok, errBody string, contentType string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err == nil {
				err = check(body)
			}
			if err != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				msg, _ := json.Marshal(err.Error())
				fmt.Fprintf(w, errBody, msg)
				return
			}
			w.Header().Set("Content-Type", contentType)
			io.WriteString(w, ok)
		}))
		t.Cleanup(srv.Close)
		return srv
	}

	oa := serve(checkOpenAI, openAIReply, `{"error":{"message":%s,"type":"invalid_request_error"}}`, "text/event-stream")
	om, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: oa.URL, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ps.models["openai"] = om

	an := serve(checkAnthropic, anthropicReply, `{"type":"error","error":{"type":"invalid_request_error","message":%s}}`, "text/event-stream")
	am, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: an.URL, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ps.models["anthropic"] = am

	ol := serve(checkOllama, ollamaReply, `{"error":%s}`, "application/x-ndjson")
	lm, err := ollama.New(ollama.Config{Model: "qwen-test", Host: ol.URL})
	if err != nil {
		t.Fatal(err)
	}
	ps.models["ollama"] = lm
	return ps
}

// send sends req through every provider and fails the test when one
// refuses it.
func (ps *providerServers) send(t *testing.T, req *agentloop.Request) {
	t.Helper()
	for name, m := range ps.models {
		text := ""
		for chunk, err := range m.Stream(context.Background(), req) {
			if err != nil {
				t.Fatalf("%s refused the request: %v", name, err)
			}
			if d, ok := chunk.(agentloop.TextDelta); ok {
				text += d.Text
			}
		}
		if text != "ok" {
			t.Fatalf("%s: the reply was %q, want \"ok\"", name, text)
		}
	}
}

const openAIReply = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: [DONE]

`

const anthropicReply = `event: message_start
data: {"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}

event: message_stop
data: {"type":"message_stop"}

`

const ollamaReply = `{"model":"qwen-test","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"ok"},"done":true,"done_reason":"stop","prompt_eval_count":1,"eval_count":1}
`

// checkOpenAI checks a Chat Completions body: an assistant message with
// tool_calls is followed by one tool message per call, and tool messages
// answer only the calls of the assistant message right before them.
func checkOpenAI(body []byte) error {
	var req struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	if len(req.Messages) == 0 {
		return fmt.Errorf("messages: empty")
	}
	var open map[string]bool // calls awaiting their tool message
	for i, m := range req.Messages {
		switch m.Role {
		case "tool":
			if !open[m.ToolCallID] {
				return fmt.Errorf("messages[%d]: tool message for %q does not answer a tool call of the preceding assistant message", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			continue
		case "system", "user", "assistant":
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
		if len(open) > 0 {
			return fmt.Errorf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; %d missing", i, len(open))
		}
		open = nil
		if m.Role == "assistant" {
			if len(m.ToolCalls) == 0 && (len(m.Content) == 0 || string(m.Content) == "null") {
				return fmt.Errorf("messages[%d]: assistant message with neither content nor tool_calls", i)
			}
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("the last assistant message's tool_calls are not all answered")
	}
	return nil
}

// checkAnthropic checks a Messages API body: roles alternate, no content is
// empty, every tool_use is answered by a tool_result in the next (user)
// message, whose tool_result blocks come first, and every tool_result
// answers a tool_use of the message right before it; thinking is signed.
func checkAnthropic(body []byte) error {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
				Signature string `json:"signature"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	if len(req.Messages) == 0 {
		return fmt.Errorf("messages: at least one message is required")
	}
	var uses map[string]bool // tool_use ids of the previous assistant message
	for i, m := range req.Messages {
		if i > 0 && m.Role == req.Messages[i-1].Role {
			return fmt.Errorf("messages[%d]: roles must alternate between user and assistant", i)
		}
		if len(m.Content) == 0 {
			return fmt.Errorf("messages[%d]: content must not be empty", i)
		}
		switch m.Role {
		case "user":
			seenOther := false
			for j, b := range m.Content {
				if b.Type != "tool_result" {
					seenOther = true
					continue
				}
				if seenOther {
					return fmt.Errorf("messages[%d].content[%d]: tool_result blocks must come first", i, j)
				}
				if !uses[b.ToolUseID] {
					return fmt.Errorf("messages[%d].content[%d]: unexpected tool_use_id %q in tool_result blocks: each tool_result block must have a corresponding tool_use block in the previous message", i, j, b.ToolUseID)
				}
				delete(uses, b.ToolUseID)
			}
			if len(uses) > 0 {
				return fmt.Errorf("messages[%d]: tool_use ids were found without tool_result blocks immediately after", i)
			}
			uses = nil
		case "assistant":
			if len(uses) > 0 {
				return fmt.Errorf("messages[%d]: tool_use ids were found without tool_result blocks immediately after", i)
			}
			uses = map[string]bool{}
			for j, b := range m.Content {
				switch b.Type {
				case "tool_use":
					uses[b.ID] = true
				case "thinking":
					if b.Signature == "" {
						return fmt.Errorf("messages[%d].content[%d]: thinking block without a signature", i, j)
					}
				}
			}
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	if len(uses) > 0 {
		return fmt.Errorf("the last assistant message's tool_use blocks have no tool_result")
	}
	return nil
}

// checkOllama checks an /api/chat body: every tool message answers a call
// of the assistant message before the run of tool messages it is in, and
// every call is answered.
func checkOllama(body []byte) error {
	var req struct {
		Messages []struct {
			Role      string `json:"role"`
			ToolCalls []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	var open map[string]bool
	for i, m := range req.Messages {
		if m.Role == "tool" {
			if !open[m.ToolCallID] {
				return fmt.Errorf("messages[%d]: tool message for %q follows no assistant call with that id", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			continue
		}
		if len(open) > 0 {
			return fmt.Errorf("messages[%d]: %d tool calls of the assistant message before have no tool message", i, len(open))
		}
		open = map[string]bool{}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("the last assistant message's tool calls are not all answered")
	}
	return nil
}
