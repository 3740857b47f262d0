package aisdk

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Every chunk type, in its minimal form: required keys only.
var minimalChunks = []struct {
	c    Chunk
	want string
}{
	{StartChunk{}, `{"type":"start"}`},
	{StartStepChunk{}, `{"type":"start-step"}`},
	{FinishStepChunk{}, `{"type":"finish-step"}`},
	{ResetStepChunk{}, `{"type":"reset-step"}`},
	{TextStartChunk{ID: "t"}, `{"type":"text-start","id":"t"}`},
	{TextEndChunk{ID: "t"}, `{"type":"text-end","id":"t"}`},
	{ReasoningStartChunk{ID: "r"}, `{"type":"reasoning-start","id":"r"}`},
	{ReasoningEndChunk{ID: "r"}, `{"type":"reasoning-end","id":"r"}`},
	{ErrorChunk{ErrorText: "x"}, `{"type":"error","errorText":"x"}`},
	{ToolOutputDeniedChunk{"c"}, `{"type":"tool-output-denied","toolCallId":"c"}`},
	{CustomChunk{Kind: "p.t"}, `{"type":"custom","kind":"p.t"}`},
	{FinishChunk{}, `{"type":"finish"}`},
	{AbortChunk{}, `{"type":"abort"}`},
	{MessageMetadataChunk{}, `{"type":"message-metadata","messageMetadata":null}`},
	{DataChunk{Name: "weather"}, `{"type":"data-weather","data":null}`},
	{FileChunk{URL: "u", MediaType: "image/png"}, `{"type":"file","url":"u","mediaType":"image/png"}`},
	{ReasoningFileChunk{URL: "u", MediaType: "a/b"}, `{"type":"reasoning-file","url":"u","mediaType":"a/b"}`},
	{SourceURLChunk{SourceID: "s", URL: "u"}, `{"type":"source-url","sourceId":"s","url":"u"}`},
	{SourceDocumentChunk{SourceID: "s", MediaType: "m"}, `{"type":"source-document","sourceId":"s","mediaType":"m","title":""}`},
	{ToolInputStartChunk{ToolCallID: "c", ToolName: "n"}, `{"type":"tool-input-start","toolCallId":"c","toolName":"n"}`},
	{ToolInputAvailableChunk{ToolCallID: "c", ToolName: "n"}, `{"type":"tool-input-available","toolCallId":"c","toolName":"n","input":null}`},
	{ToolInputErrorChunk{ToolCallID: "c", ToolName: "n"}, `{"type":"tool-input-error","toolCallId":"c","toolName":"n","input":null,"errorText":""}`},
	{ToolApprovalRequestChunk{ApprovalID: "a", ToolCallID: "c"}, `{"type":"tool-approval-request","approvalId":"a","toolCallId":"c"}`},
	{ToolApprovalResponseChunk{ApprovalID: "a"}, `{"type":"tool-approval-response","approvalId":"a","approved":false}`},
	{ToolOutputAvailableChunk{ToolCallID: "c"}, `{"type":"tool-output-available","toolCallId":"c","output":null}`},
	{ToolOutputErrorChunk{ToolCallID: "c", ErrorText: "e"}, `{"type":"tool-output-error","toolCallId":"c","errorText":"e"}`},
	{TextDeltaChunk{ID: "t", Delta: ""}, `{"type":"text-delta","id":"t","delta":""}`},
	{ReasoningDeltaChunk{ID: "r", Delta: "d"}, `{"type":"reasoning-delta","id":"r","delta":"d"}`},
	{ToolInputDeltaChunk{ToolCallID: "c", InputTextDelta: "{"}, `{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"{"}`},
}

func TestChunks_MinimalFormsHaveNoNullOptionalsAndKeepUnknownTypedFields(t *testing.T) {
	for _, tc := range minimalChunks {
		c, want := tc.c, tc.want
		b, err := marshalChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("%s: got %s, want %s", ChunkType(c), b, want)
		}
		// json.Marshal gives the same wire form.
		b2, err := json.Marshal(c)
		if err != nil || string(b2) != want {
			t.Errorf("%s: json.Marshal = %s, %v", ChunkType(c), b2, err)
		}
		back, err := ParseChunk(b)
		if err != nil {
			t.Errorf("%s: ParseChunk: %v", ChunkType(c), err)
		} else if ChunkType(back) != ChunkType(c) {
			t.Errorf("ParseChunk type %s, want %s", ChunkType(back), ChunkType(c))
		}
	}
	// 29 named types plus data-*; steering-message is tested below.
	if len(minimalChunks) != 29 {
		t.Errorf("%d chunk types covered", len(minimalChunks))
	}
}

func TestChunks_FullFormsRoundTrip(t *testing.T) {
	yes := true
	raw := json.RawMessage(`{"k":[1,2]}`)
	pm := ProviderMetadata{"openai": {"id": json.RawMessage(`"x"`)}}
	chunks := []Chunk{
		StartChunk{MessageID: "m", MessageMetadata: raw},
		TextDeltaChunk{ID: "t", Delta: "d", ProviderMetadata: pm},
		TextEndChunk{ID: "t", Citations: json.RawMessage(`[]`), ProviderMetadata: pm},
		ToolInputStartChunk{ToolCallID: "c", ToolName: "n", InputEncoding: "json", ProviderExecuted: &yes, ProviderMetadata: pm,
			ToolMetadata: map[string]json.RawMessage{"a": json.RawMessage(`1`)}, Dynamic: &yes, Title: "T"},
		ToolInputAvailableChunk{ToolCallID: "c", ToolName: "n", Input: raw, Title: "T"},
		ToolApprovalRequestChunk{ApprovalID: "a", ToolCallID: "c", ApprovalDescriptor: raw, Reason: "r", IsAutomatic: &yes, Signature: "s"},
		ToolApprovalResponseChunk{ApprovalID: "a", Approved: true, Reason: "ok"},
		ToolOutputAvailableChunk{ToolCallID: "c", Output: raw, Preliminary: &yes},
		SteeringMessageChunk{ID: "s", Parts: []UIPart{{Type: "text", Text: "steer"}}},
		DataChunk{Name: "w", ID: "1", Data: raw, Transient: &yes},
		FinishChunk{FinishReason: FinishReasonInterrupted, MessageMetadata: raw},
		AbortChunk{Reason: "user"},
		MessageMetadataChunk{MessageMetadata: raw},
	}
	for _, c := range chunks {
		b, err := marshalChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseChunk(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if diff := cmp.Diff(c, back); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", ChunkType(c), diff)
		}
	}
}

func TestParseChunk_RejectsWhatTheClientRejects(t *testing.T) {
	for _, tc := range []struct{ in, wantErr string }{
		{`{"type":"start","messageId":null}`, `"messageId" is null`},
		{`{"type":"tool-input-available","toolCallId":"c","toolName":"n","input":{},"providerExecuted":null}`, `"providerExecuted" is null`},
		{`{"type":"tool-input-available","toolCallId":"c","toolName":"n"}`, `missing required field "input"`},
		{`{"type":"tool-output-available","toolCallId":"c"}`, `missing required field "output"`},
		{`{"type":"data-x"}`, `missing required field "data"`},
		{`{"type":"finish","finishReason":"unknown"}`, `finishReason "unknown"`},
		{`{"type":"text","text":"v4"}`, `unknown chunk type "text"`},
		{`{"type":"text-delta","id":"t","delta":"x","providerMetadata":{"x":1}}`, `text-delta chunk`},
		{`{"delta":"x"}`, `no "type"`},
		{`[1]`, `not a JSON object`},
	} {
		_, err := ParseChunk([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseChunk(%s) = %v, want an error containing %q", tc.in, err, tc.wantErr)
		}
	}
	for _, ok := range []string{
		`{"type":"tool-output-available","toolCallId":"c","output":null}`,
		`{"type":"start","messageMetadata":null}`,
		`{"type":"data-","data":1}`,
		`{"type":"custom","kind":"nodot"}`,
		`{"type":"text-start","id":"t","extra":"kept by looseObject"}`,
	} {
		if _, err := ParseChunk([]byte(ok)); err != nil {
			t.Errorf("ParseChunk(%s): %v", ok, err)
		}
	}
}

func TestAppendString_MatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "\n\r\t\x00\x1f", "<b>&</b>", "ünï©ødé 😀", "\u2028\u2029", "bad \xff utf8", "\x7f"} {
		var buf bytes.Buffer
		appendString(&buf, s)
		var got string
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("appendString(%q) = %s: %v", s, buf.Bytes(), err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if got != want {
			t.Errorf("appendString(%q) decodes to %q", s, got)
		}
		if bytes.ContainsAny(buf.Bytes(), "\n\r") {
			t.Errorf("appendString(%q) has a raw line break: %s", s, buf.Bytes())
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\xff", "😀", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		appendString(&buf, s)
		var got string
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("invalid JSON %s: %v", buf.Bytes(), err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); utf8.ValidString(s) && got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		if bytes.ContainsAny(buf.Bytes(), "\n\r") {
			t.Fatal("raw line break")
		}
	})
}

func TestOutputJSON_CompactsJSONAndQuotesText(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1,` + "\n" + ` "b": [1, 2]}`: `{"a":1,"b":[1,2]}`,
		`5`:                                 `5`,
		`"quoted"`:                          `"quoted"`,
		`sunny and 20°C`:                    `"sunny and 20°C"`,
		``:                                  `""`,
		`{"broken":`:                        `"{\"broken\":"`,
	} {
		if got := string(outputJSON(in)); got != want {
			t.Errorf("outputJSON(%q) = %s, want %s", in, got, want)
		}
	}
}
