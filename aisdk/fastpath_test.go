package aisdk

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bufResponse is an http.ResponseWriter that keeps what is written.
type bufResponse struct {
	h http.Header
	bytes.Buffer
}

func (r *bufResponse) Header() http.Header { return r.h }
func (r *bufResponse) WriteHeader(int)     {}

// textRunItems turns a script into a run's items: the parts of script
// split at '|' are text deltas, except that one starting with "R:" is a
// reasoning delta (which closes the open text part) and one equal to "T"
// starts a new turn.
func textRunItems(script string) []agentloop.Item {
	items := []agentloop.Item{agentloop.TurnStart{Turn: 1}}
	turn := 1
	for _, p := range strings.Split(script, "|") {
		switch {
		case p == "T":
			turn++
			items = append(items, agentloop.TurnStart{Turn: turn})
		case strings.HasPrefix(p, "R:"):
			items = append(items, agentloop.ReasoningDelta{Text: p[2:]})
		default:
			items = append(items, agentloop.TextDelta{Text: p})
		}
	}
	return append(items, agentloop.TurnEnd{Turn: turn, FinishReason: agentloop.FinishStop}, agentloop.Final{})
}

// viaMap writes items as a direct user of the Mapper would: every item
// through Map, every chunk through Writer.WriteChunk.
func viaMap(t testing.TB, items []agentloop.Item, sign *signer) []byte {
	var out bytes.Buffer
	w := NewWriter(&out)
	m := NewMapper("msg-1")
	if sign != nil {
		m.signWith(sign, nil)
	}
	var chunks []Chunk
	for _, it := range items {
		chunks = m.Map(chunks[:0], it, nil)
		for _, c := range chunks {
			require.NoError(t, w.WriteChunk(c))
		}
	}
	require.NoError(t, w.Close())
	return out.Bytes()
}

// viaHandler writes items as the Handler's stream does: text deltas that
// continue an open part through its shortcut, the rest through Map.
func viaHandler(t testing.TB, items []agentloop.Item, sign *signer) []byte {
	rw := &bufResponse{h: http.Header{}}
	out := &output{sw: NewWriter(rw), client: true}
	m := NewMapper("msg-1")
	if sign != nil {
		m.signWith(sign, nil)
	}
	var chunks []Chunk
	for _, it := range items {
		if d, ok := it.(agentloop.TextDelta); ok && out.continueText(m, d.Text) {
			continue
		}
		chunks = m.Map(chunks[:0], it, nil)
		out.write(chunks)
	}
	out.flush()
	out.close()
	require.True(t, out.client)
	return rw.Bytes()
}

// viaMapperWrite writes items through Mapper.Write.
func viaMapperWrite(t testing.TB, items []agentloop.Item, sign *signer) []byte {
	var out bytes.Buffer
	w := NewWriter(&out)
	m := NewMapper("msg-1")
	if sign != nil {
		m.signWith(sign, nil)
	}
	for _, it := range items {
		require.NoError(t, m.Write(w, it, nil))
	}
	require.NoError(t, w.Close())
	return out.Bytes()
}

func TestTextDeltaShortcut_WritesTheBytesMapWrites(t *testing.T) {
	s := newSigner([]byte("a test secret of at least 32 bytes."))
	for _, script := range []string{
		"Hello| wor|ld",
		"a \"quoted\"\n|line\u2028|bad \xff|\xe2\x82|\xac split rune",
		"one|R:think|two|T|three",
		"|empty||deltas|",
		"one| and|R:think|two| and|T|three| and", // parts of several deltas, each with its id
	} {
		for _, sign := range []*signer{nil, s} {
			items := textRunItems(script)
			want := viaMap(t, items, sign)
			got := viaHandler(t, items, sign)
			assert.Equal(t, string(want), string(got), "script %q, signed %v", script, sign != nil)
			assert.Equal(t, string(want), string(viaMapperWrite(t, items, sign)), "Mapper.Write: script %q, signed %v", script, sign != nil)
		}
	}
}

func TestTextDeltaShortcut_IsTakenForDeltasThatContinueAPart(t *testing.T) {
	m := NewMapper("msg-1")
	out := &output{sw: NewWriter(&bufResponse{h: http.Header{}}), client: true}
	assert.False(t, out.continueText(m, "first"), "no text part is open yet")
	m.Map(nil, agentloop.TurnStart{Turn: 1}, nil)
	m.Map(nil, agentloop.TextDelta{Text: "first"}, nil)
	assert.True(t, out.continueText(m, "second"))
	assert.False(t, out.continueText(m, ""), "an empty delta is left to Map")
}

func FuzzTextDeltaShortcut_WritesTheBytesMapWrites(f *testing.F) {
	for _, s := range []string{"Hello| wor|ld", "a\n|\xff|\xe2\x82|\xac", "one|R:think|two|T|three", "||", "one| and|R:x|two| and"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	s := newSigner([]byte("a fuzz secret of at least 32 bytes.."))
	f.Fuzz(func(t *testing.T, script string, signed bool) {
		var sign *signer
		if signed {
			sign = s
		}
		items := textRunItems(script)
		want, got := viaMap(t, items, sign), viaHandler(t, items, sign)
		if !bytes.Equal(want, got) {
			t.Fatalf("the shortcut wrote\n%s\nMap wrote\n%s", got, want)
		}
		if got := viaMapperWrite(t, items, sign); !bytes.Equal(want, got) {
			t.Fatalf("Mapper.Write wrote\n%s\nMap wrote\n%s", got, want)
		}
	})
}

func TestSignText_StreamedDeltaByDeltaIsTheSignatureOfTheTextTheClientReads(t *testing.T) {
	s := newSigner([]byte("a test secret of at least 32 bytes."))
	deltas := []string{"Hé", "llo \xff", "\xe2\x82", "\xac!"}
	st := s.streamText("msg-1")
	read := ""
	for _, d := range deltas {
		st.write(d, false)
		read += wireText(d) // as each delta's chunk carries it
	}
	assert.Equal(t, s.text("msg-1", read), s.endText(st))
	assert.NotEqual(t, s.text("msg-2", read), s.text("msg-1", read), "a signature is bound to its message")
}

func TestSignText_ALongTextSignsAsItsWholeMessageWhateverTheDeltasSizes(t *testing.T) {
	s := newSigner([]byte("a test secret of at least 32 bytes."))
	st := s.streamText("msg-1")
	var read strings.Builder
	for i := range 3000 { // several of textMACBatch, deltas of 0 to 700 bytes
		d := strings.Repeat("é", i%7) + strings.Repeat("x", (i*37)%701)
		st.write(d, i%2 == 0) // valid UTF-8: either said so or checked
		read.WriteString(d)
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write(appendFields(nil, []string{sigTextStream, "msg-1"}))
	mac.Write([]byte(read.String()))
	assert.Equal(t, base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), s.endText(st))
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestVerify_AcceptsTextSignedInTheFirstFormAndNeitherFormAsTheOther(t *testing.T) {
	s := newSigner([]byte("a test secret of at least 32 bytes."))
	part := func(text, sig string) []UIMessage {
		return []UIMessage{{ID: "msg-1", Role: "assistant", Parts: []UIPart{{
			Type: "text", Text: text, State: StateDone,
			ProviderMetadata: mustJSON(t, withSig(nil, sig)),
		}}}}
	}
	_, err := s.verify(part("hello", s.textV1("msg-1", "hello")))
	require.NoError(t, err, "a text signed before signatures streamed still verifies")
	_, err = s.verify(part("hello", s.text("msg-1", "hello")))
	require.NoError(t, err)
	_, err = s.verify(part("hellO", s.text("msg-1", "hello")))
	require.ErrorIs(t, err, ErrSignature)
	// The first form length-prefixes the text; the streamed form does not:
	// a streamed signature of "\x05hello" must not pass as the first form's
	// of "hello" (their kinds differ from the first byte on).
	_, err = s.verify(part("hello", s.text("msg-1", "\x05hello")))
	require.ErrorIs(t, err, ErrSignature)
}

func TestMapperWrite_ReturnsTheWritersErrorAndWritesNothingAfterClose(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	m := NewMapper("msg-1")
	require.NoError(t, m.Write(w, agentloop.TurnStart{Turn: 1}, nil))
	require.NoError(t, m.Write(w, agentloop.TextDelta{Text: "a"}, nil))
	require.NoError(t, w.Close())
	n := out.Len()
	assert.ErrorIs(t, m.Write(w, agentloop.TextDelta{Text: "b"}, nil), errClosed, "the shortcut")
	assert.ErrorIs(t, m.Write(w, agentloop.Final{}, nil), errClosed, "through Map")
	assert.Equal(t, n, out.Len())
}

func TestAppendChunk_SignedChunksAsEncodingJSONWritesThem(t *testing.T) {
	sig := sigMetadata("AbC-_09")
	other := ProviderMetadata{metadataKey: {"sig": json.RawMessage(`"AbC-_09"`), "x": json.RawMessage(`1`)}}
	yes := true
	tm := map[string]json.RawMessage{"k": json.RawMessage(`"v"`)}
	for _, c := range []Chunk{
		TextEndChunk{ID: "text-1", ProviderMetadata: sig},
		TextEndChunk{ID: "<&>", Citations: json.RawMessage(`[1]`), ProviderMetadata: sig},
		TextEndChunk{ID: "text-1", ProviderMetadata: other},
		TextEndChunk{ID: "text-1", ProviderMetadata: ProviderMetadata{metadataKey: {"sig": json.RawMessage(`"a/b"`)}}},
		ToolInputAvailableChunk{ToolCallID: "c", ToolName: "n", Input: json.RawMessage(`{"a":"<b>"}`), ProviderMetadata: sig},
		ToolInputAvailableChunk{ToolCallID: "c", ToolName: "n", Input: json.RawMessage(`{}`), ProviderExecuted: &yes, ProviderMetadata: sig},
		ToolInputAvailableChunk{ToolCallID: "c", ToolName: "n", Input: json.RawMessage(`{}`), ProviderMetadata: sig, ToolMetadata: tm, Dynamic: &yes, Title: "t"},
		ToolInputErrorChunk{ToolCallID: "c", ToolName: "n", Input: json.RawMessage(`"x"`), ErrorText: "e\u2028", ProviderMetadata: sig},
		ToolInputErrorChunk{ToolCallID: "c", ToolName: "n", Input: json.RawMessage(`{}`), ErrorText: "e", ProviderMetadata: sig, Title: "t"},
		ToolOutputAvailableChunk{ToolCallID: "c", Output: json.RawMessage(`{"a": 1}`), ProviderMetadata: sig},
		ToolOutputAvailableChunk{ToolCallID: "c", Output: json.RawMessage(`1`), ProviderMetadata: sig, Preliminary: &yes},
		ToolOutputErrorChunk{ToolCallID: "c", ErrorText: "bad <thing>", ProviderMetadata: sig},
		ToolOutputErrorChunk{ToolCallID: "c", ErrorText: "e", ProviderMetadata: sig, ToolMetadata: tm},
	} {
		want, err := json.Marshal(c)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, appendChunk(&buf, c))
		assert.Equal(t, string(want), buf.String())
	}
}
