package aisdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store/memstore"
)

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		specToolContinuation, specApprovalContinuation, specAssistantUI, userBody("hi"),
		`{"messages":[{"id":"a","role":"assistant","parts":[{"type":"step-start"},{"type":"tool-x","toolCallId":"c","state":"output-denied","input":null,"approval":{"id":"a","approved":false}},{"type":"steering-message","id":"s","parts":[{"type":"text","text":"t"}]}]}]}`,
		`{"messages":[{"id":"u","role":"user","parts":[{"type":"file","mediaType":"image/png","url":"data:,"}]},{"id":"a","role":"assistant","parts":[{"type":"dynamic-tool","toolName":"d","toolCallId":"c","state":"input-available","input":"{\"a\":"}]}]}`,
		`{"messages":[{"id":"a","role":"assistant","parts":[{"type":"tool-x","toolCallId":"c","state":"output-available","input":{},"output":{"__aui_modelContent":[{"type":"text","text":"t"}],"value":1}}]}]}`,
		specSubagentApproval,
		`{}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
}

// specSubagentApproval is the body that approves a paused sub-agent's
// call: a signed data-subrun state and the nested call's decision.
const specSubagentApproval = `{"messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Weather?"}]},{"id":"msg-new","role":"assistant","parts":[{"type":"step-start"},{"type":"tool-researcher","state":"input-available","toolCallId":"l1","input":{"task":"Weather in Oslo?"},"callProviderMetadata":{"agentloop":{"sig":"3UNBLLVAMjnKUBzZstYw_gaADdAE5T7sjlb8m741pyI"}}},{"type":"data-subagent","id":"l1","data":{"callId":"l1","path":["l1"],"agent":"researcher","depth":1,"state":"paused","parts":[{"type":"text","text":"Checking."},{"type":"tool","toolCallId":"w1","toolName":"get_weather","input":{"city":"Oslo"},"state":"approval-requested"}]}},{"type":"data-subrun","id":"l1","data":{"callId":"l1","agent":"researcher","history":"{\"version\":2,\"messages\":[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"Weather in Oslo?\"}]},{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"Checking.\"},{\"type\":\"toolCall\",\"toolCall\":{\"id\":\"w1\",\"name\":\"get_weather\",\"args\":{\"city\":\"Oslo\"}}},{\"type\":\"approvalRequest\",\"approval\":{\"callId\":\"w1\",\"id\":\"approval_w1\"}}]}]}","sig":"ze5-k37ipBnyOuqnQ3kyecDJQzbx5tEQ5MsDOsl7YzU"}},{"type":"step-start"},{"type":"tool-get_weather","state":"approval-responded","toolCallId":"l1/w1","input":{"city":"Oslo"},"approval":{"id":"approval_l1/w1","approved":true,"signature":"8CceDVLKbvE7EgEL63jFqXU7NEjUMqOpWOFAtSfLjMk"},"callProviderMetadata":{"agentloop":{"sig":"NEevRw7BBi6sC-8Ch0wGie-FVQoK1rOgjZlJxIlm1rI"}}}]}]}`

// FuzzDecodeRequest: decoding never panics and stays within its limits;
// whatever decodes and converts renders back to UIMessages that convert
// again, and a client that posts back exactly what it was sent is accepted
// by Reconcile.
func FuzzDecodeRequest(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := DecodeRequest(bytes.NewReader(data), Limits{MaxBodyBytes: 1 << 16, MaxMessages: 64, MaxParts: 256})
		if err != nil {
			return
		}
		if len(req.Messages) > 64 {
			t.Fatalf("%d messages past the limit", len(req.Messages))
		}
		h, err := ToHistory(req.Messages)
		if err != nil {
			return
		}
		ui := FromHistory(h)
		b, err := json.Marshal(ui)
		if err != nil {
			t.Fatalf("FromHistory output does not marshal: %v", err)
		}
		var back []UIMessage
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		h2, err := ToHistory(back)
		if err != nil {
			t.Fatalf("ToHistory(FromHistory(h)): %v\nh: %+v", err, h)
		}
		if _, err := reconcile(h, h2); err != nil {
			t.Fatalf("Reconcile refuses an honest echo: %v", err)
		}
	})
}

// FuzzToHistory feeds messages that skipped DecodeRequest's checks.
func FuzzToHistory(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var body struct {
			Messages []UIMessage `json:"messages"`
		}
		if json.Unmarshal(data, &body) != nil {
			return
		}
		h, err := ToHistory(body.Messages)
		if err != nil {
			return
		}
		if err := h.Validate(); err != nil {
			t.Fatalf("ToHistory returned an invalid history: %v", err)
		}
		_ = FromHistory(h)
	})
}

// FuzzParseChunk: parsing never panics, and a parsed chunk re-encodes to
// JSON that parses again.
func FuzzParseChunk(f *testing.F) {
	for _, s := range []string{`{"type":"start","messageId":"m"}`, `{"type":"data-x","data":null}`, `{"type":"tool-input-available","toolCallId":"c","toolName":"n","input":{}}`, `{"type":"finish","finishReason":"stop"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseChunk(data)
		if err != nil {
			return
		}
		b, err := marshalChunk(c)
		if err != nil {
			t.Fatalf("re-encoding %T: %v", c, err)
		}
		if _, err := ParseChunk(b); err != nil {
			t.Fatalf("re-encoded %s does not parse: %v", b, err)
		}
	})
}

// FuzzHandlerScripts runs scripted models built from the input through the
// handler, playing useChat over several POSTs (answering client tools and
// approvals), and checks every response the way the client would: each
// chunk valid and in order, a finish or an error at the end, no response
// that ends normally on a step the client would re-send by itself (the
// re-POST loop), and no tool run without its approval. Inputs whose first
// byte is below 0x80 run in the stateless mode, so the client's echo of
// each response must pass the signature check; the others run with a chat
// store, so it must pass Reconcile.
func FuzzHandlerScripts(f *testing.F) {
	for _, s := range []string{"\x00", "\x02\xff\x00", "\x03", "\x04\x00", "\x01\x02\x03\x04\x05\xff\x00", "\x06", "\x02\xff\x02\xff\x02", "\x83\x04\xff\x04", "\x81\x02\x03\x04\xff\x03\x04"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			return
		}
		var turns []simtest.Turn
		var steps []simtest.Step
		for i, b := range data {
			id := "c" + strconv.Itoa(i)
			switch b % 8 {
			case 0:
				steps = append(steps, simtest.Text("some text"))
			case 1:
				steps = append(steps, simtest.Reasoning("a thought"))
			case 2:
				steps = append(steps, simtest.Call(id, "get_weather", map[string]string{"city": "Oslo"}))
			case 3:
				steps = append(steps, simtest.Call(id, "form", map[string]string{"name": "x"}))
			case 4:
				steps = append(steps, simtest.Call(id, "delete_record", map[string]int{"id": 1}))
			case 5:
				steps = append(steps, simtest.Call(id, "get_weather", `{"city":`))
			case 6:
				steps = append(steps, simtest.Fail("boom"))
			case 7:
				turns = append(turns, simtest.Turn{Reply: steps})
				steps = nil
			}
		}
		turns = append(turns, simtest.Turn{Reply: steps}, simtest.Turn{Reply: []simtest.Step{simtest.Text("done")}})
		var runs atomic.Int32
		form, _ := agentloop.NewClientTool("form", "A form.", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`))
		var h http.Handler
		if len(data) > 0 && data[0] >= 0x80 {
			s := newChatServer(memstore.New(memstore.Options{}), simtest.NewModel(turns...), weatherTool(t), deleteTool(t, &runs), form) // the echoed messages must pass Reconcile
			s.KeepAlive = -1
			h = s
		} else {
			s := newHandler(simtest.NewModel(turns...), weatherTool(t), deleteTool(t, &runs), form)
			s.KeepAlive = -1
			h = s
		}
		// Play useChat: answer client calls and approvals, re-send while
		// the client would, for a few rounds.
		msgs := []UIMessage{{ID: "u1", Role: "user", Parts: []UIPart{{Type: "text", Text: "go"}}}}
		approve := true
		for round := 0; round < 4; round++ {
			body, _ := json.Marshal(map[string]any{"id": "c", "messages": msgs, "trigger": "submit-message"})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, jsonRequest(string(body)))
			if rec.Code != http.StatusOK {
				t.Fatalf("round %d: status %d: %s", round, rec.Code, rec.Body.String())
			}
			chunks := parseStream(t, rec.Body.String())
			if msgs[len(msgs)-1].Role != "assistant" {
				msgs = append(msgs, UIMessage{Role: "assistant", Parts: []UIPart{}})
			}
			msg := &msgs[len(msgs)-1]
			c := newUIClient(msg)
			for _, ch := range chunks {
				if err := c.apply(ch); err != nil {
					t.Fatalf("round %d: client rejects the stream: %v\n%s", round, err, rec.Body.String())
				}
			}
			if c.finish == "" && c.errorText == "" {
				t.Fatalf("round %d: the response has neither finish nor error:\n%s", round, rec.Body.String())
			}
			if c.finish != "" && completeWithToolCalls(*msg) {
				t.Fatalf("round %d: the response ends on a step the client would re-send:\n%s", round, rec.Body.String())
			}
			if c.errorText != "" {
				// The user tries again after an error.
				msgs = append(msgs, UIMessage{ID: "u" + strconv.Itoa(round+2), Role: "user", Parts: []UIPart{{Type: "text", Text: "again"}}})
				continue
			}
			if c.finish != FinishReasonToolCalls {
				break
			}
			answered := false
			for i := range msg.Parts {
				p := &msg.Parts[i]
				switch {
				case p.Type == "tool-form" && p.State == StateInputAvailable:
					p.State, p.Output = StateOutputAvailable, json.RawMessage(`{"ok":true}`)
					answered = true
				case p.State == StateApprovalRequested:
					a := approve
					approve = !approve
					p.State, p.Approval.Approved = StateApprovalResponded, &a
					answered = true
				}
			}
			if !answered {
				t.Fatalf("round %d: paused with nothing to answer:\n%s", round, rec.Body.String())
			}
		}
		if int(runs.Load()) > countApproved(msgs) {
			t.Fatalf("delete_record ran %d times with %d approvals", runs.Load(), countApproved(msgs))
		}
	})
}

func countApproved(msgs []UIMessage) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Approval != nil && p.Approval.Approved != nil && *p.Approval.Approved {
				n++
			}
		}
	}
	return n
}

var fuzzSecret = []byte("the fuzz target's secret, 32+ bytes")

// signedSeeds plays a chat through the Mapper with signing on and returns
// the bodies an honest client posts back: after a turn that answered a
// text, reasoning, a server tool, a call to an unknown tool, a client tool
// and an approval request; with the client tool answered and the approval
// given; and with a new user message after that.
func signedSeeds(tb testing.TB) [][]byte {
	var runs atomic.Int32
	form, _ := agentloop.NewClientTool("form", "A form.", nil)
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{
		simtest.Reasoning("Plan."), simtest.Signature("provider-sig"), simtest.Text("Working on it."),
		simtest.Call("c-w", "get_weather", map[string]string{"city": "Oslo"}),
		simtest.Call("c-x", "no_such_tool", map[string]int{"n": 1}),
		simtest.Call("c-f", "form", map[string]string{"name": "Ada"}),
		simtest.Call("c-d", "delete_record", map[string]int{"id": 7}),
	}})
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{weatherTool(tb), deleteTool(tb, &runs), form}}
	m := NewMapper("msg-1")
	m.signWith(newSigner(fuzzSecret), nil)
	var chunks []Chunk
	for item, err := range agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("go")}, nil) {
		chunks = m.Map(chunks, item, err)
	}
	asst := UIMessage{ID: "msg-1", Role: "assistant", Parts: []UIPart{}}
	c := newUIClient(&asst)
	for _, ch := range chunks {
		if err := c.apply(ch); err != nil {
			tb.Fatal(err)
		}
	}
	user := UIMessage{ID: "u1", Role: "user", Parts: []UIPart{{Type: "text", Text: "go"}}}
	seed := func(msgs ...UIMessage) []byte {
		b, err := json.Marshal(map[string]any{"id": "c", "messages": msgs, "trigger": "submit-message", "messageId": "msg-1"})
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	paused := seed(user, asst)
	yes := true
	for i := range asst.Parts {
		switch p := &asst.Parts[i]; p.ToolCallID {
		case "c-f":
			p.State, p.Output = StateOutputAvailable, json.RawMessage(`{"ok":true}`)
		case "c-d":
			a := *p.Approval
			a.Approved = &yes
			p.State, p.Approval = StateApprovalResponded, &a
		}
	}
	answered := seed(user, asst)
	more := seed(user, asst, UIMessage{ID: "u2", Role: "user", Parts: []UIPart{{Type: "text", Text: "more"}}})
	return [][]byte{paused, answered, more}
}

// signedFact is one thing the server signed, keyed by what identifies it.
type signedFact [6]string

// signedFacts returns what the honest bodies hold that the server made, and
// the owner of each call ("server", "client", or "rejected" for a call the
// loop answered itself).
func signedFacts(tb testing.TB, bodies [][]byte) (map[signedFact]bool, map[string]string) {
	facts := map[signedFact]bool{}
	owners := map[string]string{}
	for _, b := range bodies {
		req, err := DecodeRequest(bytes.NewReader(b), Limits{})
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range req.Messages {
			if m.Role != "assistant" {
				continue
			}
			for _, p := range m.Parts {
				for _, f := range partFacts(m.ID, p) {
					facts[f] = true
				}
				if p.IsTool() {
					switch {
					case metadataSig(p.CallProviderMetadata) == "":
						owners[p.ToolCallID] = "rejected"
					case p.ToolCallID == "c-f":
						owners[p.ToolCallID] = ownerClient
					default:
						owners[p.ToolCallID] = ownerServer
					}
				}
			}
		}
	}
	return facts, owners
}

// partFacts returns the server-made facts of one assistant part.
func partFacts(msgID string, p UIPart) []signedFact {
	switch {
	case p.Type == "text" && p.Text != "":
		return []signedFact{{"text", msgID, p.Text}}
	case p.Type == "reasoning":
		sig, red := reasoningFromMetadata(p.ProviderMetadata)
		if p.Text == "" && sig == "" && red == "" {
			return nil // carries nothing, and ToHistory drops it, as an empty text
		}
		return []signedFact{{"reasoning", msgID, p.Text, sig, red}}
	case p.IsTool() && p.State != StateInputStreaming:
		c := partCall(&p)
		out := []signedFact{{"call", msgID, c.id, c.name, c.input}}
		if p.Approval != nil && p.Approval.ID != "" {
			out = append(out, signedFact{"approval", msgID, c.id, p.Approval.ID})
		}
		if (p.State == StateOutputAvailable && !isTrue(p.Preliminary)) || p.State == StateOutputError {
			out = append(out, signedFact{"result", msgID, c.id, string(p.State), resultValue(&p)})
		}
		return out
	}
	return nil
}

// FuzzVerifySignedBody mutates bodies an honest client posts back in the
// stateless mode. Whatever the mutation, a body the signature check accepts
// holds only server-made parts the server signed, in the message it signed
// them for: the same texts and reasoning, the same calls with the same
// input, the same approval requests, and, for every call the client does
// not answer itself, the same result or none. Every refusal wraps
// ErrSignature.
func FuzzVerifySignedBody(f *testing.F) {
	seeds := signedSeeds(f)
	for _, s := range seeds {
		f.Add(s)
	}
	facts, owners := signedFacts(f, seeds)
	s := newSigner(fuzzSecret)
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := DecodeRequest(bytes.NewReader(data), Limits{MaxBodyBytes: 1 << 16, MaxMessages: 16, MaxParts: 64})
		if err != nil {
			return
		}
		out, err := s.verify(req.Messages)
		if err != nil {
			if !errors.Is(err, ErrSignature) {
				t.Fatalf("a refusal that does not wrap ErrSignature: %v", err)
			}
			return
		}
		for _, m := range out {
			if m.Role != "assistant" {
				continue
			}
			for _, p := range m.Parts {
				if p.Type == "file" {
					t.Fatalf("an assistant file part passed the check")
				}
				for _, fact := range partFacts(m.ID, p) {
					if fact[0] == "result" && owners[fact[2]] == ownerClient {
						continue // the client's own answer
					}
					if !facts[fact] {
						t.Fatalf("the check let through %q, which the server never signed", fact)
					}
				}
			}
		}
		if h, err := ToHistory(out); err == nil {
			if err := h.Validate(); err != nil {
				t.Fatalf("ToHistory returned an invalid history: %v", err)
			}
		}
	})
}
