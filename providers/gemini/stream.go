package gemini

import (
	"encoding/base64"
	"encoding/json"

	"google.golang.org/genai"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

// decoder turns one reply's responses into chunks; the zero value is ready.
type decoder struct {
	usage   *genai.GenerateContentResponseUsageMetadata // the last one: counts are totals so far
	finish  genai.FinishReason
	blocked bool // promptFeedback blocked the prompt
	calls   int
}

// response yields the chunks of one streamed response; false when yield
// said stop.
func (d *decoder) response(resp *genai.GenerateContentResponse, yield func(agentloop.Chunk, error) bool) bool {
	if resp.UsageMetadata != nil {
		d.usage = resp.UsageMetadata
	}
	if len(resp.Candidates) == 0 {
		if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
			d.blocked = true
		}
		return true
	}
	c := resp.Candidates[0]
	if c.Content != nil {
		for _, p := range c.Content.Parts {
			if p == nil || !d.part(p, yield) {
				return false
			}
		}
	}
	if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
		d.finish = c.FinishReason
	}
	return true
}

func (d *decoder) part(p *genai.Part, yield func(agentloop.Chunk, error) bool) bool {
	sig := agentloop.ReasoningEnd{Signature: base64.StdEncoding.EncodeToString(p.ThoughtSignature)}
	if p.Thought {
		if p.Text != "" && !yield(agentloop.ReasoningDelta{Text: p.Text}, nil) {
			return false
		}
		return len(p.ThoughtSignature) == 0 || yield(sig, nil)
	}
	if len(p.ThoughtSignature) > 0 && !yield(sig, nil) {
		return false
	}
	switch {
	case p.FunctionCall != nil:
		args := []byte("{}")
		if len(p.FunctionCall.Args) > 0 {
			b, err := json.Marshal(p.FunctionCall.Args)
			if err != nil {
				return yield(nil, err)
			}
			args = b
		}
		d.calls++
		return yield(agentloop.ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: args}, nil)
	case p.Text != "":
		return yield(agentloop.TextDelta{Text: p.Text}, nil)
	}
	return true
}

// end yields the usage and the finish reason, or the error of a stream that
// ended before its finish reason.
func (d *decoder) end(yield func(agentloop.Chunk, error) bool) {
	if d.finish == "" && !d.blocked {
		yield(nil, httpx.EndedEarly("gemini", "a finish reason"))
		return
	}
	if u := d.usage; u != nil {
		usage := agentloop.Usage{
			Input:     int(u.PromptTokenCount + u.ToolUsePromptTokenCount),
			Output:    int(u.CandidatesTokenCount + u.ThoughtsTokenCount),
			CacheRead: int(u.CachedContentTokenCount),
			Reasoning: int(u.ThoughtsTokenCount),
		}
		if !yield(usage, nil) {
			return
		}
	}
	yield(agentloop.Finish{Reason: d.reason()}, nil)
}

func (d *decoder) reason() agentloop.FinishReason {
	if d.blocked && d.finish == "" {
		return agentloop.FinishContentFilter
	}
	switch d.finish {
	case genai.FinishReasonStop:
		if d.calls > 0 {
			return agentloop.FinishToolCalls
		}
		return agentloop.FinishStop
	case genai.FinishReasonMaxTokens:
		if d.calls > 0 {
			return agentloop.FinishToolCalls // calls arrive whole
		}
		return agentloop.FinishLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return agentloop.FinishContentFilter
	}
	return agentloop.FinishOther
}
