package agentloop

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// assembler turns a model call's chunks into the parts of one assistant
// message, in the order produced, gives every tool call the loop's id, and
// yields the matching items.
type assembler struct {
	run     *run
	offered map[string]*Tool
	prefix  string                              // of the ids the loop makes up on this turn
	onText  func(context.Context, string) error // Hooks.OnTextDelta; nil if none

	parts     []Part
	text      []byte  // the open text block; from textBufs, once a block opens
	textBuf   *[]byte // the pooled buffer text lives in; nil until then
	reasoning strings.Builder
	open      PartType // PartText, PartReasoning or ""
	calls     int      // ToolCall chunks seen
	ids       map[int]string
	sawDeltas bool // tool-call deltas were seen
	usage     Usage
	finish    FinishReason
}

func (a *assembler) add(chunk Chunk) error {
	r := a.run
	h := r.hooks
	switch c := chunk.(type) {
	case TextDelta:
		if c.Text == "" {
			return nil
		}
		if a.open != PartText {
			if err := a.closeBlocks(); err != nil {
				return err
			}
			a.open = PartText
			if a.textBuf == nil {
				a.textBuf = textBufs.Get().(*[]byte)
				a.text = (*a.textBuf)[:0]
			}
		}
		a.text = append(a.text, c.Text...)
		if a.onText != nil {
			if err := a.onText(r.ctx, c.Text); err != nil {
				return r.hookCancel("OnTextDelta", err)
			}
		}
		return r.emit(chunk.(Item)) // no new allocation: the chunk is already boxed
	case ReasoningDelta:
		if c.Text == "" {
			return nil
		}
		if a.open != PartReasoning {
			if err := a.closeBlocks(); err != nil {
				return err
			}
			a.open = PartReasoning
		}
		a.reasoning.WriteString(c.Text)
		if h != nil && h.OnReasoningDelta != nil {
			if err := h.OnReasoningDelta(r.ctx, c.Text); err != nil {
				return r.hookCancel("OnReasoningDelta", err)
			}
		}
		return r.emit(chunk.(Item))
	case ReasoningEnd:
		if a.open == PartText {
			a.flushText()
		}
		a.parts = append(a.parts, Part{Type: PartReasoning, Text: a.reasoning.String(), Signature: c.Signature, Redacted: c.Redacted})
		a.reasoning.Reset()
		a.open = ""
		return r.emit(c)
	case ToolCallDelta:
		if a.open != "" {
			if err := a.closeBlocks(); err != nil {
				return err
			}
		}
		a.sawDeltas = true
		c.ID = a.callID(c.Index, c.ID)
		if h != nil && h.OnToolCallDelta != nil {
			if err := h.OnToolCallDelta(r.ctx, c); err != nil {
				return r.hookCancel("OnToolCallDelta", err)
			}
		}
		return r.emit(c)
	case ToolCall:
		if err := a.closeBlocks(); err != nil {
			return err
		}
		c.ID = a.callID(a.calls, c.ID)
		a.calls++
		a.parts = append(a.parts, Part{Type: PartToolCall, ToolCall: &c})
		return r.emit(a.ready(c))
	case Usage:
		a.usage = a.usage.Add(c)
		return nil
	case Finish:
		a.finish = c.Reason
		return nil
	}
	return fmt.Errorf("agentloop: model yielded an unknown chunk type %T", chunk)
}

// ready returns the ToolCallReady item of a complete call.
func (a *assembler) ready(c ToolCall) ToolCallReady {
	t := a.offered[c.Name]
	if t == nil {
		return ToolCallReady{Call: c, Err: unknownTool(c.Name, slices.Sorted(maps.Keys(a.offered)))}
	}
	it := ToolCallReady{Call: c, RunsOnClient: t.RunsOnClient(), NeedsApproval: t.NeedsApproval}
	if it.RunsOnClient {
		if _, err := t.checkArgs(c.Args); err != nil {
			it.Err = err
		}
	}
	return it
}

// callID returns the loop's id for the call at index: the one already
// chosen for it, else the server's id when it has one that the history does
// not use yet, else a fresh one. Fresh ids are deterministic: call_K_I,
// where K counts the assistant messages before this turn and I is the
// index, with a suffix if that is taken.
func (a *assembler) callID(index int, given string) string {
	if id, ok := a.ids[index]; ok {
		return id
	}
	used := a.run.ids
	id := given
	if id == "" || used[id] {
		base := a.prefix + strconv.Itoa(index)
		id = base
		for n := 2; used[id]; n++ {
			id = base + "_" + strconv.Itoa(n)
		}
	}
	used[id] = true
	if a.ids == nil {
		a.ids = make(map[int]string)
	}
	a.ids[index] = id
	return id
}

// flushAll ends open blocks without yielding anything (the turn failed).
func (a *assembler) flushAll() {
	switch a.open {
	case PartText:
		a.flushText()
	case PartReasoning:
		a.parts = append(a.parts, Part{Type: PartReasoning, Text: a.reasoning.String()})
		a.open = ""
	}
}

func (a *assembler) flushText() {
	a.parts = append(a.parts, Part{Type: PartText, Text: string(a.text)})
	a.text = a.text[:0]
	a.open = ""
}

// textBufs holds the buffers in which assemblers collect text blocks: a
// block's text is copied out once when it ends, instead of growing a new
// buffer (and copying it) several times as its deltas come.
var textBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledText is the largest text buffer returned to textBufs.
const maxPooledText = 64 << 10

// release returns the text buffer to textBufs; the assembler must not
// take text after it.
func (a *assembler) release() {
	if a.textBuf == nil {
		return
	}
	if cap(a.text) <= maxPooledText {
		*a.textBuf = a.text[:0]
		textBufs.Put(a.textBuf)
	}
	a.textBuf, a.text = nil, nil
}

// closeBlocks ends an open text or reasoning block, yielding a ReasoningEnd
// for a reasoning block the model did not close.
func (a *assembler) closeBlocks() error {
	switch a.open {
	case PartText:
		a.flushText()
	case PartReasoning:
		return a.add(ReasoningEnd{})
	}
	return nil
}
