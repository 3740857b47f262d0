package aisdk

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fastSeeds are bodies for the one-pass decoder: the fuzz seeds, the
// signed bodies, and bodies it must leave to encoding/json.
func fastSeeds(tb testing.TB) [][]byte {
	var out [][]byte
	for _, s := range []string{
		specToolContinuation, specApprovalContinuation, specAssistantUI, userBody("hi \"there\"\n\u00e9"),
		`{"messages":[{"id":"a","role":"assistant","parts":[{"type":"step-start"},{"type":"tool-x","toolCallId":"c","state":"output-denied","input":null,"approval":{"id":"a","approved":false}},{"type":"steering-message","id":"s","parts":[{"type":"text","text":"t"}]}]}]}`,
		`{"messages":[{"id":"u","role":"user","parts":[{"type":"file","mediaType":"image/png","url":"data:,","providerReference":{"a":"b"}}]},{"id":"a","role":"assistant","parts":[{"type":"dynamic-tool","toolName":"d","toolCallId":"c","state":"input-available","input":"{\"a\":","preliminary":true,"dynamic":null}]}]}`,
		`{"id":"c","userId":"u-7","messages":[{"id":"u","role":"user","metadata":null,"parts":[{"type":"text","text":"hi","custom":{"x":1},"custom":2},{"type":"data-note","data":null,"id":"d"}]}],"callSettings":{"temperature":0.5},"config":null}`,
		// Left to encoding/json: keys that only fold to a field, duplicate
		// fields, nulls clients never send, and errors.
		`{"messages":[{"ID":"u","role":"user","parts":[{"Type":"text","text":"hi"}]}]}`,
		`{"messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"a","text":"b"}]}]}`,
		`{"messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"a"}]}],"id":"x","id":"y"}`,
		`{"messages":[{"id":"u","role":"user","parts":[null,{"type":"text"}]}]}`,
		`{"messages":[{"id":"u","role":"user","parts":[{"type":"file","providerReference":{"a":null}}]}]}`,
		`{"messages":[{"id":"u","role":"user","parts":[{"type":"text","approval":{"id":"a"},"approval":{"reason":"r"}}]}]}`,
		`{"messages":[{"id":"u","role":"user","parts":[{"type":"text","text":5}]}]}`,
		`{"messages":[{"id":"u","role":"user","parts":[]}],"trigger":"continue"}`,
		`{"messages":[]}`, `{}`, `[]`, `null`, ``, `{"messages":[{"id":"u","role":"user","parts":[]}]} x`,
	} {
		out = append(out, []byte(s))
	}
	return append(out, signedSeeds(tb)...)
}

// The one-pass decoder never changes a result: whatever it decodes,
// encoding/json decodes the same way.
func FuzzDecodeRequest_OnePassAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range fastSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		limits := Limits{MaxBodyBytes: 1 << 16, MaxMessages: 64, MaxParts: 256}
		got, ok := decodeBodyFast(data, limits)
		want, err := decodeBodyStd(data, limits)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("the one-pass decoder took a body encoding/json refuses (%v):\n%s", err, data)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s\ndecoded (-encoding/json +one pass):\n%s", data, diff)
		}
	})
}

// The same for one part, through UIPart.UnmarshalJSON.
func FuzzUIPartUnmarshal_OnePassAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range fastSeeds(f) {
		req, err := decodeBodyStd(s, Limits{})
		if err != nil {
			continue
		}
		for _, m := range req.Messages {
			for _, p := range m.Parts {
				b, err := json.Marshal(p)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b bodyDecoder
		b.d.Reset(data)
		var got UIPart
		if !b.part(&got) || !b.d.Finish() {
			return
		}
		var want UIPart
		if err := want.unmarshalStd(data); err != nil {
			t.Fatalf("the one-pass decoder took a part encoding/json refuses (%v):\n%s", err, data)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s\ndecoded (-encoding/json +one pass):\n%s", data, diff)
		}
	})
}

func TestDecodeRequest_OnePassTakesWhatClientsSend(t *testing.T) {
	s := newSigner([]byte("a test secret of 32 bytes or more"))
	bodies := map[string][]byte{
		"the tool continuation of the spec":     []byte(specToolContinuation),
		"the approval continuation of the spec": []byte(specApprovalContinuation),
		"assistant-ui's body of the spec":       []byte(specAssistantUI),
		"a long signed chat":                    postedChat(t, s, true, 20),
	}
	for i, b := range signedSeeds(t) {
		bodies["signed seed "+strconv.Itoa(i)] = b
	}
	for name, body := range bodies {
		if _, ok := decodeBodyFast(body, Limits{}.withDefaults()); !ok {
			t.Errorf("%s: left to encoding/json", name)
		}
	}
}

func TestDecodeRequest_OnePassLeavesTheRestToEncodingJSON(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"a key that folds to a field", `{"messages":[{"id":"u","role":"user","parts":[{"type":"text","TEXT":"hi"}]}]}`, "hi"},
		{"a duplicate field", `{"messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"a","text":"b"}]}]}`, "b"},
		{"a duplicate body key", `{"messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"a"}]}],"messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"c"}]}]}`, "c"},
	} {
		data := []byte(tc.body)
		if _, ok := decodeBodyFast(data, Limits{}.withDefaults()); ok {
			t.Errorf("%s: the one-pass decoder took it", tc.name)
		}
		req, err := DecodeRequest(bytes.NewReader(data), Limits{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := req.Messages[0].Parts[0].Text; got != tc.want {
			t.Errorf("%s: text %q, want %q as encoding/json reads it", tc.name, got, tc.want)
		}
	}
}
