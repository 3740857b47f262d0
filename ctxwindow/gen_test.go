package ctxwindow_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
)

// gen makes random histories shaped like the loop's: user messages (some
// with images), assistant turns with reasoning (signed, unsigned, redacted),
// text and tool calls, answered by server results, client results appended
// in a later tool message, and approvals (requested in the assistant
// message, decided in a tool message, then run or denied). Every call has
// its results, as in a request the loop sends.
type gen struct {
	r     *rand.Rand
	calls int
}

func newGen(seed uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

var words = strings.Fields("the of and to a in is it you that he was for on are with as I his they be at one have this from or had by hot word but what some we can out other were all there when up use your how said an each she which do their time if will way about many then them write would like so these her long make thing see him two has look more day could go come did number sound no most people my over know water than call first who may down side been now find")

// text returns about n bytes of words.
func (g *gen) text(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[g.r.IntN(len(words))])
	}
	return b.String()
}

// size returns a random length: mostly short, sometimes long, rarely huge.
func (g *gen) size() int {
	switch p := g.r.IntN(20); {
	case p == 0:
		return 20_000 + g.r.IntN(40_000)
	case p < 4:
		return 1_000 + g.r.IntN(4_000)
	default:
		return 10 + g.r.IntN(300)
	}
}

func (g *gen) user() agentloop.Message {
	m := agentloop.UserMessage(g.text(10 + g.r.IntN(200)))
	if g.r.IntN(10) == 0 {
		m.Parts = append(m.Parts, agentloop.Part{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Filename: "a.png", Data: []byte("\x89PNG fake")}})
	}
	return m
}

func (g *gen) reasoning() agentloop.Part {
	switch g.r.IntN(3) {
	case 0:
		return agentloop.Part{Type: agentloop.PartReasoning, Text: g.text(g.size()), Signature: "sig" + g.text(20)}
	case 1:
		return agentloop.Part{Type: agentloop.PartReasoning, Redacted: "redacted" + g.text(40)}
	}
	return agentloop.Part{Type: agentloop.PartReasoning, Text: g.text(g.size())}
}

// history returns a history of about turns user turns.
func (g *gen) history(turns int) agentloop.History {
	var h agentloop.History
	if g.r.IntN(2) == 0 {
		h = append(h, agentloop.SystemMessage("You are helpful. "+g.text(50)))
	}
	if g.r.IntN(10) == 0 {
		h = append(h, agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("Hello! " + g.text(30))}})
	}
	for t := 0; t < turns; t++ {
		h = append(h, g.user())
		steps := g.r.IntN(5)
		for s := 0; s < steps; s++ {
			h = g.step(h, true)
		}
		last := t == turns-1
		switch {
		case last && g.r.IntN(3) == 0:
			// A run in progress: the history ends with answered calls.
			h = g.step(h, false)
		case g.r.IntN(8) > 0:
			h = append(h, g.answer())
		}
	}
	if g.r.IntN(4) == 0 {
		h = append(h, g.user()) // a new run starts
	}
	return h
}

// answer is an assistant message without calls.
func (g *gen) answer() agentloop.Message {
	m := agentloop.Message{Role: agentloop.RoleAssistant}
	if g.r.IntN(2) == 0 {
		m.Parts = append(m.Parts, g.reasoning())
	}
	if g.r.IntN(10) > 0 || len(m.Parts) == 0 {
		m.Parts = append(m.Parts, agentloop.TextPart(g.text(g.size())))
	}
	return m
}

// step appends an assistant message with calls and what answers them.
func (g *gen) step(h agentloop.History, maybeNoCalls bool) agentloop.History {
	a := agentloop.Message{Role: agentloop.RoleAssistant}
	if g.r.IntN(2) == 0 {
		a.Parts = append(a.Parts, g.reasoning())
	}
	if g.r.IntN(2) == 0 {
		a.Parts = append(a.Parts, agentloop.TextPart(g.text(g.size())))
	}
	n := 1 + g.r.IntN(3)
	if maybeNoCalls && g.r.IntN(10) == 0 {
		n = 0
	}
	type call struct {
		agentloop.ToolCall
		kind int // 0 server, 1 client, 2 approval approved, 3 approval denied
	}
	var calls []call
	for i := 0; i < n; i++ {
		g.calls++
		c := call{ToolCall: agentloop.ToolCall{ID: fmt.Sprintf("call_%d", g.calls), Name: []string{"search", "read_file", "get_location", "delete"}[g.r.IntN(4)]}, kind: g.r.IntN(4)}
		args, _ := json.Marshal(map[string]string{"q": g.text(10 + g.r.IntN(80))})
		if g.r.IntN(30) == 0 {
			args = []byte(`{"q": "cut off`) // invalid JSON, as a model may write
		}
		c.Args = args
		calls = append(calls, c)
		a.Parts = append(a.Parts, agentloop.Part{Type: agentloop.PartToolCall, ToolCall: &c.ToolCall})
	}
	if len(a.Parts) == 0 {
		a.Parts = append(a.Parts, agentloop.TextPart(g.text(20)))
	}
	for _, c := range calls {
		if c.kind >= 2 {
			a.Parts = append(a.Parts, agentloop.Part{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: c.ID, ID: "approval_" + c.ID}})
		}
	}
	h = append(h, a)
	if len(calls) == 0 {
		return h
	}
	// Approval decisions come first, in their own tool message.
	var decisions, server, client []agentloop.Part
	for _, c := range calls {
		res := &agentloop.ToolResult{CallID: c.ID, Name: c.Name, Content: g.text(g.size())}
		switch c.kind {
		case 1:
			client = append(client, agentloop.Part{Type: agentloop.PartToolResult, ToolResult: res})
			continue
		case 2:
			decisions = append(decisions, agentloop.Part{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: c.ID, ID: "approval_" + c.ID, Approved: true}})
		case 3:
			decisions = append(decisions, agentloop.Part{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: c.ID, ID: "approval_" + c.ID, Reason: "not now"}})
			res.Content, res.IsError = "denied: not now", true
		}
		if g.r.IntN(8) == 0 {
			res.IsError = true
		}
		server = append(server, agentloop.Part{Type: agentloop.PartToolResult, ToolResult: res})
	}
	for _, parts := range [][]agentloop.Part{server, decisions, client} {
		if len(parts) > 0 {
			h = append(h, agentloop.Message{Role: agentloop.RoleTool, Parts: parts})
		}
	}
	return h
}

// pinnedTokens estimates what every request must keep: the system messages
// at the start, the first and newest user message, and the latest turn.
func pinnedTokens(h agentloop.History, est ctxwindow.Estimator) int {
	t := 0
	keep := make([]bool, len(h))
	for i := 0; i < len(h) && h[i].Role == agentloop.RoleSystem; i++ {
		keep[i] = true
	}
	first, newest := -1, -1
	for i, m := range h {
		if m.Role == agentloop.RoleUser {
			if first < 0 {
				first = i
			}
			newest = i
		}
	}
	if first >= 0 {
		keep[first], keep[newest] = true, true
	}
	// The latest turn: from the last message that is not a tool message.
	for i := len(h) - 1; i >= 0; i-- {
		keep[i] = true
		if h[i].Role != agentloop.RoleTool {
			break
		}
	}
	for i, k := range keep {
		if k {
			t += est.Message(h[i])
		}
	}
	return t
}

// checkSent checks what every strategy promises about sent, shaped from
// orig: the history is valid, each assistant message's calls are answered,
// all of them, by the tool messages right after it, nothing else answers
// them, what is sent does not start with a tool message, and the messages
// every request keeps are there, unchanged.
func checkSent(t *testing.T, orig, sent agentloop.History) {
	t.Helper()
	if err := sent.Validate(); err != nil {
		t.Fatalf("sent history is not valid: %v", err)
	}
	for i, m := range sent {
		if m.Role == agentloop.RoleSystem {
			continue
		}
		if m.Role == agentloop.RoleTool {
			t.Fatalf("sent history starts with a tool message (message %d)", i)
		}
		break
	}
	for i := 0; i < len(sent); i++ {
		m := sent[i]
		switch m.Role {
		case agentloop.RoleTool:
			t.Fatalf("message %d: a tool message that does not follow an assistant message's calls", i)
		case agentloop.RoleAssistant:
			want := map[string]bool{}
			for _, c := range m.ToolCalls() {
				want[c.ID] = true
			}
			answered := map[string]bool{}
			j := i + 1
			for ; j < len(sent) && sent[j].Role == agentloop.RoleTool; j++ {
				for _, p := range sent[j].Parts {
					var id string
					switch {
					case p.ToolResult != nil:
						id = p.ToolResult.CallID
						answered[id] = true
					case p.Approval != nil:
						id = p.Approval.CallID
					}
					if id != "" && !want[id] {
						t.Fatalf("message %d answers call %q, which the assistant message %d before it did not make", j, id, i)
					}
				}
			}
			for id := range want {
				if !answered[id] {
					t.Fatalf("call %q of message %d has no result in the tool messages after it", id, i)
				}
			}
			i = j - 1
		}
	}
	mustKeep := func(what string, m agentloop.Message) {
		t.Helper()
		for _, s := range sent {
			if equalMessages(s, m) {
				return
			}
		}
		t.Fatalf("the %s is not sent unchanged: %q", what, m.Text())
	}
	for i := 0; i < len(orig) && orig[i].Role == agentloop.RoleSystem; i++ {
		mustKeep("leading system message", orig[i])
	}
	first, newest := -1, -1
	for i, m := range orig {
		if m.Role == agentloop.RoleUser {
			if first < 0 {
				first = i
			}
			newest = i
		}
	}
	if first >= 0 {
		mustKeep("first user message", orig[first])
		mustKeep("newest user message", orig[newest])
	}
	for i := len(orig) - 1; i >= 0; i-- {
		if orig[i].Role != agentloop.RoleTool {
			mustKeep("latest turn's message", orig[i])
			break
		}
	}
}

func equalMessages(a, b agentloop.Message) bool { return reflect.DeepEqual(a, b) }

// requestTokens estimates what req costs, as the Manager counts it.
func requestTokens(req *agentloop.Request, est ctxwindow.Estimator) int {
	t := est.Text(req.System)
	for _, d := range req.Tools {
		t += est.Text(d.Name) + est.Text(d.Description) + est.Text(string(d.Schema)) + est.Message(agentloop.Message{})
	}
	for _, m := range req.Messages {
		t += est.Message(m)
	}
	return t
}
