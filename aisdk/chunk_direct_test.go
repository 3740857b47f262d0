package aisdk

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAppendChunk_EveryChunkAsEncodingJSONWritesIt pins encodeChunk's
// shortcut (a chunk's MarshalJSON without json.Marshal's second pass):
// the bytes are json.Marshal's for every chunk type, with HTML
// characters, U+2028, invalid UTF-8 and spaced raw JSON in its fields.
func TestAppendChunk_EveryChunkAsEncodingJSONWritesIt(t *testing.T) {
	const tricky = "<a & b>\u2028\xff"
	raw := json.RawMessage(`{ "k" : [1, "<&>\u2029"] }`)
	pm := ProviderMetadata{"p<": {"k&": json.RawMessage(` "<x>" `)}}
	yes := true
	chunks := []Chunk{
		TextStartChunk{ID: tricky, ProviderMetadata: pm},
		TextEndChunk{ID: tricky, Citations: raw, ProviderMetadata: pm},
		ErrorChunk{ErrorText: tricky},
		ToolInputStartChunk{ToolCallID: tricky, ToolName: tricky, ProviderMetadata: pm, Dynamic: &yes, Title: tricky},
		ToolInputAvailableChunk{ToolCallID: tricky, ToolName: tricky, Input: raw, ProviderMetadata: pm},
		ToolInputErrorChunk{ToolCallID: "c", ToolName: "n", Input: raw, ErrorText: tricky},
		ToolOutputAvailableChunk{ToolCallID: tricky, Output: raw, ToolMetadata: map[string]json.RawMessage{"<": raw}},
		ToolOutputErrorChunk{ToolCallID: "c", ErrorText: tricky},
		DataChunk{Name: tricky, ID: tricky, Data: raw},
		FinishChunk{MessageMetadata: raw},
		AbortChunk{Reason: tricky},
		&DataChunk{Name: tricky, Data: raw},
		&TextEndChunk{ID: tricky},
		(*ToolOutputAvailableChunk)(nil),
	}
	for _, tc := range minimalChunks {
		chunks = append(chunks, tc.c)
	}
	for _, c := range chunks {
		want, err := json.Marshal(c)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, appendChunk(&buf, c))
		assert.Equal(t, string(want), buf.String(), "%T", c)
	}
}

// TestAppendChunk_SignatureOutsideBase64URLGoesThroughEncodingJSON pins
// sigOnly's alphabet: a "signature" with a byte outside base64url is
// written as encoding/json writes it (escaped), not as it is.
func TestAppendChunk_SignatureOutsideBase64URLGoesThroughEncodingJSON(t *testing.T) {
	for _, sig := range []string{`"a<b"`, `"a\u0041"`, `"a b"`, `"a+b="`, "\"a\xffb\""} {
		c := ToolOutputErrorChunk{ToolCallID: "c", ErrorText: "e", ProviderMetadata: ProviderMetadata{metadataKey: {"sig": json.RawMessage(sig)}}}
		want, err := json.Marshal(c)
		if err != nil {
			continue // not JSON: nothing to compare
		}
		var buf bytes.Buffer
		require.NoError(t, appendChunk(&buf, c))
		assert.Equal(t, string(want), buf.String(), sig)
	}
}
