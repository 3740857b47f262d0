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
	"unicode/utf8"

	"github.com/agentloop/agentloop"
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

// signer signs and checks the parts the server made.
type signer struct {
	key []byte
}

func newSigner(secret []byte) *signer {
	m := hmac.New(sha256.New, secret)
	io.WriteString(m, signingKeyLabel)
	return &signer{key: m.Sum(nil)}
}

// The kinds of signed things, the first field of every signature.
const (
	sigText      = "text"
	sigReasoning = "reasoning"
	sigCall      = "call"
	sigResult    = "result"
	sigApproval  = "approval"
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
	m := hmac.New(sha256.New, s.key)
	writeFields(m, fields)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func writeFields(m hash.Hash, fields []string) {
	var n [binary.MaxVarintLen64]byte
	for _, f := range fields {
		f = wireText(f)
		m.Write(n[:binary.PutUvarint(n[:], uint64(len(f)))])
		io.WriteString(m, f)
	}
}

// matches reports whether a posted signature is the one the server made.
func matches(posted, want string) bool {
	return posted != "" && hmac.Equal([]byte(posted), []byte(want))
}

func (s *signer) text(msgID, text string) string {
	return s.sum(sigText, msgID, text)
}

func (s *signer) call(msgID string, c callInfo, owner string) string {
	return s.sum(sigCall, msgID, c.id, c.name, c.input, owner)
}

func (s *signer) result(msgID string, c callInfo, state PartState, value string) string {
	return s.sum(sigResult, msgID, c.id, c.name, c.input, string(state), value)
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

// callOf returns a call of the loop as signed: with its "input" as the
// Mapper sends it.
func callOf(c agentloop.ToolCall) callInfo {
	return callInfo{id: c.ID, name: c.Name, input: canonicalValue(inputJSON(c.Args))}
}

// partCall returns the call of a posted tool part as checked.
func partCall(p *UIPart) callInfo {
	return callInfo{id: p.ToolCallID, name: p.ToolNameOf(), input: canonicalValue(p.Input)}
}

// metadataSig returns the signature stored under "agentloop" in a
// providerMetadata object, or "".
func metadataSig(md json.RawMessage) string {
	if len(md) == 0 {
		return ""
	}
	var m struct {
		Agentloop struct {
			Sig string `json:"sig"`
		} `json:"agentloop"`
	}
	if json.Unmarshal(md, &m) != nil {
		return ""
	}
	return m.Agentloop.Sig
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

// canonicalValue returns a JSON value in a form that survives a trip
// through a browser: decoded as JavaScript decodes it (numbers as float64,
// the last of duplicate keys, -0 as 0) and encoded with sorted keys. Text
// that is not JSON is returned with a prefix no JSON has, so that it only
// equals itself.
func canonicalValue(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "\x00" + string(raw)
	}
	b, err := json.Marshal(normalize(v))
	if err != nil {
		return "\x00" + string(raw)
	}
	return string(b)
}

func normalize(v any) any {
	switch x := v.(type) {
	case float64:
		if x == 0 {
			return float64(0) // JSON.stringify(-0) is "0"
		}
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalize(x[k])
		}
	}
	return v
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
	for i, m := range msgs {
		out[i] = m
		if m.Role != "assistant" {
			continue
		}
		parts := make([]UIPart, 0, len(m.Parts))
		for j, p := range m.Parts {
			keep, err := s.verifyPart(m.ID, &p)
			if err != nil {
				return nil, partError(i, m, j, p, err.Error())
			}
			if keep {
				parts = append(parts, p)
			}
		}
		out[i].Parts = parts
	}
	return out, nil
}

// verifyPart checks one part of the assistant message msgID; it may
// rewrite *p (an untrusted result dropped) and reports whether to keep it.
func (s *signer) verifyPart(msgID string, p *UIPart) (keep bool, err error) {
	switch {
	case p.Type == "text":
		if p.Text == "" || matches(metadataSig(p.ProviderMetadata), s.text(msgID, p.Text)) {
			return true, nil
		}
		if p.State == StateStreaming {
			return false, nil // cut off before its text-end: never signed
		}
		return false, errors.New("the text " + errNotSigned)
	case p.Type == "reasoning":
		sig, red := reasoningFromMetadata(p.ProviderMetadata)
		if p.Text == "" && sig == "" && red == "" {
			return true, nil
		}
		if matches(metadataSig(p.ProviderMetadata), s.reasoning(msgID, p.Text, sig, red)) {
			return true, nil
		}
		if p.State == StateStreaming {
			return false, nil
		}
		return false, errors.New("the reasoning " + errNotSigned)
	case p.Type == "file":
		return false, errors.New("the server makes no files in assistant messages")
	case p.IsTool():
		return s.verifyTool(msgID, p)
	}
	return true, nil // step-start, sources, data, custom: never sent to the model
}

func (s *signer) verifyTool(msgID string, p *UIPart) (bool, error) {
	if p.State == StateInputStreaming {
		return true, nil // dropped by ToHistory: the call never completed
	}
	c := partCall(p)
	hasResult := (p.State == StateOutputAvailable && !isTrue(p.Preliminary)) || p.State == StateOutputError
	resultOK := false
	if sig := metadataSig(p.ResultProviderMetadata); sig != "" && hasResult {
		if !matches(sig, s.result(msgID, c, p.State, resultValue(p))) {
			return false, errors.New("the result " + errNotSigned)
		}
		resultOK = true
	}
	owner := ""
	if !resultOK {
		callSig := metadataSig(p.CallProviderMetadata)
		switch {
		case matches(callSig, s.call(msgID, c, ownerServer)):
			owner = ownerServer
		case matches(callSig, s.call(msgID, c, ownerClient)):
			owner = ownerClient
		default:
			return false, errors.New("the tool call " + errNotSigned)
		}
	}
	if a := p.Approval; a != nil && a.ID != "" {
		if !matches(a.Signature, s.approval(msgID, c.id, a.ID)) {
			return false, errors.New("the approval request " + errNotSigned)
		}
	}
	if resultOK || owner == ownerClient {
		return true, nil
	}
	// A server call without a signed result.
	switch {
	case p.State == StateOutputAvailable && isTrue(p.Preliminary):
		p.State, p.Output, p.Preliminary = StateInputAvailable, nil, nil
	case p.State == StateOutputAvailable:
		return false, errors.New("the output of a server tool " + errNotSigned + "; only the server answers its tools")
	case p.State == StateOutputError:
		p.State, p.ErrorText = StateInputAvailable, ""
	}
	return true, nil
}

// resultValue is what a result signature covers: the canonical output, or
// the error text.
func resultValue(p *UIPart) string {
	if p.State == StateOutputError {
		return p.ErrorText
	}
	return canonicalValue(p.Output)
}
