package aisdk

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentloop/agentloop/internal/jsonscan"
)

// This file is the tamper-evident stateless mode: the signatures the
// [Mapper] puts on what the server decided, and the check the [Handler]
// makes on what a client posts back.
//
// What is signed, each part bound to the id of the assistant message it
// belongs to (a signed part cannot be moved to another message), and where
// the signature rides so that the AI SDK client keeps it on the part and
// posts it back unchanged (checked in ai@7's processUIMessageStream):
//
//	assistant text         text-end providerMetadata          → part.providerMetadata
//	assistant reasoning    reasoning-end providerMetadata     → part.providerMetadata
//	tool call (id, name,   tool-input-available               → part.callProviderMetadata
//	  input, client/server)  providerMetadata
//	tool result (the call, tool-output-available/-error and   → part.resultProviderMetadata
//	  and its output or      tool-input-error providerMetadata
//	  error text)
//	approval request       tool-approval-request signature    → part.approval.signature
//
// Each signature is under the key "agentloop" as {"sig": "<base64url>"}.
// What the client decides is not signed: user messages, the outputs of
// client tools, approval decisions and their reasons.

// signingKeyLabel separates the signing key from other uses of the secret.
const signingKeyLabel = "agentloop/aisdk: signatures of UI message parts, v1"

// signer signs and checks the parts the server made. It is safe for
// concurrent use.
type signer struct {
	key  []byte
	macs sync.Pool // of *macState, reused from signature to signature
}

// macState is one HMAC and the buffers of its signatures.
type macState struct {
	mac      hash.Hash
	msg, sum []byte
	val      []byte // a value in canonical form (appendOutput)
}

func newSigner(secret []byte) *signer {
	m := hmac.New(sha256.New, secret)
	io.WriteString(m, signingKeyLabel)
	s := &signer{key: m.Sum(nil)}
	s.macs.New = func() any { return &macState{mac: hmac.New(sha256.New, s.key)} }
	return s
}

// The kinds of signed things, the first field of every signature.
const (
	sigText       = "text" // the first form of text signatures (textV1)
	sigTextStream = "text-stream"
	sigReasoning  = "reasoning"
	sigCall       = "call"
	sigResult     = "result"
	sigApproval   = "approval"
)

// Owners of a tool call, as signed: whose output answers it.
const (
	ownerServer = "server"
	ownerClient = "client"
)

// sum returns the signature of fields. Each field is taken as the client
// will read it back (invalid UTF-8 replaced byte by byte, as the encoders
// write it) and length-prefixed, so that no two lists of fields sign alike.
func (s *signer) sum(fields ...string) string {
	var buf [64]byte // a signature is 43 bytes
	return string(s.appendSum(buf[:0], fields...))
}

// appendSum appends the signature of fields (sum) to dst.
func (s *signer) appendSum(dst []byte, fields ...string) []byte {
	st := s.macs.Get().(*macState)
	st.msg = appendFields(st.msg[:0], fields)
	st.mac.Reset()
	st.mac.Write(st.msg)
	return s.seal(dst, st)
}

// seal appends the signature that st's MAC has taken to dst, and puts st
// back.
func (s *signer) seal(dst []byte, st *macState) []byte {
	st.sum = st.mac.Sum(st.sum[:0])
	dst = base64.RawURLEncoding.AppendEncode(dst, st.sum)
	if cap(st.msg) > 64<<10 {
		st.msg = nil // a long text's buffer is not kept for the next one
	}
	s.macs.Put(st)
	return dst
}

// appendFields appends what a signature covers: each field as a client
// reads it back, length-prefixed.
func appendFields(b []byte, fields []string) []byte {
	for _, f := range fields {
		f = wireText(f)
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

// matches reports whether a posted signature is the one the server made,
// in a time that does not depend on where they differ (as hmac.Equal,
// without copying the strings to byte slices).
func matches(posted, want string) bool {
	return matchesSig(posted, func(dst []byte) []byte { return append(dst, want...) })
}

// matchesSig is matches for the signature that sign appends to a buffer,
// so that it is never made a string.
func matchesSig[S string | []byte](posted S, sign func(dst []byte) []byte) bool {
	var buf [64]byte // a signature is 43 bytes
	want := sign(buf[:0])
	if len(posted) == 0 || len(posted) != len(want) {
		return false
	}
	var diff byte
	for i := 0; i < len(want); i++ {
		diff |= posted[i] ^ want[i]
	}
	return diff == 0
}

// text returns the signature of a whole text part, as streamText
// computes it delta by delta.
func (s *signer) text(msgID, text string) string {
	var buf [64]byte
	return string(s.appendText(buf[:0], msgID, text))
}

// appendText appends the signature of a whole text part (text) to dst.
func (s *signer) appendText(dst []byte, msgID, text string) []byte {
	t := s.streamText(msgID)
	t.write(text, false)
	return s.appendEndText(dst, t)
}

// streamText starts the signature of the text part of msgID that streams
// delta by delta: the MAC takes each delta as it is written
// (textMAC.write), so no copy of the whole text is kept. It covers the
// kind sigTextStream and msgID, length-prefixed, then the text as the
// client reads it back, unprefixed: the text is the last field, so the
// message stays unambiguous. endText returns the signature and the MAC to
// the pool.
func (s *signer) streamText(msgID string) textMAC {
	st := s.macs.Get().(*macState)
	st.mac.Reset()
	st.msg = appendFields(st.msg[:0], []string{sigTextStream, msgID})
	return textMAC{st}
}

// A textMAC is the signature of a text part being streamed (streamText).
// Its message gathers in st.msg and goes to the MAC textMACBatch bytes at
// a time, not delta by delta: a delta is a few bytes, and each Write to
// the MAC costs more than copying them.
type textMAC struct{ st *macState }

// textMACBatch is how many bytes of a streamed text's message a textMAC
// gathers before it writes them to the MAC: a multiple of SHA-256's
// 64-byte block, small enough to stay in the L1 cache.
const textMACBatch = 1 << 10

// write adds a delta of the text, as the client reads it back (invalid
// UTF-8 replaced byte by byte, per delta, as the delta's chunk carries
// it). valid says the delta is known to be valid UTF-8, read back as it
// is (appendJSONText found it so): then it is not checked again.
func (t textMAC) write(delta string, valid bool) {
	st := t.st
	if valid {
		st.msg = append(st.msg, delta...)
	} else {
		st.msg = appendWire(st.msg, delta)
	}
	if len(st.msg) >= textMACBatch {
		st.mac.Write(st.msg)
		st.msg = st.msg[:0]
		if cap(st.msg) > 64<<10 {
			st.msg = nil // a long delta's buffer is not kept
		}
	}
}

// endText returns the signature of the text t and puts t's MAC back.
func (s *signer) endText(t textMAC) string {
	var buf [64]byte
	return string(s.appendEndText(buf[:0], t))
}

// appendEndText appends the signature of the text t (endText) to dst.
func (s *signer) appendEndText(dst []byte, t textMAC) []byte {
	t.st.mac.Write(t.st.msg) // what write has gathered since its last Write
	return s.seal(dst, t.st)
}

// textV1 is the signature of a text part as builds before streamText
// signed it (the kind sigText, the text length-prefixed). verify still
// accepts it, so that conversations signed before an upgrade go on; the
// two kinds' messages differ from their first byte, so neither signature
// is ever valid as the other.
func (s *signer) textV1(msgID, text string) string {
	return s.sum(sigText, msgID, text)
}

func (s *signer) call(msgID string, c callInfo, owner string) string {
	var buf [64]byte
	return string(s.appendCall(buf[:0], msgID, c, owner))
}

func (s *signer) appendCall(dst []byte, msgID string, c callInfo, owner string) []byte {
	return s.appendSum(dst, sigCall, msgID, c.id, c.name, c.input, owner)
}

func (s *signer) result(msgID string, c callInfo, state PartState, value string) string {
	var buf [64]byte
	return string(s.appendResult(buf[:0], msgID, c, state, value))
}

func (s *signer) appendResult(dst []byte, msgID string, c callInfo, state PartState, value string) []byte {
	return s.appendSum(dst, sigResult, msgID, c.id, c.name, c.input, string(state), value)
}

// appendOutput appends the signature of a call's output to dst, the
// output given as JSON not yet in canonical form: the canonical form is
// written into the MAC's message rather than made a string first. It
// appends s.result(msgID, c, StateOutputAvailable, canonicalValue(output)).
func (s *signer) appendOutput(dst []byte, msgID string, c callInfo, output json.RawMessage) []byte {
	st := s.macs.Get().(*macState)
	st.val = appendCanonical(st.val[:0], output)
	if !utf8.Valid(st.val) { // text that is not JSON, as the client reads it back
		st.val = []byte(wireText(string(st.val)))
	}
	st.msg = appendFields(st.msg[:0], []string{sigResult, msgID, c.id, c.name, c.input, string(StateOutputAvailable)})
	st.msg = binary.AppendUvarint(st.msg, uint64(len(st.val)))
	st.msg = append(st.msg, st.val...)
	if cap(st.val) > 64<<10 {
		st.val = nil
	}
	st.mac.Reset()
	st.mac.Write(st.msg)
	return s.seal(dst, st)
}

func (s *signer) approval(msgID, callID, approvalID string) string {
	return s.sum(sigApproval, msgID, callID, approvalID)
}

func (s *signer) reasoning(msgID, text, signature, redacted string) string {
	return s.sum(sigReasoning, msgID, text, signature, redacted)
}

// callInfo is a tool call as signed: its input in canonical form.
type callInfo struct {
	id, name, input string
}

// partCall returns the call of a posted tool part as checked.
func partCall(p *UIPart) callInfo {
	return callInfo{id: p.ToolCallID, name: p.ToolNameOf(), input: canonicalValue(p.Input)}
}

// metadataSig returns the signature stored under "agentloop" in a
// providerMetadata object, or "".
func metadataSig(md json.RawMessage) string {
	return string(metadataSigBytes(md))
}

// metadataSigBytes is metadataSig without making a string: the bytes are
// md's own when the signature needs no unquoting, as the Mapper writes it.
func metadataSigBytes(md json.RawMessage) []byte {
	if len(md) == 0 {
		return nil
	}
	if sig, ok := metadataSigFast(md); ok {
		return sig
	}
	var m struct {
		Agentloop struct {
			Sig string `json:"sig"`
		} `json:"agentloop"`
	}
	if json.Unmarshal(md, &m) != nil {
		return nil
	}
	return []byte(m.Agentloop.Sig)
}

// metadataSigFast is metadataSig in one pass over the metadata the Mapper
// writes, {"agentloop":{"sig":"…"}, …}; it reports false for anything
// else (a duplicate or case-folded key, a signature that is not a string,
// invalid JSON), which encoding/json then reads.
func metadataSigFast(md json.RawMessage) ([]byte, bool) {
	var d jsonscan.Decoder
	d.Reset(md)
	if !d.BeginObject() {
		return nil, false
	}
	var sig []byte
	found := false
	for {
		k, ok := d.Key()
		if !ok {
			break
		}
		switch {
		case string(k) == metadataKey && !found:
			found = true
			if !d.BeginObject() {
				return nil, false
			}
			seen := false
			for {
				k, ok := d.Key()
				if !ok {
					break
				}
				switch {
				case string(k) == "sig" && !seen:
					seen = true
					s, at, ok := d.TextAt()
					if !ok {
						return nil, false
					}
					sig = s
					if at < 0 { // in the decoder's buffer, which the next string reuses
						sig = append([]byte(nil), s...)
					}
				case strings.EqualFold(string(k), "sig"):
					return nil, false
				default:
					if !d.Skip() {
						return nil, false
					}
				}
			}
		case strings.EqualFold(string(k), metadataKey):
			return nil, false
		default:
			if !d.Skip() {
				return nil, false
			}
		}
	}
	return sig, d.Err() == nil && d.Finish()
}

// withSig returns md with sig added under "agentloop" (md is not modified).
func withSig(md ProviderMetadata, sig string) ProviderMetadata {
	out := make(ProviderMetadata, len(md)+1)
	for k, v := range md {
		out[k] = v
	}
	inner := make(map[string]json.RawMessage, len(md[metadataKey])+1)
	for k, v := range md[metadataKey] {
		inner[k] = v
	}
	b, _ := json.Marshal(sig)
	inner["sig"] = b
	out[metadataKey] = inner
	return out
}

// appendWire appends s to b as a client reads it back from this
// package's JSON (wireText, without making a string).
func appendWire(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		return append(b, s...)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// sigMetadata is withSig(nil, sig), without encoding sig with
// encoding/json: a signature is base64url, which a JSON string carries as
// it is.
func sigMetadata(sig string) ProviderMetadata {
	b := make([]byte, 0, len(sig)+2)
	b = append(append(append(b, '"'), sig...), '"')
	return ProviderMetadata{metadataKey: {"sig": b}}
}

// reusedSig holds the signatures' providerMetadata that a Mapper
// rewrites from one Map call to the next (Mapper.sigReuse): for a Mapper
// whose chunks are encoded before its next Map call, as the Handler's
// are, so that a signature costs no maps. Each signature of one call has
// its own metadata. A Mapper whose chunks are handed out must not have
// one.
type reusedSig struct {
	mds []sigMD
	n   int // how many of mds this Map call has used

	// calls is the Mapper's signedCall cache (Mapper.signed), kept empty
	// here for the next Mapper: one Mapper at a time holds a reusedSig.
	calls map[string]signedCall
}

// maxReusedCalls is the most calls a reused signedCall cache may have
// held to be kept for the next Mapper.
const maxReusedCalls = 64

// release empties r's call cache (so that it keeps no call alive) and
// puts r back in reusedSigs.
func (r *reusedSig) release() {
	if len(r.calls) > maxReusedCalls {
		r.calls = nil
	}
	clear(r.calls)
	reusedSigs.Put(r)
}

type sigMD struct {
	md     ProviderMetadata
	inner  map[string]json.RawMessage
	quoted []byte
}

// reset makes the metadata of r free for a new Map call; a nil r does
// nothing.
func (r *reusedSig) reset() {
	if r != nil {
		r.n = 0
	}
}

// reusedSigs keeps the reusedSigs of ended responses for the next ones.
var reusedSigs = sync.Pool{New: func() any { return new(reusedSig) }}

// sigMetadata returns sigMetadata(sig), in m.sigReuse when m has one.
func (m *Mapper) sigMetadata(sig string) ProviderMetadata {
	return m.sigMetadataOf(func(dst []byte) []byte { return append(dst, sig...) })
}

// sigMetadataOf returns the providerMetadata of the signature that sig
// appends to a buffer: written in place into m.sigReuse when m has one,
// so that the signature is never a string of its own.
func (m *Mapper) sigMetadataOf(sig func(dst []byte) []byte) ProviderMetadata {
	r := m.sigReuse
	if r == nil {
		var buf [64]byte
		return sigMetadata(string(sig(buf[:0])))
	}
	if r.n == len(r.mds) {
		inner := make(map[string]json.RawMessage, 1)
		r.mds = append(r.mds, sigMD{md: ProviderMetadata{metadataKey: inner}, inner: inner})
	}
	e := &r.mds[r.n]
	r.n++
	e.quoted = append(sig(append(e.quoted[:0], '"')), '"')
	e.inner["sig"] = e.quoted
	return e.md
}

// wireText returns s as a client reads it back from this package's JSON:
// each byte of invalid UTF-8 becomes U+FFFD, as appendString and
// encoding/json write it.
func wireText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// ErrSignature is wrapped by the error for a request, in the stateless mode,
// whose server-made parts (assistant text and reasoning, tool calls, the
// results of server tools, approval requests) lack a valid signature: they
// were altered or invented, or signed with another key (another process's
// random key, or a Handler.Secret that changed). It also wraps
// [ErrBadRequest].
var ErrSignature = fmt.Errorf("%w: a server-made part is not as the server sent it", ErrBadRequest)

// partError names the part a signature check refused.
func partError(i int, m UIMessage, j int, p UIPart, what string) error {
	part := p.Type
	if p.IsTool() {
		part += fmt.Sprintf(", call %q", p.ToolCallID)
	}
	return fmt.Errorf("%w: message %d (assistant %q), part %d (%s): %s", ErrSignature, i, m.ID, j, part, what)
}

// errNotSigned is the end of the message of most refusals.
const errNotSigned = "has no valid signature from this server (altered, invented, or signed with another key)"

// verify checks the server-made parts of the posted messages and returns
// the messages to convert: those parts as posted, and what the client
// decides as posted, except for what is dropped because it cannot be
// checked and was not the client's to write: text and reasoning still
// streaming when the client was cut off, and error results the client wrote
// for server calls (assistant-ui writes one for every call still pending
// when the user sends a new message), whose calls then count as
// unanswered. The error wraps [ErrSignature] and names the part.
func (s *signer) verify(msgs []UIMessage) ([]UIMessage, error) {
	out := make([]UIMessage, len(msgs))
	copy(out, msgs)
	for i, m := range msgs {
		if m.Role != "assistant" {
			continue
		}
		var parts []UIPart // a new slice, from the first part dropped or rewritten
		for j := range m.Parts {
			p := &m.Parts[j]
			v, err := s.verifyPart(m.ID, p)
			if err != nil {
				return nil, partError(i, m, j, *p, err.Error())
			}
			if v != keepPart && parts == nil {
				parts = make([]UIPart, j, len(m.Parts))
				copy(parts, m.Parts[:j])
			}
			switch {
			case v == unansweredPart:
				parts = append(parts, withoutResult(*p))
			case v == keepPart && parts != nil:
				parts = append(parts, *p)
			}
		}
		if parts != nil {
			out[i].Parts = parts
		}
	}
	return out, nil
}

// A verdict is what verify does with a part it accepts.
type verdict int

const (
	keepPart       verdict = iota
	dropPart               // streaming text or reasoning, never signed
	unansweredPart         // a server call whose result is not trusted: kept without it
)

// withoutResult returns the part of a server call without the result the
// client wrote for it (verdict unansweredPart).
func withoutResult(p UIPart) UIPart {
	switch p.State {
	case StateOutputAvailable:
		p.State, p.Output, p.Preliminary = StateInputAvailable, nil, nil
	case StateOutputError:
		p.State, p.ErrorText = StateInputAvailable, ""
	}
	return p
}

// verifyPart checks one part of the assistant message msgID.
func (s *signer) verifyPart(msgID string, p *UIPart) (verdict, error) {
	switch {
	case p.Type == "text":
		if p.Text == "" {
			return keepPart, nil
		}
		sig := metadataSigBytes(p.ProviderMetadata)
		if matchesSig(sig, func(dst []byte) []byte { return s.appendText(dst, msgID, p.Text) }) || matches(string(sig), s.textV1(msgID, p.Text)) {
			return keepPart, nil
		}
		if p.State == StateStreaming {
			return dropPart, nil // cut off before its text-end: never signed
		}
		return 0, errors.New("the text " + errNotSigned)
	case p.Type == "reasoning":
		sig, red := reasoningFromMetadata(p.ProviderMetadata)
		if p.Text == "" && sig == "" && red == "" {
			return keepPart, nil
		}
		if matches(metadataSig(p.ProviderMetadata), s.reasoning(msgID, p.Text, sig, red)) {
			return keepPart, nil
		}
		if p.State == StateStreaming {
			return dropPart, nil
		}
		return 0, errors.New("the reasoning " + errNotSigned)
	case p.Type == "file":
		return 0, errors.New("the server makes no files in assistant messages")
	case p.IsTool():
		return s.verifyTool(msgID, p)
	case p.Type == "data-"+DataSubrun:
		var st SubrunState
		if err := json.Unmarshal(p.Data, &st); err != nil || !matches(st.Signature, s.subrun(msgID, &st)) {
			return 0, errSubrunState
		}
		return keepPart, nil
	}
	return keepPart, nil // step-start, sources, other data, custom: never sent to the model
}

func (s *signer) verifyTool(msgID string, p *UIPart) (verdict, error) {
	if p.State == StateInputStreaming {
		return keepPart, nil // dropped by ToHistory: the call never completed
	}
	c := partCall(p)
	hasResult := (p.State == StateOutputAvailable && !isTrue(p.Preliminary)) || p.State == StateOutputError
	resultOK := false
	if hasResult {
		if sig := metadataSigBytes(p.ResultProviderMetadata); len(sig) != 0 {
			if !matchesSig(sig, func(dst []byte) []byte { return s.appendResultOf(dst, msgID, c, p) }) {
				return 0, errors.New("the result " + errNotSigned)
			}
			resultOK = true
		}
	}
	owner := ""
	if !resultOK {
		callSig := metadataSigBytes(p.CallProviderMetadata)
		switch {
		case matchesSig(callSig, func(dst []byte) []byte { return s.appendCall(dst, msgID, c, ownerServer) }):
			owner = ownerServer
		case matchesSig(callSig, func(dst []byte) []byte { return s.appendCall(dst, msgID, c, ownerClient) }):
			owner = ownerClient
		default:
			return 0, errors.New("the tool call " + errNotSigned)
		}
	}
	if a := p.Approval; a != nil && a.ID != "" {
		if !matches(a.Signature, s.approval(msgID, c.id, a.ID)) {
			return 0, errors.New("the approval request " + errNotSigned)
		}
	}
	if resultOK || owner == ownerClient {
		return keepPart, nil
	}
	// A server call without a signed result.
	switch {
	case p.State == StateOutputAvailable && isTrue(p.Preliminary):
		return unansweredPart, nil
	case p.State == StateOutputAvailable:
		return 0, errors.New("the output of a server tool " + errNotSigned + "; only the server answers its tools")
	case p.State == StateOutputError:
		return unansweredPart, nil
	}
	return keepPart, nil
}

// appendResultOf appends the signature of the result of the tool part p
// to dst: s.result of resultValue(p), without making the value a string.
func (s *signer) appendResultOf(dst []byte, msgID string, c callInfo, p *UIPart) []byte {
	if p.State == StateOutputError {
		return s.appendResult(dst, msgID, c, p.State, p.ErrorText)
	}
	return s.appendOutput(dst, msgID, c, p.Output)
}

// resultValue is what a result signature covers: the canonical output, or
// the error text.
func resultValue(p *UIPart) string {
	if p.State == StateOutputError {
		return p.ErrorText
	}
	return canonicalValue(p.Output)
}
