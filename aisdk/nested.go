package aisdk

import (
	"encoding/json"
	"strings"

	"github.com/agentloop/agentloop"
)

// This file maps a sub-agent's work ([*agentloop.Nested] items of an
// [agentloop.AgentTool] call) to the client, and names the agent that
// speaks ([agentloop.TurnStart.Agent] of a run with handoffs).
//
// Each sub-run is one data part, "data-subagent", whose id is the sub-run's
// call path ("<callID>" for a sub-agent the model called, "<callID>/<id>"
// for that sub-agent's own sub-agent, ...) and whose data is what the
// sub-run did so far (SubagentView). A new chunk with the same id replaces
// the part's data in the client (ui-message-stream.md §2.1, data-*), so the
// page re-renders the sub-run as it goes; the part stays in the message
// after the call ends (a preliminary tool output would be replaced by the
// call's result), it is not a tool part (so it never holds up the client's
// automatic re-send), and convertToModelMessages and [ToHistory] ignore it.

// DataSubagent is the name of the data parts ("data-subagent") that show a
// sub-agent's run while it happens; their data is a [SubagentView].
const DataSubagent = "subagent"

// SubagentView is the data of a "data-subagent" part: one sub-run of an
// [agentloop.AgentTool] call, as far as it went.
type SubagentView struct {
	// CallID is the id of the call of the answering assistant message
	// under which the sub-run's work belongs (Path[0]).
	CallID string `json:"callId"`
	// Path is the call ids from CallID down to the call that started this
	// sub-run; its length is Depth. The part's id is Path joined with "/".
	Path []string `json:"path"`
	// Agent names the sub-agent.
	Agent string `json:"agent"`
	// Depth is 1 for a sub-agent the model called, 2 for its sub-agents...
	Depth int `json:"depth"`
	// State is "running", "done" (it answered), "paused" (it waits for a
	// client tool or an approval) or "failed".
	State string `json:"state"`
	// Parts are the sub-run's text, reasoning and tool calls, in order.
	Parts []SubagentPart `json:"parts"`
}

// SubagentPart is one part of a [SubagentView]: Type "text" or "reasoning"
// with Text, or "tool" with the call's id, name, input, and State as a tool
// part's (input-available, approval-requested, output-available,
// output-error, output-denied), Output or ErrorText, and Preliminary for a
// tool's progress.
type SubagentPart struct {
	Type        string          `json:"type"`
	Text        string          `json:"text,omitempty"`
	ToolCallID  string          `json:"toolCallId,omitempty"`
	ToolName    string          `json:"toolName,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`
	State       PartState       `json:"state,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
	Preliminary bool            `json:"preliminary,omitempty"`
	ErrorText   string          `json:"errorText,omitempty"`
}

// subagent is a sub-run's view and what the Mapper needs to update it.
type subagent struct {
	id    string
	view  SubagentView
	open  int             // index of the text or reasoning part deltas go to; -1 when none
	text  strings.Builder // the open part's text (its Text is set when sent)
	held  bool            // changed since its last chunk (deltas wait for the next flush)
	calls map[string]int
	// echo holds the calls of a resumed sub-run that were decided in the
	// client (a part "<id>/<call>" there): their results go to that part
	// too, so that it does not stay "approved, running".
	echo map[string]bool
	// started: a TurnStart of the sub-run came (a first turn starting
	// again means the sub-run started over).
	started bool
}

// nestedItem updates the view of the sub-run that produced n. A delta
// only marks the view changed: its chunk goes out with the next other item
// or at [Mapper.Flush], so a streamed answer costs one chunk per flush,
// not one per delta (each chunk holds the whole view).
func (m *Mapper) nestedItem(dst []Chunk, n *agentloop.Nested) []Chunk {
	dst = m.closeBlocks(dst)
	s := m.subagentFor(n)
	v := &s.view
	var echo *agentloop.ToolResultReady // a result for the client's part of the call, too
	switch it := n.Item.(type) {
	case agentloop.TextDelta:
		if it.Text != "" {
			s.delta("text", it.Text)
			return m.hold(dst, s)
		}
		return dst
	case agentloop.ReasoningDelta:
		if it.Text != "" {
			s.delta("reasoning", it.Text)
			return m.hold(dst, s)
		}
		return dst
	case agentloop.TurnStart:
		if !s.started || it.Turn != 1 {
			s.started = true
			s.closeOpen()
			return dst
		}
		// The sub-run's first turn starts again: an engine runs it again
		// (temporalrun retries its call's activity), so its view starts
		// over; the chunk replaces the part in the client.
		m.restart(s)
	case agentloop.ReasoningEnd:
		s.closeOpen()
		return dst
	case agentloop.ToolCallReady:
		s.closeOpen()
		p := SubagentPart{Type: "tool", ToolCallID: it.Call.ID, ToolName: it.Call.Name, Input: inputJSON(it.Call.Args), State: StateInputAvailable}
		if it.Err != nil {
			p.State, p.ErrorText = StateOutputError, it.Err.Error()
		}
		s.calls[it.Call.ID] = len(v.Parts)
		v.Parts = append(v.Parts, p)
	case agentloop.TurnEnd:
		s.closeOpen()
		changed := false
		for _, p := range it.Message.Parts {
			if p.Type == agentloop.PartApprovalRequest && p.Approval != nil {
				if i, ok := s.calls[p.Approval.CallID]; ok {
					v.Parts[i].State = StateApprovalRequested
					changed = true
				}
			}
		}
		if !changed {
			return dst
		}
	case agentloop.ToolProgress:
		i, ok := s.calls[it.CallID]
		if !ok {
			return dst
		}
		v.Parts[i].State, v.Parts[i].Output, v.Parts[i].Preliminary = StateOutputAvailable, outputJSON(it.Content), true
	case agentloop.ToolResultReady:
		i, ok := s.calls[it.Result.CallID]
		if !ok {
			return dst
		}
		if s.echo[it.Result.CallID] {
			delete(s.echo, it.Result.CallID)
			r := it
			r.Result.CallID = s.id + "/" + it.Result.CallID
			echo = &r
		}
		p := &v.Parts[i]
		p.Preliminary, p.Output, p.ErrorText = false, nil, ""
		switch {
		case it.Denied:
			p.State = StateOutputDenied
		case it.Result.IsError:
			p.State, p.ErrorText = StateOutputError, it.Result.Content
		default:
			p.State, p.Output = StateOutputAvailable, outputJSON(it.Result.Content)
		}
	case agentloop.Final:
		s.closeOpen()
		v.State = "done"
	case agentloop.Pending:
		s.closeOpen()
		v.State = "paused"
	default:
		return dst
	}
	s.held = false // its chunk follows the others held
	dst = m.Flush(dst)
	dst = m.subagentChunk(dst, s)
	if echo != nil {
		dst = m.result(dst, *echo)
	}
	return dst
}

// subagentFor returns the view of the sub-run that produced n, making it
// on its first item.
func (m *Mapper) subagentFor(n *agentloop.Nested) *subagent {
	if n.SubAgent == m.lastTags { // a run's items share their tags
		return m.lastSub
	}
	s := m.subagentByID(n)
	m.lastTags, m.lastSub = n.SubAgent, s
	return s
}

// subagentByID returns the view of the sub-run that produced n, by its part id.
func (m *Mapper) subagentByID(n *agentloop.Nested) *subagent {
	id := n.CallID
	if len(n.Path) > 1 {
		id = strings.Join(n.Path, "/")
	}
	if s, ok := m.subagents[id]; ok {
		return s
	}
	if m.subagents == nil {
		m.subagents = make(map[string]*subagent)
	}
	path := n.Path
	if len(path) == 0 {
		path = []string{n.CallID}
	}
	s := &subagent{id: id, open: -1, calls: make(map[string]int), view: SubagentView{
		CallID: n.CallID, Path: path, Agent: n.Agent, Depth: n.Depth, State: "running", Parts: []SubagentPart{},
	}}
	m.seedSubagent(s)
	m.subagents[id] = s
	m.subagentOrder = append(m.subagentOrder, s)
	return s
}

// seedSubagent starts the view of a paused sub-run that resumes from its
// state in the history, if it is one.
func (m *Mapper) seedSubagent(s *subagent) {
	sr := subrunAt(m.history, s.view.Path)
	if sr == nil {
		return
	}
	s.seed(sr.History) // a paused sub-run that resumes: its view goes on from its state
	for id := range s.echo {
		c := sr.History.Unanswered()
		for _, call := range c {
			if call.ID == id {
				call.ID = s.id + "/" + id
				m.calls[call.ID] = call // its result is signed like any other
			}
		}
	}
}

// restart empties the view of a sub-run that starts over (what it showed
// was an attempt that an engine runs again), down to its state in the
// history if it resumed from one.
func (m *Mapper) restart(s *subagent) {
	s.closeOpen()
	s.view.State, s.view.Parts = "running", []SubagentPart{}
	clear(s.calls)
	s.echo = nil
	m.seedSubagent(s)
}

// delta adds text to the open part of its type, or opens one. The text
// grows in a Builder (a string += per delta would copy it all each time).
func (s *subagent) delta(typ, text string) {
	if s.open < 0 || s.view.Parts[s.open].Type != typ {
		s.closeOpen()
		s.open = len(s.view.Parts)
		s.view.Parts = append(s.view.Parts, SubagentPart{Type: typ})
	}
	s.text.WriteString(text)
}

// syncOpen sets the open part's Text from its Builder.
func (s *subagent) syncOpen() {
	if s.open >= 0 {
		s.view.Parts[s.open].Text = s.text.String()
	}
}

// closeOpen ends the open part, if any: later deltas start a new one.
func (s *subagent) closeOpen() {
	s.syncOpen()
	s.open = -1
	s.text = strings.Builder{} // the part keeps the old text
}

// hold marks s changed, its chunk waiting for the next flush.
func (m *Mapper) hold(dst []Chunk, s *subagent) []Chunk {
	if !s.held {
		s.held = true
		m.held = append(m.held, s)
	}
	return dst
}

// Flush appends the chunks the Mapper holds back: a sub-agent's streamed
// text and reasoning ([*agentloop.Nested] deltas), whose view goes out as
// one chunk per flush rather than one per delta. Call it before flushing
// the [Writer] when the client should see everything mapped so far (the
// [Handler] does, after each batch of the run's items); any other item
// flushes them too.
func (m *Mapper) Flush(dst []Chunk) []Chunk {
	if len(m.held) == 0 || m.done {
		return dst
	}
	for _, s := range m.held {
		if s.held {
			dst = m.subagentChunk(dst, s)
		}
	}
	clear(m.held)
	m.held = m.held[:0]
	return dst
}

// subagentChunk appends the data chunk of s's view.
func (m *Mapper) subagentChunk(dst []Chunk, s *subagent) []Chunk {
	s.held = false
	s.syncOpen()
	data, err := json.Marshal(&s.view)
	if err != nil {
		return dst // a view of strings and JSON values always encodes
	}
	return append(dst, DataChunk{Name: DataSubagent, ID: s.id, Data: data})
}

// endSubagents settles the views of the sub-runs under the call id once
// the call has its result: a sub-run still "running" ended without its
// own last item (it failed, or was cut off).
func (m *Mapper) endSubagents(dst []Chunk, id string, failed bool) []Chunk {
	if len(m.subagents) == 0 {
		return dst
	}
	dst = m.Flush(dst)
	for _, s := range m.subagentOrder {
		if s.view.CallID != id || s.view.State != "running" {
			continue
		}
		s.view.State = "done"
		if failed {
			s.view.State = "failed"
		}
		dst = m.subagentChunk(dst, s)
	}
	return dst
}

// agentMetadata names the agent that speaks from this turn on, when a run
// with handoffs names one ([agentloop.TurnStart.Agent]): message metadata
// {"agent": name}, merged into the message by the client.
func (m *Mapper) agentMetadata(dst []Chunk, agent string) []Chunk {
	if agent == "" || agent == m.agent {
		return dst
	}
	m.agent = agent
	md, _ := json.Marshal(map[string]string{"agent": agent})
	return append(dst, MessageMetadataChunk{MessageMetadata: md})
}

// subrunAt returns the state of the paused sub-run at path in h (h's call
// path[0], its sub-run's call path[1], ...), or nil.
func subrunAt(h agentloop.History, path []string) *agentloop.SubRun {
	var sr *agentloop.SubRun
	for _, id := range path {
		if sr = latestSubrun(h, id); sr == nil {
			return nil
		}
		h = sr.History
	}
	return sr
}

// seed fills the view with what the sub-run's history h holds: its text,
// reasoning and tool calls with their results and decisions so far.
func (s *subagent) seed(h agentloop.History) {
	v := &s.view
	for _, msg := range h {
		for _, p := range msg.Parts {
			switch {
			case msg.Role != agentloop.RoleAssistant && msg.Role != agentloop.RoleTool:
			case p.Type == agentloop.PartText && p.Text != "":
				v.Parts = append(v.Parts, SubagentPart{Type: "text", Text: p.Text})
			case p.Type == agentloop.PartReasoning && p.Text != "":
				v.Parts = append(v.Parts, SubagentPart{Type: "reasoning", Text: p.Text})
			case p.Type == agentloop.PartToolCall && p.ToolCall != nil:
				s.calls[p.ToolCall.ID] = len(v.Parts)
				v.Parts = append(v.Parts, SubagentPart{Type: "tool", ToolCallID: p.ToolCall.ID, ToolName: p.ToolCall.Name, Input: inputJSON(p.ToolCall.Args), State: StateInputAvailable})
			case p.Type == agentloop.PartApprovalRequest && p.Approval != nil:
				if i, ok := s.calls[p.Approval.CallID]; ok {
					v.Parts[i].State = StateApprovalRequested
				}
			case p.Type == agentloop.PartApprovalResponse && p.Approval != nil:
				if i, ok := s.calls[p.Approval.CallID]; ok {
					v.Parts[i].State = StateApprovalResponded
					if s.echo == nil {
						s.echo = make(map[string]bool)
					}
					s.echo[p.Approval.CallID] = true
				}
			case p.Type == agentloop.PartToolResult && p.ToolResult != nil:
				if i, ok := s.calls[p.ToolResult.CallID]; ok {
					r := p.ToolResult
					delete(s.echo, r.CallID)
					if r.IsError {
						v.Parts[i].State, v.Parts[i].ErrorText = StateOutputError, r.Content
					} else {
						v.Parts[i].State, v.Parts[i].Output = StateOutputAvailable, outputJSON(r.Content)
					}
				}
			}
		}
	}
}
