package aisdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop"
)

// This file carries a paused sub-agent ([agentloop.AgentTool] whose run
// waits for a client tool or an approval) through the client:
//
//   - its pending calls (ids "<callID>/<id>", [agentloop.Pending]) are
//     handed over like any other, in a step of their own at the end of the
//     response, so that the client's automatic re-send looks only at them
//     (the parent call, still running, is in the step before);
//   - in the stateless mode its state (the [agentloop.PartSubRun] part of
//     the history) travels as a signed "data-subrun" part
//     ([SubrunState]), which [ToHistory] turns back into that part;
//   - the answers the client writes to those calls (a decision, a client
//     tool's output) become [agentloop.History.AppendApprovals] and
//     [agentloop.History.AppendResults] on the parent's history, which
//     give the sub-run its new state.

// DataSubrun is the name of the data parts ("data-subrun") that carry a
// paused sub-run's state in the stateless mode; their data is a
// [SubrunState].
const DataSubrun = "subrun"

// SubrunState is the data of a "data-subrun" part: the state of the
// paused sub-run of call CallID ([agentloop.SubRun]), its history as its
// versioned JSON in a string (a string comes back from a browser
// unchanged), and the server's signature over the message id, CallID,
// Agent and History.
type SubrunState struct {
	CallID    string `json:"callId"`
	Agent     string `json:"agent,omitempty"`
	History   string `json:"history"`
	Signature string `json:"sig"`
}

const sigSubrun = "subrun"

func (s *signer) subrun(msgID string, st *SubrunState) string {
	return s.sum(sigSubrun, msgID, st.CallID, st.Agent, st.History)
}

// splitPending splits the calls a Pending waits for into the run's own
// client calls and its paused sub-runs' client calls and calls awaiting
// approval (ids "<callID>/<id>").
func splitPending(p agentloop.Pending) (own, client, approve []agentloop.ToolCall) {
	for _, c := range p.ClientCalls {
		if _, _, ok := nestedState(p.History, c.ID); ok {
			client = append(client, c)
		} else {
			own = append(own, c)
		}
	}
	for _, c := range p.Approvals {
		if _, _, ok := nestedState(p.History, c.ID); ok {
			approve = append(approve, c)
		}
	}
	return own, client, approve
}

// subrunStep appends the chunks of paused sub-runs: in the stateless mode
// the signed state of each, then a new step with their calls (those
// awaiting approval with their approval request, client calls handed
// over).
func (m *Mapper) subrunStep(dst []Chunk, h agentloop.History, client, approve []agentloop.ToolCall) []Chunk {
	if len(client) == 0 && len(approve) == 0 {
		return dst
	}
	if m.sign != nil {
		for _, sr := range pausedSubruns(h) {
			b, err := json.Marshal(sr.History)
			if err != nil {
				continue // a history the loop made always encodes
			}
			st := SubrunState{CallID: sr.CallID, Agent: sr.Agent, History: string(b)}
			st.Signature = m.sign.subrun(m.messageID, &st)
			data, _ := json.Marshal(&st)
			dst = append(dst, DataChunk{Name: DataSubrun, ID: sr.CallID, Data: data})
		}
	}
	dst = m.closeStep(dst)
	m.stepOpen = true
	dst = append(dst, StartStepChunk{})
	for _, c := range approve {
		if m.handedOver[c.ID] {
			continue
		}
		dst = m.handOver(dst, c, false)
		a := ToolApprovalRequestChunk{ApprovalID: approvalID(c.ID), ToolCallID: c.ID}
		if m.sign != nil {
			a.Signature = m.sign.approval(m.messageID, a.ToolCallID, a.ApprovalID)
		}
		dst = append(dst, a)
	}
	for _, c := range client {
		if !m.handedOver[c.ID] {
			dst = m.handOver(dst, c, true)
		}
	}
	return dst
}

// approvalID is the id of the approval request of the call id: the loop's
// ("approval_<id>"; for a sub-run's call "approval_<callID>/<id>", which
// [agentloop.History.AppendApprovals] maps to the sub-run's own).
func approvalID(id string) string { return "approval_" + id }

// pausedSubruns returns the latest state of each paused sub-run of h's
// unanswered calls, in call order.
func pausedSubruns(h agentloop.History) []*agentloop.SubRun {
	var out []*agentloop.SubRun
	for _, c := range h.Unanswered() {
		if sr := latestSubrun(h, c.ID); sr != nil {
			out = append(out, sr)
		}
	}
	return out
}

// latestSubrun returns the state of the sub-run of call callID that follows
// the last assistant message of h, or nil.
func latestSubrun(h agentloop.History, callID string) *agentloop.SubRun {
	i := lastAssistant(h)
	if i < 0 {
		return nil
	}
	var out *agentloop.SubRun
	for _, m := range h[i+1:] {
		for _, p := range m.Parts {
			if p.Type == agentloop.PartSubRun && p.SubRun != nil && p.SubRun.CallID == callID {
				out = p.SubRun
			}
		}
	}
	return out
}

// nestedState splits the id of a paused sub-run's call, "<callID>/<rest>",
// where callID is an unanswered call of h with a sub-run state: it returns
// that state and rest.
func nestedState(h agentloop.History, id string) (*agentloop.SubRun, string, bool) {
	if !strings.Contains(id, "/") {
		return nil, "", false
	}
	for _, c := range h.Unanswered() {
		if rest, ok := strings.CutPrefix(id, c.ID+"/"); ok && rest != "" {
			if sr := latestSubrun(h, c.ID); sr != nil {
				return sr, rest, true
			}
		}
	}
	return nil, "", false
}

// nestedWaits reports whether id names a call that a paused sub-run of h
// (at any depth) still waits for.
func nestedWaits(h agentloop.History, id string) bool {
	sr, rest, ok := nestedState(h, id)
	if !ok {
		return false
	}
	if _, _, deeper := nestedState(sr.History, rest); deeper {
		return nestedWaits(sr.History, rest)
	}
	for _, c := range sr.History.Unanswered() {
		if c.ID == rest {
			return true
		}
	}
	return false
}

// askedApproval reports whether the call id of h (a sub-run's, at any
// depth) asked for approval, decided or not: only the server answers it.
func askedApproval(h agentloop.History, id string) bool {
	if sr, rest, ok := nestedState(h, id); ok {
		return askedApproval(sr.History, rest)
	}
	_, asked := decisionOf(h, id)
	return asked
}

// awaitsApproval reports whether the call id of h (a sub-run's, at any
// depth) waits for an approval decision.
func awaitsApproval(h agentloop.History, id string) bool {
	if sr, rest, ok := nestedState(h, id); ok {
		return awaitsApproval(sr.History, rest)
	}
	d, asked := decisionOf(h, id)
	return asked && d == nil
}

// nestedAnswers are the answers a client wrote to paused sub-runs' calls.
type nestedAnswers struct {
	states    []SubrunState // posted sub-run states (the stateless mode)
	approvals []agentloop.Approval
	results   []agentloop.ToolResult
}

// collect takes the sub-run parts of an assistant message: its
// "data-subrun" states and its tool parts for calls "<callID>/<id>" of the
// message's own calls. It reports which parts it took.
func (a *nestedAnswers) collect(m UIMessage) (taken []bool, err error) {
	var calls map[string]bool
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type == "data-"+DataSubrun {
			if taken == nil {
				taken = make([]bool, len(m.Parts))
			}
			taken[i] = true
			var st SubrunState
			if err := json.Unmarshal(p.Data, &st); err != nil {
				return nil, fmt.Errorf("a %s part: %w", p.Type, err)
			}
			a.states = append(a.states, st)
			continue
		}
		if !p.IsTool() || !strings.Contains(p.ToolCallID, "/") {
			continue
		}
		if calls == nil {
			calls = make(map[string]bool)
			for _, q := range m.Parts {
				if q.IsTool() {
					calls[q.ToolCallID] = true
				}
			}
		}
		if !isNestedID(calls, p.ToolCallID) {
			continue
		}
		if taken == nil {
			taken = make([]bool, len(m.Parts))
		}
		taken[i] = true
		id, name := p.ToolCallID, p.ToolNameOf()
		switch p.State {
		case StateApprovalResponded:
			if p.Approval != nil && p.Approval.ID != "" && p.Approval.Approved != nil {
				a.approvals = append(a.approvals, agentloop.Approval{CallID: id, ID: p.Approval.ID, Approved: *p.Approval.Approved, Reason: p.Approval.Reason})
			}
		case StateOutputAvailable:
			if !isTrue(p.Preliminary) {
				a.results = append(a.results, agentloop.ToolResult{CallID: id, Name: name, Content: outputContent(p.Output)})
			}
		case StateOutputError:
			a.results = append(a.results, agentloop.ToolResult{CallID: id, Name: name, Content: p.ErrorText, IsError: true})
		}
	}
	return taken, nil
}

// isNestedID reports whether id is "<callID>/<rest>" for a callID in calls.
func isNestedID(calls map[string]bool, id string) bool {
	for k := 0; ; k++ {
		n := strings.IndexByte(id[k:], '/')
		if n < 0 {
			return false
		}
		k += n
		if calls[id[:k]] {
			return true
		}
	}
}

// applyStates adds the posted sub-run states of h's unanswered calls to h,
// as a tool message of [agentloop.PartSubRun] parts.
func (a *nestedAnswers) applyStates(h agentloop.History) (agentloop.History, error) {
	if len(a.states) == 0 {
		return h, nil
	}
	open := make(map[string]bool)
	for _, c := range h.Unanswered() {
		open[c.ID] = true
	}
	var parts []agentloop.Part
	for _, st := range a.states {
		if !open[st.CallID] {
			continue // the call has its result: the state is history
		}
		var sub agentloop.History
		if err := json.Unmarshal([]byte(st.History), &sub); err != nil {
			return nil, fmt.Errorf("the state of the sub-run of call %q: %w", st.CallID, err)
		}
		parts = append(parts, agentloop.Part{Type: agentloop.PartSubRun, SubRun: &agentloop.SubRun{CallID: st.CallID, Agent: st.Agent, History: sub}})
	}
	if len(parts) == 0 {
		return h, nil
	}
	return append(h, agentloop.Message{Role: agentloop.RoleTool, Parts: parts}), nil
}

// apply appends the answers for the calls that h's paused sub-runs wait
// for; other answers (to calls answered or decided already, a request
// posted again, or of a sub-run that is not paused in h: its call has its
// result) are left out. A result for a call
// that awaits approval is refused unless it is an error (a declined
// call): only the server runs such a call.
func (a *nestedAnswers) apply(h agentloop.History) (agentloop.History, error) {
	var approvals []agentloop.Approval
	var results []agentloop.ToolResult
	for _, d := range a.approvals {
		if nestedWaits(h, d.CallID) && awaitsApproval(h, d.CallID) {
			approvals = append(approvals, d)
		}
	}
	for _, r := range a.results {
		if !nestedWaits(h, r.CallID) {
			continue // answered already (a request posted again), or not a paused sub-run's
		}
		if !r.IsError && askedApproval(h, r.CallID) {
			return nil, fmt.Errorf("a result for tool call %q, which needs approval: only the server runs it", r.CallID)
		}
		results = append(results, r)
	}
	var err error
	if len(approvals) > 0 {
		if h, err = h.AppendApprovals(approvals...); err != nil {
			return nil, err
		}
	}
	if len(results) > 0 {
		if h, err = h.AppendResults(results...); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// errSubrunState is the refusal of a posted sub-run state without the
// server's signature.
var errSubrunState = errors.New("the state of a paused sub-agent " + errNotSigned)

// appendSubrunParts appends the parts of the paused sub-runs of h's
// unanswered calls: a data-subagent view of each (and of the sub-runs
// paused within it), then a step with the calls they wait for.
func appendSubrunParts(parts []UIPart, h agentloop.History) []UIPart {
	var calls []UIPart
	var walk func(h agentloop.History, path []string)
	walk = func(h agentloop.History, path []string) {
		for _, sr := range pausedSubruns(h) {
			p := append(path[:len(path):len(path)], sr.CallID)
			s := &subagent{open: -1, calls: make(map[string]int), view: SubagentView{
				CallID: p[0], Path: p, Agent: sr.Agent, Depth: len(p), State: "paused", Parts: []SubagentPart{},
			}}
			s.seed(sr.History)
			if data, err := json.Marshal(&s.view); err == nil {
				parts = append(parts, UIPart{Type: "data-" + DataSubagent, ID: strings.Join(p, "/"), Data: data})
			}
			prefix := strings.Join(p, "/") + "/"
			for _, c := range sr.History.Unanswered() {
				if latestSubrun(sr.History, c.ID) != nil {
					continue // a sub-run of its own, walked below
				}
				id := prefix + c.ID
				part := UIPart{Type: "tool-" + c.Name, ToolCallID: id, Input: inputJSON(c.Args), State: StateInputAvailable}
				if d, asked := decisionOf(sr.History, c.ID); asked {
					part.State, part.Approval = StateApprovalRequested, &UIApproval{ID: approvalID(id)}
					if d != nil {
						approved := d.Approved
						part.State, part.Approval.Approved, part.Approval.Reason = StateApprovalResponded, &approved, d.Reason
					}
				}
				calls = append(calls, part)
			}
			walk(sr.History, p)
		}
	}
	walk(h, nil)
	if len(calls) == 0 {
		return parts
	}
	parts = append(parts, UIPart{Type: "step-start"})
	return append(parts, calls...)
}

// decisionOf reports whether the call id of h's last assistant message
// asked for approval, and the decision made, if any.
func decisionOf(h agentloop.History, id string) (*agentloop.Approval, bool) {
	i := lastAssistant(h)
	if i < 0 {
		return nil, false
	}
	asked := false
	for _, p := range h[i].Parts {
		if p.Type == agentloop.PartApprovalRequest && p.Approval != nil && p.Approval.CallID == id {
			asked = true
		}
	}
	var d *agentloop.Approval
	for _, m := range h[i+1:] {
		for _, p := range m.Parts {
			if p.Type == agentloop.PartApprovalResponse && p.Approval != nil && p.Approval.CallID == id {
				d = p.Approval
			}
		}
	}
	return d, asked
}
