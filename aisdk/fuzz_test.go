package aisdk

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		specToolContinuation, specApprovalContinuation, specAssistantUI, userBody("hi"),
		`{"messages":[{"id":"a","role":"assistant","parts":[{"type":"step-start"},{"type":"tool-x","toolCallId":"c","state":"output-denied","input":null,"approval":{"id":"a","approved":false}},{"type":"steering-message","id":"s","parts":[{"type":"text","text":"t"}]}]}]}`,
		`{"messages":[{"id":"u","role":"user","parts":[{"type":"file","mediaType":"image/png","url":"data:,"}]},{"id":"a","role":"assistant","parts":[{"type":"dynamic-tool","toolName":"d","toolCallId":"c","state":"input-available","input":"{\"a\":"}]}]}`,
		`{"messages":[{"id":"a","role":"assistant","parts":[{"type":"tool-x","toolCallId":"c","state":"output-available","input":{},"output":{"__aui_modelContent":[{"type":"text","text":"t"}],"value":1}}]}]}`,
		`{}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
}

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
// byte is 0x80 or more run with a chat store, so the client's echo of each
// response must pass Reconcile.
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
		h := newHandler(simtest.NewModel(turns...), weatherTool(t), deleteTool(t, &runs), form)
		h.KeepAlive = -1
		if len(data) > 0 && data[0] >= 0x80 {
			h.Store = NewMemoryStore() // the echoed messages must pass Reconcile
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
