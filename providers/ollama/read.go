package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentloop/agentloop/internal/jsonscan"
	"github.com/ollama/ollama/api"
)

// This file calls /api/chat itself, for the Models that New builds (issue
// 16). The official client's Chat reads every stream into a fixed 8 MB
// line buffer, allocated anew for each call, and decodes each line twice
// with reflection. chat sends the same request and returns the same
// values (lines decoded into api.ChatResponse, the same errors), but its
// line buffer starts at 4 KB and grows only for a longer line, up to the
// same 8 MB, and it decodes the lines a stream is made of (text, thinking,
// the final counts) in one pass. Any other line (a tool call, an error, a
// key it does not know the type of, anything unusual) is decoded as the
// official client decodes it. FuzzChat holds the two readers to the same
// results.

// Line buffer bounds: a stream's first buffer, and the longest line read
// (the official client's fixed buffer size).
const (
	initialLineBuffer = 4 << 10
	maxLineBytes      = 8 << 20
)

// errLineTooLong is wrapped by the error for a stream line longer than
// maxLineBytes.
var errLineTooLong = bufio.ErrTooLong

// chat POSTs cr to /api/chat and calls fn with each line of the answer,
// as api.Client.Chat does. *api.ChatResponse is reused from line to line.
func (m *Model) chat(ctx context.Context, cr *api.ChatRequest, fn func(*api.ChatResponse) error) error {
	body, err := json.Marshal(cr)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.chatURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/x-ndjson")
	req.Header.Set("User-Agent", m.userAgent)
	resp, err := m.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, initialLineBuffer), maxLineBytes)
	var ld lineDecoder
	var r api.ChatResponse
	for sc.Scan() {
		line := sc.Bytes()
		if resp.StatusCode >= http.StatusBadRequest {
			return statusError(resp, line)
		}
		if err := ld.decode(line, &r); err != nil {
			return err
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	// Like the official client, a read error ends the stream quietly (the
	// missing final chunk tells); a line too long to buffer does not.
	if err := sc.Err(); errors.Is(err, errLineTooLong) {
		return err
	}
	return nil
}

// statusError is the official client's error for an HTTP error answer,
// made from its first line.
func statusError(resp *http.Response, line []byte) error {
	var e struct {
		Error     string `json:"error,omitempty"`
		SigninURL string `json:"signin_url,omitempty"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: string(line)}
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return api.AuthorizationError{StatusCode: resp.StatusCode, Status: resp.Status, SigninURL: e.SigninURL}
	}
	return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: e.Error}
}

// lineDecoder decodes the lines of one stream.
type lineDecoder struct {
	d     jsonscan.Decoder
	model string // the model name of the previous line, shared when it repeats
}

// decode decodes one line of a 200 answer into r, as the official client
// does: a line that is not a JSON object is an error whose text is the
// line, an {"error": …} line one whose text is the message.
func (ld *lineDecoder) decode(line []byte, r *api.ChatResponse) error {
	*r = api.ChatResponse{}
	if ld.fast(line, r) {
		return nil
	}
	*r = api.ChatResponse{}
	return decodeLineStd(line, r)
}

// decodeLineStd is the official client's decoding of a line.
func decodeLineStd(line []byte, r *api.ChatResponse) error {
	var e struct {
		Error     string `json:"error,omitempty"`
		SigninURL string `json:"signin_url,omitempty"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return errors.New(string(line))
	}
	if e.Error != "" {
		return errors.New(e.Error)
	}
	return json.Unmarshal(line, r)
}

// chatResponseKeys are the keys encoding/json reads into an
// api.ChatResponse or the official client's error check. A key that equals
// one only case-insensitively is left to encoding/json, which matches it.
var chatResponseKeys = []string{
	"model", "remote_model", "remote_host", "created_at", "message", "done", "done_reason",
	"_debug_info", "logprobs", "total_duration", "load_duration", "prompt_eval_count",
	"prompt_eval_duration", "eval_count", "eval_duration", "error", "signin_url",
}

// messageKeys are the keys of an api.Message.
var messageKeys = []string{"role", "content", "thinking", "images", "tool_calls", "tool_name", "tool_call_id"}

// fast decodes a line of the usual shape in one pass; it reports false for
// decodeLineStd to decode it (r is then partly filled).
func (ld *lineDecoder) fast(line []byte, r *api.ChatResponse) bool {
	d := &ld.d
	d.Reset(line)
	if !d.BeginObject() {
		return false
	}
	var seen uint16
	for {
		k, ok := d.Key()
		if !ok {
			break
		}
		bit := uint16(0)
		switch string(k) {
		case "model":
			bit, ok = 1<<0, ld.modelName(&r.Model)
		case "remote_model":
			bit, ok = 1<<1, ld.str(&r.RemoteModel)
		case "remote_host":
			bit, ok = 1<<2, ld.str(&r.RemoteHost)
		case "created_at":
			bit, ok = 1<<3, ld.time(&r.CreatedAt)
		case "message":
			bit, ok = 1<<4, ld.message(&r.Message)
		case "done":
			bit = 1 << 5
			r.Done, ok = d.Bool()
		case "done_reason":
			bit, ok = 1<<6, ld.str(&r.DoneReason)
		case "total_duration":
			bit, ok = 1<<7, ld.duration(&r.TotalDuration)
		case "load_duration":
			bit, ok = 1<<8, ld.duration(&r.LoadDuration)
		case "prompt_eval_count":
			bit, ok = 1<<9, ld.int(&r.PromptEvalCount)
		case "prompt_eval_duration":
			bit, ok = 1<<10, ld.duration(&r.PromptEvalDuration)
		case "eval_count":
			bit, ok = 1<<11, ld.int(&r.EvalCount)
		case "eval_duration":
			bit, ok = 1<<12, ld.duration(&r.EvalDuration)
		default:
			// _debug_info, logprobs, error, signin_url, and keys that
			// match one case-insensitively; others are ignored.
			ok = !jsonscan.FoldsToAny(k, chatResponseKeys) && d.Skip()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	return d.Err() == nil && d.Finish()
}

// message decodes a message of text or thinking; tool calls, images and
// the rest are left to encoding/json.
func (ld *lineDecoder) message(m *api.Message) bool {
	d := &ld.d
	if !d.BeginObject() {
		return false
	}
	var seen uint8
	for {
		k, ok := d.Key()
		if !ok {
			return d.Err() == nil
		}
		bit := uint8(0)
		switch string(k) {
		case "role":
			bit, ok = 1<<0, ld.role(&m.Role)
		case "content":
			bit, ok = 1<<1, ld.str(&m.Content)
		case "thinking":
			bit, ok = 1<<2, ld.str(&m.Thinking)
		default:
			ok = !jsonscan.FoldsToAny(k, messageKeys) && d.Skip()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// str reads a string (not null, which encoding/json reads differently for
// different fields).
func (ld *lineDecoder) str(dst *string) bool {
	s, ok := ld.d.Text()
	if ok && len(s) > 0 {
		*dst = string(s)
	}
	return ok
}

func (ld *lineDecoder) modelName(dst *string) bool {
	s, ok := ld.d.Text()
	if !ok {
		return false
	}
	if string(s) != ld.model {
		ld.model = string(s)
	}
	*dst = ld.model
	return true
}

// role reads a role lower-cased, as api.Message's UnmarshalJSON does.
func (ld *lineDecoder) role(dst *string) bool {
	s, ok := ld.d.Text()
	switch {
	case !ok:
	case string(s) == "assistant":
		*dst = "assistant"
	default:
		*dst = strings.ToLower(string(s))
	}
	return ok
}

// time reads a timestamp with time.Time's own UnmarshalJSON, as
// encoding/json does (which reads the string's bytes unescaped).
func (ld *lineDecoder) time(dst *time.Time) bool {
	if ld.d.Kind() != jsonscan.String {
		return false
	}
	raw, ok := ld.d.Raw()
	return ok && bytes.IndexByte(raw, '\\') < 0 && dst.UnmarshalJSON(raw) == nil
}

// int reads an integer number, as encoding/json reads it into an int.
func (ld *lineDecoder) int(dst *int) bool {
	if ld.d.Kind() != jsonscan.Number {
		return false
	}
	n, ok := ld.d.Number()
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(string(n), 10, strconv.IntSize)
	*dst = int(v)
	return err == nil
}

func (ld *lineDecoder) duration(dst *time.Duration) bool {
	if ld.d.Kind() != jsonscan.Number {
		return false
	}
	n, ok := ld.d.Number()
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	*dst = time.Duration(v)
	return err == nil
}
