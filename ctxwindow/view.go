package ctxwindow

import (
	"slices"

	"github.com/agentloop/agentloop"
)

// A view is one request's messages as the strategies shape them. It never
// moves a message: each message of the history the hook got (orig) is sent
// as is, sent changed (msgs), or left out (gone); a few messages are inserted
// (a summary, notes where messages were left out). Token counts are kept
// per message, so every operation updates the total in constant time and a
// strategy costs one pass over the history.
//
// Messages are grouped in units that are kept or left out whole: an
// assistant message with the tool messages that answer its calls (results,
// approval decisions), merged with everything in between when an answer
// comes later; every other message on its own. A tool message never starts
// a unit, so what is sent never starts with a result.
type view struct {
	orig  agentloop.History
	msgs  []agentloop.Message // msgs[i] is what is sent for orig[i]
	gone  []bool              // orig[i] is not sent
	tok   []int               // the estimate of msgs[i]
	units []unit
	unit  []int32 // unit[i] is the index of orig[i]'s unit
	ins   []insert

	est   Estimator
	fixed int // system prompt and tools
	total int // fixed + every message sent + every insert
	limit int // the budget, in the estimator's (uncorrected) tokens

	firstUser  int // index of the first user message, -1 if none
	newestUser int // index of the newest user message, -1 if none
	headEnd    int // end of the pinned head: leading system messages and the first user message's unit

	changed int // counts changes, so the manager can tell which strategies acted

	// readable is true when the read tool is offered on this call, so that
	// markers may point to it; aside collects what the markers point to.
	readable bool
	aside    map[string]string
	run      *runState
	rep      *Report
}

// unit is a span of orig that is kept or left out whole.
type unit struct {
	start, end int // orig[start:end]
	pinned     bool
}

type insertKind uint8

const (
	insertSummary insertKind = iota + 1
	insertNote
)

// insert is a message sent before orig[at] (at == len(orig): at the end).
type insert struct {
	at   int
	kind insertKind
	msg  agentloop.Message
	tok  int
}

func newView(h agentloop.History, est Estimator, fixed, limit int) *view {
	n := len(h)
	v := &view{
		orig:       h,
		msgs:       slices.Clone([]agentloop.Message(h)),
		gone:       make([]bool, n),
		tok:        make([]int, n),
		unit:       make([]int32, n),
		est:        est,
		fixed:      fixed,
		total:      fixed,
		limit:      limit,
		firstUser:  -1,
		newestUser: -1,
	}
	for i, m := range h {
		t := est.Message(m)
		v.tok[i] = t
		v.total += t
		if m.Role == agentloop.RoleUser {
			if v.firstUser < 0 {
				v.firstUser = i
			}
			v.newestUser = i
		}
	}
	v.group()
	return v
}

// group computes the units and pins those that every request keeps: the
// leading system messages, the first and the newest user message, and the
// latest unit (the turn the model answers now).
func (v *view) group() {
	h := v.orig
	n := len(h)
	if n == 0 {
		return
	}
	// reach[i] is the last message that answers a call made in message i.
	// An answer usually follows the assistant message that made the call;
	// a map of every call is built only for histories where one does not.
	reach := make([]int, n)
	last := -1 // the latest assistant message
	var callAt map[string]int
	for i, m := range h {
		reach[i] = i
		if m.Role == agentloop.RoleAssistant {
			last = i
		}
		for _, p := range m.Parts {
			var id string
			switch {
			case p.Type == agentloop.PartToolResult && p.ToolResult != nil:
				id = p.ToolResult.CallID
			case (p.Type == agentloop.PartApprovalRequest || p.Type == agentloop.PartApprovalResponse) && p.Approval != nil:
				id = p.Approval.CallID
			default:
				continue
			}
			c := -1
			if last >= 0 && makesCall(h[last], id) {
				c = last
			} else {
				if callAt == nil {
					callAt = calls(h)
				}
				if at, ok := callAt[id]; ok && at <= i {
					c = at
				}
			}
			if c >= 0 && i > reach[c] {
				reach[c] = i
			}
		}
	}
	start, end := 0, reach[0]
	for i := 1; i < n; i++ {
		if i > end && h[i].Role != agentloop.RoleTool {
			v.units = append(v.units, unit{start: start, end: end + 1})
			start = i
		}
		end = max(end, reach[i])
	}
	v.units = append(v.units, unit{start: start, end: n})
	for u, s := range v.units {
		for i := s.start; i < s.end; i++ {
			v.unit[i] = int32(u)
		}
	}

	pin := func(i int) {
		if i >= 0 {
			v.units[v.unit[i]].pinned = true
		}
	}
	for i := 0; i < n && h[i].Role == agentloop.RoleSystem; i++ {
		pin(i)
		v.headEnd = v.units[v.unit[i]].end
	}
	if v.firstUser >= 0 {
		pin(v.firstUser)
		v.headEnd = max(v.headEnd, v.units[v.unit[v.firstUser]].end)
	}
	pin(v.newestUser)
	v.units[len(v.units)-1].pinned = true
}

// makesCall reports whether m makes the tool call id.
func makesCall(m agentloop.Message, id string) bool {
	for _, p := range m.Parts {
		if p.Type == agentloop.PartToolCall && p.ToolCall != nil && p.ToolCall.ID == id {
			return true
		}
	}
	return false
}

// calls returns the index of the message that makes each call of h.
func calls(h agentloop.History) map[string]int {
	at := make(map[string]int)
	for i, m := range h {
		for _, p := range m.Parts {
			if p.Type == agentloop.PartToolCall && p.ToolCall != nil {
				if _, ok := at[p.ToolCall.ID]; !ok {
					at[p.ToolCall.ID] = i
				}
			}
		}
	}
	return at
}

// fits reports whether the request fits the budget.
func (v *view) fits() bool { return v.total <= v.limit }

// set replaces what is sent for orig[i].
func (v *view) set(i int, m agentloop.Message) {
	t := v.est.Message(m)
	if !v.gone[i] {
		v.total += t - v.tok[i]
	}
	v.msgs[i], v.tok[i] = m, t
	v.changed++
}

// drop leaves orig[i] out.
func (v *view) drop(i int) {
	if v.gone[i] {
		return
	}
	v.gone[i] = true
	v.total -= v.tok[i]
	v.changed++
}

// unitTokens returns what the messages of unit u still sent cost.
func (v *view) unitTokens(u unit) int {
	t := 0
	for i := u.start; i < u.end; i++ {
		if !v.gone[i] {
			t += v.tok[i]
		}
	}
	return t
}

// unitGone reports whether every message of u is left out.
func (v *view) unitGone(u unit) bool {
	for i := u.start; i < u.end; i++ {
		if !v.gone[i] {
			return false
		}
	}
	return true
}

// unitStart reports whether orig[i] starts a unit.
func (v *view) unitStart(i int) bool {
	return i >= 0 && i < len(v.orig) && v.units[v.unit[i]].start == i
}

// nextPinned returns the start of the first pinned unit that starts at or
// after i, or len(orig).
func (v *view) nextPinned(i int) int {
	if i >= len(v.orig) {
		return len(v.orig)
	}
	for u := v.unit[i]; int(u) < len(v.units); u++ {
		if s := v.units[u]; s.pinned && s.start >= i {
			return s.start
		}
	}
	return len(v.orig)
}

// addInsert sends m before orig[at].
func (v *view) addInsert(at int, kind insertKind, m agentloop.Message) {
	t := v.est.Message(m)
	v.ins = append(v.ins, insert{at: at, kind: kind, msg: m, tok: t})
	v.total += t
	v.changed++
}

// removeInserts takes back the inserts of a kind.
func (v *view) removeInserts(kind insertKind) {
	v.ins = slices.DeleteFunc(v.ins, func(in insert) bool {
		if in.kind == kind {
			v.total -= in.tok
			v.changed++
			return true
		}
		return false
	})
}

// result returns the messages to send, oldest first.
func (v *view) result() agentloop.History {
	slices.SortStableFunc(v.ins, func(a, b insert) int { return a.at - b.at })
	out := make(agentloop.History, 0, len(v.orig)+len(v.ins))
	k := 0
	for i := range v.orig {
		for ; k < len(v.ins) && v.ins[k].at <= i; k++ {
			out = append(out, v.ins[k].msg)
		}
		if !v.gone[i] {
			out = append(out, v.msgs[i])
		}
	}
	for ; k < len(v.ins); k++ {
		out = append(out, v.ins[k].msg)
	}
	return out
}

// shortenResults sends every result of the tool message orig[i] that is
// sent with more than over bytes as a preview of keep bytes of its original
// content. It reports whether it shortened any. Only this method changes
// tool messages, and it keeps their parts in place, so msgs[i] and orig[i]
// have the same parts.
func (v *view) shortenResults(i, over, keep int) bool {
	m := v.msgs[i]
	var parts []agentloop.Part
	for j, p := range m.Parts {
		if p.Type != agentloop.PartToolResult || p.ToolResult == nil || len(p.ToolResult.Content) <= over {
			continue
		}
		full := v.orig[i].Parts[j].ToolResult.Content
		short, ok := preview(full, keep, p.ToolResult.CallID, v.readable)
		if !ok || len(short) >= len(p.ToolResult.Content) {
			continue
		}
		if parts == nil {
			parts = slices.Clone(m.Parts)
		}
		r := *p.ToolResult
		r.Content = short
		parts[j].ToolResult = &r
		if v.readable {
			if v.aside == nil {
				v.aside = make(map[string]string)
			}
			v.aside[r.CallID] = full
		}
	}
	if parts == nil {
		return false
	}
	m.Parts = parts
	v.set(i, m)
	return true
}
