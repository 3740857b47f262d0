package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/agentloop/agentloop"
)

// CheckModel is the check every provider's New makes first: a blank model
// name is an error that names Config.Model.
func CheckModel(provider, model string) error {
	if strings.TrimSpace(model) == "" {
		return fmt.Errorf("%s: Config.Model is required", provider)
	}
	return nil
}

// StreamHeader returns a copy of extra (nil is fine) with Accept set to
// text/event-stream, then each header of set set to its value; an empty
// value is left out, so that an unset API key sends no header.
func StreamHeader(extra http.Header, set map[string]string) http.Header {
	h := extra.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Accept", "text/event-stream")
	for k, v := range set {
		if v != "" {
			h.Set(k, v)
		}
	}
	return h
}

// Bearer is the Authorization value for key: "Bearer KEY", or "" for no
// key (then [StreamHeader] sends no Authorization header).
func Bearer(key string) string {
	if key == "" {
		return ""
	}
	return "Bearer " + key
}

// StreamChunks is the Stream of a provider's Model m: it builds the
// request body of req with build(m, req), POSTs it with [Endpoint.Stream]
// on e and hands the answer to decode, which yields the chunks. decode is
// called once per stream, so it must start afresh each time (a new
// decoder). A nil req, or a failure, is yielded once, last, as an error; a
// nil req sends nothing. (m and build are apart so that a method
// expression, such as (*Model).requestBody, costs no allocation.)
func StreamChunks[M any](ctx context.Context, e *Endpoint, m M, req *agentloop.Request, build func(M, *agentloop.Request) ([]byte, error),
	decode func(r io.Reader, yield func(agentloop.Chunk, error) bool) error) iter.Seq2[agentloop.Chunk, error] {
	return func(yield func(agentloop.Chunk, error) bool) {
		if req == nil {
			yield(nil, errors.New(e.provider+": nil request"))
			return
		}
		body, err := build(m, req)
		if err != nil {
			yield(nil, err)
			return
		}
		err = e.Stream(ctx, body, func(r io.Reader) error { return decode(r, yield) })
		if err != nil {
			yield(nil, err)
		}
	}
}

// NoFiles refuses a file in a message whose role the provider takes no
// files in (system, assistant, tool): the error is an *agentloop.FileError
// naming message i and the part, whose Reason is who (such as "Anthropic
// takes files") followed by " in user messages only, not in <role>
// messages". A message without files is nil.
func NoFiles(provider, who string, i int, msg agentloop.Message) error {
	for j, p := range msg.Parts {
		if p.Type == agentloop.PartFile && p.File != nil {
			return &agentloop.FileError{Provider: provider, Message: i, Part: j, MediaType: p.File.MediaType, Filename: p.File.Filename,
				Reason: fmt.Sprintf("%s in user messages only, not in %s messages", who, msg.Role)}
		}
	}
	return nil
}
