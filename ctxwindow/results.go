package ctxwindow

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/agentloop/agentloop"
)

// ReadResultToolName is the name of the tool that [Manager.ReadResultTool]
// returns.
const ReadResultToolName = "read_tool_result"

// Defaults of [LargeResults] and of the read tool.
const (
	DefaultLargeResultLimit = 16 << 10
	DefaultPreview          = 2 << 10
	DefaultReadPage         = 8 << 10
)

// minSaving is how many bytes a preview must save to be worth its marker.
const minSaving = 256

// LargeResults keeps large tool results out of every request: a result
// longer than Limit bytes is sent as a preview, its first two thirds of
// Preview bytes and its last third, with a marker in between that says how
// much was left out. Unlike [ShortenResults], it applies to every model
// call, to the newest results too, whether or not the request fits: a
// tool that returns a megabyte never floods the model's context. The stored
// history keeps every result whole, and, when the tool of
// [Manager.ReadResultTool] is offered, the marker tells the model how to
// read the rest with it.
type LargeResults struct {
	// Limit is the longest result, in bytes, sent whole; 0 means
	// DefaultLargeResultLimit.
	Limit int
	// Preview is how many bytes of a longer result are sent; 0 means
	// DefaultPreview. It must be less than Limit.
	Preview int
}

func (l *LargeResults) limit() int {
	if l.Limit > 0 {
		return l.Limit
	}
	return DefaultLargeResultLimit
}

func (l *LargeResults) preview() int {
	if l.Preview > 0 {
		return l.Preview
	}
	return DefaultPreview
}

func (l *LargeResults) check() error {
	switch {
	case l.Limit < 0 || l.Preview < 0:
		return fmt.Errorf("ctxwindow: LargeResults.Limit (%d) and Preview (%d) must not be negative", l.Limit, l.Preview)
	case l.preview() >= l.limit():
		return fmt.Errorf("ctxwindow: LargeResults.Preview (%d) must be less than Limit (%d)", l.preview(), l.limit())
	}
	return nil
}

// apply sends the large results of every tool message as previews and
// returns how many messages it changed.
func (l *LargeResults) apply(v *view) int {
	n := 0
	limit, keep := l.limit(), l.preview()
	for i, m := range v.orig {
		if m.Role == agentloop.RoleTool && v.shortenResults(i, limit, keep) {
			n++
		}
	}
	return n
}

// preview returns content cut to about keep bytes, its first two thirds and
// its last third with a marker in between, or false when that would not
// save enough to be worth it. Cuts fall on UTF-8 character boundaries. When
// readable, the marker names the read tool and the offset to read from.
func preview(content string, keep int, callID string, readable bool) (string, bool) {
	keep = max(keep, 0)
	if len(content) <= keep+minSaving {
		return content, false
	}
	head := runeStartBefore(content, keep*2/3)
	tail := runeStartAfter(content, len(content)-(keep-head))
	marker := fmt.Sprintf("\n[… %d bytes left out here to save context: bytes %d to %d of %d", tail-head, head, tail, len(content))
	if readable {
		marker += fmt.Sprintf(". To read them, call %s with {\"callId\":%s,\"offset\":%d}", ReadResultToolName, strconv.Quote(callID), head)
	}
	return content[:head] + marker + " …]\n" + content[tail:], true
}

// runeStartBefore returns the largest character boundary of s at or before i.
func runeStartBefore(s string, i int) int {
	i = min(max(i, 0), len(s))
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// runeStartAfter returns the smallest character boundary of s at or after i.
func runeStartAfter(s string, i int) int {
	i = min(max(i, 0), len(s))
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// readArgs are the arguments of the read tool.
type readArgs struct {
	CallID string `json:"callId" jsonschema:"description=The id of the tool call whose result to read, as the marker in the shortened result gives it"`
	Offset int    `json:"offset,omitempty" jsonschema:"minimum=0,description=The byte offset to read from, as the marker gives it; 0 reads from the start"`
}

// newReadTool returns the read tool, which reads pages of at most page bytes.
func (m *Manager) newReadTool(page int) (*agentloop.Tool, error) {
	return agentloop.NewTool(ReadResultToolName,
		"Read part of a tool result that was shortened to save context. A shortened result says which bytes were left out and how to call this tool to read them.",
		func(ctx context.Context, in readArgs) (string, error) {
			st, _ := ctx.Value(stateKey{m}).(*runState)
			if st == nil {
				return "", errors.New("this tool works only in runs that use its ctxwindow.Manager's hooks")
			}
			var full string
			ok := false
			if aside := st.aside.Load(); aside != nil {
				full, ok = (*aside)[in.CallID]
			}
			if !ok {
				return "", fmt.Errorf("no shortened tool result has the call id %q; use the callId that a shortened result names", in.CallID)
			}
			return readPage(full, in.Offset, page)
		})
}

// readPage returns at most page bytes of full from offset on, with a note
// saying where the next page starts when there is more.
func readPage(full string, offset, page int) (string, error) {
	if offset < 0 || offset >= len(full) {
		return "", fmt.Errorf("offset %d is outside the result, which has %d bytes", offset, len(full))
	}
	from := runeStartBefore(full, offset)
	to := runeStartBefore(full, from+page)
	if to <= from { // a page smaller than one character
		to = runeStartAfter(full, from+1)
	}
	if to >= len(full) {
		return full[from:], nil
	}
	return fmt.Sprintf("%s\n[bytes %d to %d of %d; call %s with offset %d for more]", full[from:to], from, to, len(full), ReadResultToolName, to), nil
}
