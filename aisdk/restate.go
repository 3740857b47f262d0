package aisdk

import (
	"encoding/json"
	"strconv"
)

// restateParts returns chunks that rebuild the given parts of an assistant
// message, in order, for the stream log of a response that continues the
// message. A client resuming a stream (useChat's resumeStream) starts the
// message afresh at the log's start chunk, so the log restates what the
// message held before this response, right after that chunk; the response
// itself does not (its client has the message).
//
// A tool part is restated with tool-input-start and tool-input-delta
// rather than tool-input-available, which would make the client run a
// client tool again, and then with the chunks of its state: the approval
// request and response, the output, error or denial.
func restateParts(parts []UIPart) []Chunk {
	var out []Chunk
	stepOpen := false
	n := 0
	newID := func(prefix string) string { // numbered as a Mapper numbers them
		n++
		return prefix + strconv.Itoa(n)
	}
	for _, p := range parts {
		switch {
		case p.Type == "step-start":
			if stepOpen {
				out = append(out, FinishStepChunk{})
			}
			out = append(out, StartStepChunk{})
			stepOpen = true
		case p.Type == "text":
			id := newID("text-")
			out = append(out, TextStartChunk{ID: id})
			if p.Text != "" {
				out = append(out, TextDeltaChunk{ID: id, Delta: p.Text})
			}
			out = append(out, TextEndChunk{ID: id, ProviderMetadata: metadataOf(p.ProviderMetadata)})
		case p.Type == "reasoning":
			id := newID("reasoning-")
			out = append(out, ReasoningStartChunk{ID: id})
			if p.Text != "" {
				out = append(out, ReasoningDeltaChunk{ID: id, Delta: p.Text})
			}
			out = append(out, ReasoningEndChunk{ID: id, ProviderMetadata: metadataOf(p.ProviderMetadata)})
		case p.Type == "file":
			out = append(out, FileChunk{URL: p.URL, MediaType: p.MediaType})
		case p.IsTool():
			out = append(out, restateTool(p)...)
		}
	}
	if stepOpen {
		out = append(out, FinishStepChunk{})
	}
	return out
}

func restateTool(p UIPart) []Chunk {
	out := []Chunk{ToolInputStartChunk{ToolCallID: p.ToolCallID, ToolName: p.ToolNameOf()}}
	if len(p.Input) > 0 {
		out = append(out, ToolInputDeltaChunk{ToolCallID: p.ToolCallID, InputTextDelta: string(p.Input)})
	}
	if a := p.Approval; a != nil && p.State != StateInputAvailable && p.State != StateInputStreaming {
		out = append(out, ToolApprovalRequestChunk{ApprovalID: a.ID, ToolCallID: p.ToolCallID})
		if a.Approved != nil {
			out = append(out, ToolApprovalResponseChunk{ApprovalID: a.ID, Approved: *a.Approved, Reason: a.Reason})
		}
	}
	switch p.State {
	case StateOutputAvailable:
		out = append(out, ToolOutputAvailableChunk{ToolCallID: p.ToolCallID, Output: p.Output})
	case StateOutputError:
		out = append(out, ToolOutputErrorChunk{ToolCallID: p.ToolCallID, ErrorText: p.ErrorText})
	case StateOutputDenied:
		out = append(out, ToolOutputDeniedChunk{ToolCallID: p.ToolCallID})
	}
	return out
}

// metadataOf decodes a part's providerMetadata for a chunk; nil when it
// has none or it does not decode.
func metadataOf(raw json.RawMessage) ProviderMetadata {
	if len(raw) == 0 {
		return nil
	}
	var md ProviderMetadata
	if json.Unmarshal(raw, &md) != nil {
		return nil
	}
	return md
}
