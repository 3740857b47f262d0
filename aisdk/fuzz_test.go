package aisdk

import (
	"bytes"
	"encoding/json"
	"testing"
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
		if _, err := Reconcile(h, h2); err != nil {
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
		b, err := MarshalChunk(c)
		if err != nil {
			t.Fatalf("re-encoding %T: %v", c, err)
		}
		if _, err := ParseChunk(b); err != nil {
			t.Fatalf("re-encoded %s does not parse: %v", b, err)
		}
	})
}
