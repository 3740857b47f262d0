package aisdk

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var jsonValueSeeds = []string{
	`{"city":"Oslo","day":"tomorrow"}`, `{"unit":"c","city":"Oslo","a":{"z":1,"b":[2,{"y":null,"x":true}]}}`,
	`[1,-0,0.5,1e21,1e-7,123456789012345678,-1.50,2E+3,1e400,-1e-400]`, `"<b>&amp;</b> \u2028 \ud800 é"`,
	` {"a" : 1 } `, `{"a":1,"a":2}`, `{"b":1,"a":1,"b":2}`, `{"<":1,"a":2}`, `{"\u0061":1,"b":2}`,
	`{"a":"\u0000\u001f\b\f\n\r\t\"\\/"}`, "\"\xff\"", `{}`, `[]`, `null`, `true`, ``, `{`, `{"a":1}x`,
	`{"__aui_modelContent":[{"type":"text","text":"hi"}],"value":1}`, `{"__AUI_modelcontent":null,"x":1}`,
	`{"agentloop":{"sig":"abc","signature":"s","redacted":"r"},"anthropic":{"signature":"a","redactedData":"d"}}`,
	`{"agentloop":{"sig":"a"},"agentloop":{"sig":"b"}}`, `{"AgentLoop":{"SIG":"a"}}`, `{"agentloop":{"sig":5}}`,
	`{"agentloop":null,"anthropic":{"signature":5,"redactedData":"d"}}`, `{"x":5,"anthropic":{"signature":"a"}}`,
	`{"agentloop":{"signature":"a","signature":null}}`, `{"anthropic":{"signature":"a"},"anthropic":{}}`,
}

// canonicalValue's one pass writes what encoding/json writes.
func FuzzCanonicalValue_OnePassAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range jsonValueSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := canonicalValue(data), canonicalStd(data); got != want {
			t.Fatalf("canonicalValue(%q) = %q, encoding/json gives %q", data, got, want)
		}
	})
}

func TestCanonicalValue_OnePassTakesCommonValues(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"city":"Oslo","day":"tomorrow"}`, `{"city":"Oslo","day":"tomorrow"}`},
		{`{ "unit": "c", "city": "Oslo", "days": [1, 2.50, -0, 1e21, 1E-7] }`, `{"city":"Oslo","days":[1,2.5,0,1e+21,1e-7],"unit":"c"}`},
		{`{"q":"<a href=\"x\">&</a>\u2028\/"}`, `{"q":"\u003ca href=\"x\"\u003e\u0026\u003c/a\u003e\u2028/"}`},
		{`{"b":{"d":true,"c":null},"a":[]}`, `{"a":[],"b":{"c":null,"d":true}}`},
		{`123456789012345678`, `123456789012345680`},
	} {
		got, ok := canonicalFast(json.RawMessage(tc.in))
		if !ok || got != tc.want {
			t.Errorf("canonicalFast(%s) = %s, %v; want %s", tc.in, got, ok, tc.want)
		}
		if std := canonicalStd(json.RawMessage(tc.in)); std != tc.want {
			t.Errorf("canonicalStd(%s) = %s; the test wants %s", tc.in, std, tc.want)
		}
	}
}

// metadataStd reads a reasoning part's and a signed part's metadata as
// the encoding/json code before issue 16 did.
func metadataStd(md json.RawMessage) (sig, signature, redacted string) {
	var s struct {
		Agentloop struct {
			Sig string `json:"sig"`
		} `json:"agentloop"`
	}
	if json.Unmarshal(md, &s) == nil {
		sig = s.Agentloop.Sig
	}
	var m map[string]map[string]json.RawMessage
	if json.Unmarshal(md, &m) != nil {
		return sig, "", ""
	}
	str := func(provider, key string) string {
		var s string
		if raw, ok := m[provider][key]; ok {
			_ = json.Unmarshal(raw, &s)
		}
		return s
	}
	signature, redacted = str(metadataKey, "signature"), str(metadataKey, "redacted")
	if signature == "" {
		signature = str("anthropic", "signature")
	}
	if redacted == "" {
		redacted = str("anthropic", "redactedData")
	}
	return sig, signature, redacted
}

func FuzzMetadata_OnePassAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range jsonValueSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, md []byte) {
		sig, signature, redacted := metadataStd(md)
		if got := metadataSig(md); got != sig {
			t.Errorf("metadataSig(%q) = %q, encoding/json reads %q", md, got, sig)
		}
		if gs, gr := reasoningFromMetadata(md); gs != signature || gr != redacted {
			t.Errorf("reasoningFromMetadata(%q) = %q, %q; encoding/json reads %q, %q", md, gs, gr, signature, redacted)
		}
	})
}

// outputStd is outputContent as it was before issue 16, by way of
// encoding/json.
func outputStd(output json.RawMessage) string {
	trimmed := bytes.TrimSpace(output)
	if len(trimmed) == 0 {
		return "null"
	}
	switch trimmed[0] {
	case '"':
		var s string
		if json.Unmarshal(trimmed, &s) == nil {
			return s
		}
	case '{':
		var env struct {
			ModelContent []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"__aui_modelContent"`
			Value json.RawMessage `json:"value"`
		}
		if json.Unmarshal(trimmed, &env) == nil && env.ModelContent != nil {
			var texts []string
			for _, c := range env.ModelContent {
				if c.Type == "text" {
					texts = append(texts, c.Text)
				}
			}
			if len(texts) > 0 {
				return strings.Join(texts, "\n")
			}
			return outputStd(env.Value)
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, trimmed) == nil {
		return buf.String()
	}
	return string(trimmed)
}

func FuzzOutputContent_OnePassAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range jsonValueSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, output []byte) {
		if got, want := outputContent(output), outputStd(output); got != want {
			t.Fatalf("outputContent(%q) = %q, encoding/json gives %q", output, got, want)
		}
	})
}

// jsonValueStd is jsonValue as encoding/json would write it: the value
// must decode into an any, and comes back compacted.
func jsonValueStd(data []byte) (json.RawMessage, bool) {
	if !utf8.Valid(data) {
		return nil, false
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil, false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, data) != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// jsonValue's one pass takes and writes what encoding/json does.
func FuzzJSONValue_OnePassAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range jsonValueSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`[1e308,1.8e308,-1.7976931348623157e308,1e-400,` + strings.Repeat("9", 320) + `]`))
	f.Add([]byte(`{"a\"1e999":1E999}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := jsonValue(data)
		want, wantOK := jsonValueStd(data)
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("jsonValue(%q) = %q, %v; encoding/json gives %q, %v", data, got, ok, want, wantOK)
		}
	})
}

func TestSignerAppendOutput_SignsAsResultOfTheCanonicalValue(t *testing.T) {
	s := newSigner([]byte("a test secret of 32 bytes or more"))
	c := callInfo{id: "call_1", name: "get_weather", input: `{"city":"Oslo"}`}
	for _, v := range append(jsonValueSeeds, "not json \xff", "\xff") {
		want := s.result("msg_1", c, StateOutputAvailable, canonicalValue(json.RawMessage(v)))
		if got := string(s.appendOutput(nil, "msg_1", c, json.RawMessage(v))); got != want {
			t.Errorf("output(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestMetadataSigBytes_KeepsAnUnquotedSignaturePastLaterEscapes(t *testing.T) {
	md := json.RawMessage(`{"agentloop":{"sig":"a\u0062c","n\u006fte":"\u0078\u0078\u0078"},"o\u0074her":"\u0079"}`)
	if got := string(metadataSigBytes(md)); got != "abc" {
		t.Errorf("metadataSigBytes(%s) = %q, want \"abc\"", md, got)
	}
}
