package agentloop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// handoffPrefix starts the name of the tool that hands a conversation to
// another agent ([Agent.Handoffs]).
const handoffPrefix = "transfer_to_"

// handoffValidator is the compiled schema of every transfer tool's
// arguments (an empty object), compiled once.
var handoffValidator = sync.OnceValues(func() (*validator, error) { return compileArgsSchema(emptyObjectSchema) })

// handoffTool returns the tool that hands the conversation to b.
func handoffTool(b *Agent) (*Tool, error) {
	v, err := handoffValidator()
	if err != nil {
		return nil, err
	}
	desc := b.HandoffDescription
	if desc == "" {
		desc = fmt.Sprintf("Hand the conversation to the %s agent, which answers the user from then on.", b.Name)
	}
	content := fmt.Sprintf("Transferred to %s.", b.Name)
	return &Tool{
		Name: handoffPrefix + b.Name, Description: desc, Schema: emptyObjectSchema, validator: v,
		Func: func(context.Context, json.RawMessage) (string, error) { return content, nil },
	}, nil
}

// handoffGraph returns the agents reachable from a through Handoffs, by
// name, a included; it refuses an agent without a name and two agents with
// one name.
func handoffGraph(a *Agent) (map[string]*Agent, error) {
	byName := make(map[string]*Agent)
	queue := []*Agent{a}
	for len(queue) > 0 {
		b := queue[0]
		queue = queue[1:]
		if b == nil {
			return nil, fmt.Errorf("agentloop: a nil agent in Handoffs")
		}
		if b.Name == "" {
			return nil, fmt.Errorf("agentloop: agents that hand off or are handed to need a Name")
		}
		if old, ok := byName[b.Name]; ok {
			if old != b {
				return nil, fmt.Errorf("agentloop: two agents named %q in the handoffs", b.Name)
			}
			continue
		}
		if b.Model == nil {
			return nil, fmt.Errorf("agentloop: agent %q: Model is nil", b.Name)
		}
		byName[b.Name] = b
		queue = append(queue, b.Handoffs...)
	}
	return byName, nil
}

// speaker returns the name of the agent that holds the conversation h: the
// agent of the last assistant message, or the agent it handed to.
func speaker(h History) string {
	i := h.lastAssistant()
	if i < 0 {
		return ""
	}
	name := h[i].Agent
	if target := handedTo(h[i+1:]); target != "" {
		name = target
	}
	return name
}

// handedTo returns the agent the last successful transfer among msgs'
// results names, or "".
func handedTo(msgs []Message) string {
	target := ""
	for _, m := range msgs {
		for _, p := range m.Parts {
			if r := p.ToolResult; p.Type == PartToolResult && r != nil && !r.IsError && strings.HasPrefix(r.Name, handoffPrefix) {
				target = strings.TrimPrefix(r.Name, handoffPrefix)
			}
		}
	}
	return target
}

// setupHandoffs prepares a run of an agent with Handoffs: it starts with
// the agent that holds the conversation.
func (r *run) setupHandoffs(o *RunOptions) error {
	graph, err := handoffGraph(r.agent)
	if err != nil {
		return err
	}
	r.graph = graph
	r.extra = o.Tools
	if b := graph[speaker(r.history)]; b != nil && b != r.agent {
		return r.become(b)
	}
	return r.addHandoffTools(r.agent)
}

func (r *run) addHandoffTools(a *Agent) error {
	for _, b := range a.Handoffs {
		t, err := handoffTool(b)
		if err != nil {
			return err
		}
		if err := r.addTools([]*Tool{t}, false); err != nil {
			return err
		}
	}
	return nil
}

// become makes b the run's agent: the next turns use its model, system
// prompt, settings, tools (with the run's RunOptions.Tools) and handoffs. The
// run's hooks, limits and budget stay.
func (r *run) become(b *Agent) error {
	if len(r.subs) > 0 || r.own != (Usage{}) {
		r.subs = append(r.subs, subUsage{agent: r.agent.Name, model: r.model, usage: r.own})
		r.own = Usage{}
	}
	r.agent = b
	r.system, r.settings, r.model = b.System, b.Settings, modelInfo(b.Model)
	r.tools, r.toolOrder = make(map[string]*Tool), nil
	if err := r.addTools(b.Tools, false); err != nil {
		return err
	}
	if err := r.addTools(r.extra, true); err != nil {
		return err
	}
	return r.addHandoffTools(b)
}

// handOff switches to the agent the turn's last successful transfer names.
func (r *run) handOff() error {
	if r.graph == nil {
		return nil
	}
	i := r.history.lastAssistant()
	if b := r.graph[handedTo(r.history[i+1:])]; b != nil && b != r.agent {
		return r.become(b)
	}
	return nil
}

// handoffAt returns where the conversation was last handed to the agent
// named name in h: the index of the first message after the turn whose
// successful transfer_to_<name> call handed it over (after that turn's
// tool messages), or -1 when h has no such transfer.
func handoffAt(h History, name string) int {
	tool := handoffPrefix + name
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role != RoleTool {
			continue
		}
		for _, p := range h[i].Parts {
			if r := p.ToolResult; p.Type == PartToolResult && r != nil && !r.IsError && r.Name == tool {
				j := i + 1
				for j < len(h) && h[j].Role == RoleTool {
					j++
				}
				return j
			}
		}
	}
	return -1
}

// handoffInput sets req.Messages to what the agent's HandoffFilter makes of
// the history, when the agent has one and was handed the conversation; it
// reports whether it did. The filter gets a deep copy of its own (not the
// reused hook copy: a filter that moves messages within it would leave
// that copy's messages sharing parts, which the next turn could keep).
func (r *run) handoffInput(req *Request) (bool, error) {
	f := r.agent.HandoffFilter
	if f == nil || r.graph == nil {
		return false, nil
	}
	at := handoffAt(r.history, r.agent.Name)
	if at < 0 {
		return false, nil
	}
	msgs := f(r.history.Clone(), at)
	if err := checkModelInput(msgs); err != nil {
		return true, fmt.Errorf("agentloop: agent %q: its HandoffFilter returned messages the model cannot take: %w", r.agent.Name, err)
	}
	req.Messages = msgs[:len(msgs):len(msgs)]
	return true, nil
}

// checkModelInput checks that h can be sent to a model: valid, and every
// tool call in it has a result.
func checkModelInput(h History) error {
	if err := h.Validate(); err != nil {
		return err
	}
	answered := make(map[string]bool)
	for _, m := range h {
		for _, p := range m.Parts {
			if p.Type == PartToolResult {
				answered[p.ToolResult.CallID] = true
			}
		}
	}
	for i, m := range h {
		for _, c := range m.ToolCalls() {
			if !answered[c.ID] {
				return fmt.Errorf("%w: message %d: tool call %q has no result", ErrInvalidHistory, i, c.ID)
			}
		}
	}
	return nil
}

// DropToolsBeforeHandoff is an [Agent.HandoffFilter] for the common case:
// the new agent sees what was said before the handoff, not the earlier
// agents' tool work. From h[:handoff] it leaves out every tool call (the
// transfer included) with its results, approval parts and sub-runs, and
// then every message left without text or a file (an assistant message
// that only called tools, or only reasoned before calling them); the user's
// messages and the earlier agents' text stay. Messages from handoff on are
// kept as they are. It changes h's messages in place and returns h's
// backing array, as a filter may.
func DropToolsBeforeHandoff(h History, handoff int) History {
	handoff = min(max(handoff, 0), len(h))
	out := h[:0]
	for _, m := range h[:handoff] {
		parts := m.Parts[:0]
		kept := false
		for _, p := range m.Parts {
			switch p.Type {
			case PartToolCall, PartToolResult, PartApprovalRequest, PartApprovalResponse, PartSubRun:
				continue
			case PartText, PartFile:
				kept = true
			}
			parts = append(parts, p)
		}
		if !kept {
			continue
		}
		m.Parts = parts
		out = append(out, m)
	}
	return append(out, h[handoff:]...)
}
