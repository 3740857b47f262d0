package aisdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"
)

// This file encodes chunks: the MarshalJSON method of every chunk type, and
// the encoder the [Writer] uses, with fast paths for the deltas that make up
// most of a stream.

// appendChunk writes the wire JSON of c (without a trailing newline).
func appendChunk(buf *bytes.Buffer, c Chunk) error {
	if c == nil {
		return errors.New("aisdk: nil chunk")
	}
	// Fast paths for the chunks that make up most of a stream.
	switch v := c.(type) {
	case TextDeltaChunk:
		if v.ProviderMetadata == nil {
			appendTextDelta(buf, v.ID, v.Delta)
			return nil
		}
	case ReasoningDeltaChunk:
		if v.ProviderMetadata == nil {
			buf.WriteString(`{"type":"reasoning-delta","id":`)
			appendString(buf, v.ID)
			buf.WriteString(`,"delta":`)
			appendString(buf, v.Delta)
			buf.WriteByte('}')
			return nil
		}
	// Signed chunks (the stateless mode): the metadata that holds only
	// the signature is written by hand after the rest of the chunk, where
	// encoding/json puts it when no later field is set.
	case TextEndChunk:
		if sig, ok := sigOnly(v.ProviderMetadata); ok {
			v.ProviderMetadata = nil
			return appendSigned(buf, v, sig)
		}
	case ToolInputAvailableChunk:
		if sig, ok := sigOnly(v.ProviderMetadata); ok && v.ToolMetadata == nil && v.Dynamic == nil && v.Title == "" {
			v.ProviderMetadata = nil
			return appendSigned(buf, v, sig)
		}
	case ToolInputErrorChunk:
		if sig, ok := sigOnly(v.ProviderMetadata); ok && v.ToolMetadata == nil && v.Dynamic == nil && v.Title == "" {
			v.ProviderMetadata = nil
			return appendSigned(buf, v, sig)
		}
	case ToolOutputAvailableChunk:
		if sig, ok := sigOnly(v.ProviderMetadata); ok && v.ToolMetadata == nil && v.Dynamic == nil && v.Preliminary == nil {
			v.ProviderMetadata = nil
			return appendSigned(buf, v, sig)
		}
	case ToolOutputErrorChunk:
		if sig, ok := sigOnly(v.ProviderMetadata); ok && v.ToolMetadata == nil && v.Dynamic == nil {
			v.ProviderMetadata = nil
			return appendSigned(buf, v, sig)
		}
	case ToolInputDeltaChunk:
		buf.WriteString(`{"type":"tool-input-delta","toolCallId":`)
		appendString(buf, v.ToolCallID)
		buf.WriteString(`,"inputTextDelta":`)
		appendString(buf, v.InputTextDelta)
		buf.WriteByte('}')
		return nil
	}
	b, err := encodeChunk(c)
	if err != nil {
		return fmt.Errorf("aisdk: encoding %s chunk: %w", c.chunkType(), err)
	}
	buf.Write(b)
	return nil
}

// encodeChunk returns json.Marshal(c). For every chunk but a data chunk
// it calls c's MarshalJSON itself: withType writes a constant ASCII type
// and a body that encoding/json made, already compact and HTML-escaped,
// so json.Marshal's pass over the method's output (validating, compacting
// and escaping it again) changes nothing and is skipped. A data chunk's
// type holds its name, which withType does not HTML-escape: it goes
// through json.Marshal, and so does a pointer to a chunk (json.Marshal
// writes a nil one as null).
func encodeChunk(c Chunk) ([]byte, error) {
	if m, ok := c.(json.Marshaler); ok && reflect.TypeOf(c).Kind() != reflect.Pointer {
		if _, data := c.(DataChunk); !data {
			return m.MarshalJSON()
		}
	}
	return json.Marshal(c)
}

// sigOnly returns the encoded signature of metadata that holds nothing
// else, {"agentloop":{"sig":"<base64url>"}} as sigMetadata makes it; it
// reports false for any other metadata.
func sigOnly(md ProviderMetadata) (json.RawMessage, bool) {
	if len(md) != 1 || len(md[metadataKey]) != 1 {
		return nil, false
	}
	sig := md[metadataKey]["sig"]
	if len(sig) < 2 || sig[0] != '"' || sig[len(sig)-1] != '"' {
		return nil, false
	}
	for _, c := range sig[1 : len(sig)-1] {
		if !base64URL[c] {
			return nil, false
		}
	}
	return sig, true
}

// base64URL[c] reports whether the byte c is of the base64url alphabet
// (A–Z, a–z, 0–9, '-', '_'): a table, as plainASCII, since sigOnly looks
// at every byte of every signature.
var base64URL = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
	}
	return t
}()

// appendSigned writes c, which has no provider metadata and no field
// after it, with the metadata of the signature sig as its last field.
// It is generic so that c is not boxed again; its MarshalJSON output is
// json.Marshal's (encodeChunk).
func appendSigned[C interface {
	Chunk
	MarshalJSON() ([]byte, error)
}](buf *bytes.Buffer, c C, sig json.RawMessage) error {
	b, err := c.MarshalJSON()
	if err != nil {
		return fmt.Errorf("aisdk: encoding %s chunk: %w", c.chunkType(), err)
	}
	buf.Write(b[:len(b)-1])
	buf.WriteString(`,"providerMetadata":{"` + metadataKey + `":{"sig":`)
	buf.Write(sig)
	buf.WriteString("}}}")
	return nil
}

// appendTextDelta writes the wire JSON of a text-delta chunk without
// provider metadata.
func appendTextDelta(buf *bytes.Buffer, id, delta string) {
	buf.Grow(len(id) + len(delta) + 40)
	buf.Write(appendTextDeltaJSON(buf.AvailableBuffer(), id, delta))
}

// appendTextDeltaJSON is appendTextDelta on a byte slice.
func appendTextDeltaJSON(b []byte, id, delta string) []byte {
	b = append(b, `{"type":"text-delta","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"delta":`...)
	b = appendJSONString(b, delta)
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// plainASCII[c] reports whether the byte c goes into a JSON string as it
// is: ASCII, neither a control character nor '"' nor '\\'. Its 256
// entries let a byte index it without a bounds check.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does; HTML characters are not escaped.
func appendString(buf *bytes.Buffer, s string) {
	buf.Grow(len(s) + 2)
	buf.Write(appendJSONString(buf.AvailableBuffer(), s))
}

// appendJSONString is appendString on a byte slice: it appends s to b as a
// JSON string and returns the extended slice.
func appendJSONString(b []byte, s string) []byte {
	b, _ = appendJSONText(b, s)
	return b
}

// appendJSONText is appendJSONString that also reports whether s is valid
// UTF-8, so that a client reads it back as it is (wireText(s) == s): the
// escaping looks at every byte already, and a streamed text's signature
// then takes s without checking it again.
func appendJSONText(b []byte, s string) (_ []byte, valid bool) {
	valid = true
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainASCII[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			valid = false
			continue
		}
		// U+2028 and U+2029 are valid JSON but break some JavaScript
		// parsers; encoding/json escapes them too.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"'), valid
}

// withType marshals v, the fields of a chunk, with the chunk's "type" key
// first. v must be of a type without a MarshalJSON method.
func withType(typ string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(body) + len(typ) + 12)
	buf.WriteString(`{"type":`)
	appendString(&buf, typ)
	if len(body) > 2 {
		buf.WriteByte(',')
		buf.Write(body[1 : len(body)-1])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// MarshalJSON encodes the chunk in its wire form.
func (c StartChunk) MarshalJSON() ([]byte, error) {
	type plain StartChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c StartStepChunk) MarshalJSON() ([]byte, error) {
	type plain StartStepChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c FinishStepChunk) MarshalJSON() ([]byte, error) {
	type plain FinishStepChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ResetStepChunk) MarshalJSON() ([]byte, error) {
	type plain ResetStepChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c TextStartChunk) MarshalJSON() ([]byte, error) {
	type plain TextStartChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c TextDeltaChunk) MarshalJSON() ([]byte, error) {
	type plain TextDeltaChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c TextEndChunk) MarshalJSON() ([]byte, error) {
	type plain TextEndChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ReasoningStartChunk) MarshalJSON() ([]byte, error) {
	type plain ReasoningStartChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ReasoningDeltaChunk) MarshalJSON() ([]byte, error) {
	type plain ReasoningDeltaChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ReasoningEndChunk) MarshalJSON() ([]byte, error) {
	type plain ReasoningEndChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ErrorChunk) MarshalJSON() ([]byte, error) {
	type plain ErrorChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolInputStartChunk) MarshalJSON() ([]byte, error) {
	type plain ToolInputStartChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolInputDeltaChunk) MarshalJSON() ([]byte, error) {
	type plain ToolInputDeltaChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolInputAvailableChunk) MarshalJSON() ([]byte, error) {
	type plain ToolInputAvailableChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolInputErrorChunk) MarshalJSON() ([]byte, error) {
	type plain ToolInputErrorChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolApprovalRequestChunk) MarshalJSON() ([]byte, error) {
	type plain ToolApprovalRequestChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolApprovalResponseChunk) MarshalJSON() ([]byte, error) {
	type plain ToolApprovalResponseChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolOutputAvailableChunk) MarshalJSON() ([]byte, error) {
	type plain ToolOutputAvailableChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolOutputErrorChunk) MarshalJSON() ([]byte, error) {
	type plain ToolOutputErrorChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ToolOutputDeniedChunk) MarshalJSON() ([]byte, error) {
	type plain ToolOutputDeniedChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c SourceURLChunk) MarshalJSON() ([]byte, error) {
	type plain SourceURLChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c SourceDocumentChunk) MarshalJSON() ([]byte, error) {
	type plain SourceDocumentChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c FileChunk) MarshalJSON() ([]byte, error) {
	type plain FileChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c ReasoningFileChunk) MarshalJSON() ([]byte, error) {
	type plain ReasoningFileChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c CustomChunk) MarshalJSON() ([]byte, error) {
	type plain CustomChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c SteeringMessageChunk) MarshalJSON() ([]byte, error) {
	type plain SteeringMessageChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c DataChunk) MarshalJSON() ([]byte, error) {
	type plain DataChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c FinishChunk) MarshalJSON() ([]byte, error) {
	type plain FinishChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c AbortChunk) MarshalJSON() ([]byte, error) {
	type plain AbortChunk
	return withType(c.chunkType(), plain(c))
}

// MarshalJSON encodes the chunk in its wire form.
func (c MessageMetadataChunk) MarshalJSON() ([]byte, error) {
	type plain MessageMetadataChunk
	return withType(c.chunkType(), plain(c))
}
