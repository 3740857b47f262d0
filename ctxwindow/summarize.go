package ctxwindow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
)

// Defaults of [Summarize].
const (
	DefaultSummaryTokens = 1024
	DefaultRecent        = 0.5
)

// DefaultSummaryPrompt is the system prompt of a summarizing call when
// Summarize.Prompt is empty.
const DefaultSummaryPrompt = `You summarize the earlier part of a conversation between a user and an AI assistant that uses tools, so that the assistant can go on with the conversation without the original messages.
Keep every fact, decision, open task, user preference, name, identifier, file, number and URL that the assistant may need later; say which tool calls were made and what their results showed, briefly.
If a summary so far is given, merge it with the new messages into one summary.
Write in the language of the conversation. Answer with the summary only, without a preamble.`

// ErrSummarize is wrapped by [Report].Err when a summarizing model call
// failed; the request was then shaped by the sliding window instead.
var ErrSummarize = errors.New("ctxwindow: summarizing failed")

// Summarize replaces the older part of a conversation with a summary that a
// model writes. When the request is over budget it keeps the newest turns
// verbatim (Recent of the budget) and has Model summarize the messages
// between the first user message and them, folding in the previous summary;
// the summary is then sent as a user message where those messages were. It
// never summarizes the newest user message or the latest turn, so when
// those alone are over budget it leaves the request to the strategies after
// it: put [SlidingWindow] last.
//
// A summary is kept (see [Summary]): in the run, and, with Config.Docs
// and a conversation id ([agentloop.RunOptions.ConversationID]), in the store
// across runs. Model calls that fit with the kept summary
// reuse it; the model summarizes again only when the conversation has grown
// past it, and then only the summary and the messages after it.
//
// When summarizing fails (the model's error, an empty answer, Timeout) the
// request is shaped by [SlidingWindow] instead, and the failure is reported
// ([Report].Err wraps [ErrSummarize]) and logged to the agent's Logger; the
// run goes on. When the run's context is done, the run's cancellation wins.
type Summarize struct {
	// Model writes the summaries; nil means the agent's own model. It is
	// called with no tools, the Prompt as system prompt, and one user
	// message holding the summary so far and the messages to add, as text
	// (tool calls and results included, long ones shortened; reasoning
	// left out). Messages too long for one call are summarized in several
	// calls, each folding its part into the summary so far.
	Model agentloop.Model
	// Prompt is the system prompt of the summarizing calls; "" means
	// DefaultSummaryPrompt.
	Prompt string
	// MaxTokens bounds the summary (Settings.MaxTokens of the summarizing
	// calls); 0 means DefaultSummaryTokens.
	MaxTokens int
	// ContextWindow is the summarizing model's context window, in tokens;
	// 0 means the Manager's.
	ContextWindow int
	// Recent is the share of the budget that the newest messages, sent
	// verbatim after the summary, may take when a summary is made (of the
	// budget left after the system prompt, the tools, the leading system
	// messages and the first user message); 0 means DefaultRecent. The
	// rest holds the summary and leaves room for the conversation to grow
	// before the next one. It must be less than 1.
	Recent float64
	// Timeout bounds the summarizing calls of one model call; 0 means no
	// bound but the run's context.
	Timeout time.Duration
}

func (s Summarize) check(window int) error {
	switch {
	case s.MaxTokens < 0 || s.ContextWindow < 0 || s.Timeout < 0:
		return errors.New("ctxwindow: Summarize.MaxTokens, ContextWindow and Timeout must not be negative")
	case s.Recent < 0 || s.Recent >= 1:
		return fmt.Errorf("ctxwindow: Summarize.Recent (%v) must be at least 0 and less than 1", s.Recent)
	case s.maxTokens() >= s.window(window):
		return fmt.Errorf("ctxwindow: Summarize.MaxTokens (%d) must be less than the summarizing model's context window (%d)", s.maxTokens(), s.window(window))
	}
	return nil
}

func (s Summarize) maxTokens() int {
	if s.MaxTokens > 0 {
		return s.MaxTokens
	}
	return DefaultSummaryTokens
}

func (s Summarize) window(managers int) int {
	if s.ContextWindow > 0 {
		return s.ContextWindow
	}
	return managers
}

func (s Summarize) recent() float64 {
	if s.Recent > 0 {
		return s.Recent
	}
	return DefaultRecent
}

func (s Summarize) prompt() string {
	if s.Prompt != "" {
		return s.Prompt
	}
	return DefaultSummaryPrompt
}

func (s Summarize) apply(ctx context.Context, v *view) error {
	lo := v.headEnd
	if lo >= len(v.orig) {
		return nil
	}
	st := v.run
	prev := ""
	if old, ok := st.summaryFor(ctx, v); ok {
		v.substitute(old)
		v.rep.Summary = &old
		if v.fits() {
			return nil
		}
		lo, prev = old.Through, old.Text
	}
	c := v.cut(lo, v.nextPinned(lo), int(s.recent()*float64(v.room())))
	if c <= lo {
		return nil // nothing more to summarize; later strategies go on
	}
	text, err := s.summarize(ctx, v, prev, v.orig[lo:c])
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		st.warn(ctx, v.rep, fmt.Errorf("%w: %w", ErrSummarize, err))
		return SlidingWindow{}.apply(ctx, v)
	}
	sum := Summary{Text: text, From: v.headEnd, Through: c, Digest: digest(v.orig[:c])}
	st.keepSummary(ctx, v.rep, sum)
	v.substitute(sum)
	v.rep.Summary, v.rep.NewSummary = &sum, true
	return nil
}

// summarize folds msgs into prev, in as many calls as the summarizing
// model's window needs, and returns the new summary.
func (s Summarize) summarize(ctx context.Context, v *view, prev string, msgs agentloop.History) (string, error) {
	model := s.Model
	if model == nil {
		model = v.run.model
	}
	if model == nil {
		return "", errors.New("no model: Summarize.Model is nil and the run's agent is unknown")
	}
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	prompt := s.prompt()
	// What one call may hold besides the summary so far.
	avail := s.window(v.run.window) - s.maxTokens() - v.est.Text(prompt) - v.est.Message(agentloop.Message{}) - v.est.Text(headerPrev+headerNew)
	var b strings.Builder
	tokens := 0
	flush := func() error {
		text, err := s.call(ctx, model, prompt, prev, b.String(), v.rep)
		if err != nil {
			return err
		}
		prev = text
		b.Reset()
		tokens = 0
		return nil
	}
	for _, m := range msgs {
		r := render(m)
		t := v.est.Text(r)
		if b.Len() > 0 && v.est.Text(prev)+tokens+t > avail {
			if err := flush(); err != nil {
				return "", err
			}
		}
		b.WriteString(r)
		tokens += t
	}
	if b.Len() > 0 {
		if err := flush(); err != nil {
			return "", err
		}
	}
	return prev, nil
}

const (
	headerPrev = "Summary of the conversation so far:\n"
	headerNew  = "\n\nMessages that follow it, to merge into the summary:\n"
	headerOnly = "Messages to summarize:\n"
)

// call makes one summarizing model call and returns its text.
func (s Summarize) call(ctx context.Context, model agentloop.Model, prompt, prev, msgs string, rep *Report) (string, error) {
	input := headerOnly + msgs
	if prev != "" {
		input = headerPrev + prev + headerNew + msgs
	}
	req := &agentloop.Request{
		Turn:     1,
		System:   prompt,
		Messages: agentloop.History{agentloop.UserMessage(input)},
		Settings: agentloop.Settings{MaxTokens: s.maxTokens()},
	}
	var b strings.Builder
	for chunk, err := range model.Stream(ctx, req) {
		if err != nil {
			return "", err
		}
		switch c := chunk.(type) {
		case agentloop.TextDelta:
			b.WriteString(c.Text)
		case agentloop.Usage:
			rep.SummaryUsage = rep.SummaryUsage.Add(c)
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	text := strings.TrimSpace(b.String())
	if text == "" {
		return "", errors.New("the model answered with no text")
	}
	return text, nil
}

// Caps on what one part adds to a summarizing call's input, in bytes.
const (
	renderText   = 8 << 10
	renderArgs   = 1 << 10
	renderResult = 2 << 10
)

// render writes m as lines of text for a summarizing call.
func render(m agentloop.Message) string {
	var b strings.Builder
	who := "User"
	switch m.Role {
	case agentloop.RoleAssistant:
		who = "Assistant"
	case agentloop.RoleSystem:
		who = "System"
	case agentloop.RoleTool:
		who = "Tool"
	}
	for _, p := range m.Parts {
		switch {
		case p.Type == agentloop.PartText && p.Text != "":
			fmt.Fprintf(&b, "%s: %s\n", who, shorten(p.Text, renderText))
		case p.Type == agentloop.PartToolCall && p.ToolCall != nil:
			fmt.Fprintf(&b, "Assistant called the tool %s (call %s) with %s\n", p.ToolCall.Name, p.ToolCall.ID, shorten(string(p.ToolCall.Args), renderArgs))
		case p.Type == agentloop.PartToolResult && p.ToolResult != nil:
			r := p.ToolResult
			verb := "returned"
			if r.IsError {
				verb = "failed"
			}
			fmt.Fprintf(&b, "The tool %s (call %s) %s: %s\n", r.Name, r.CallID, verb, shorten(r.Content, renderResult))
		case p.Type == agentloop.PartApprovalResponse && p.Approval != nil:
			verdict := "denied"
			if p.Approval.Approved {
				verdict = "approved"
			}
			fmt.Fprintf(&b, "The user %s the call %s", verdict, p.Approval.CallID)
			if p.Approval.Reason != "" {
				fmt.Fprintf(&b, " (%s)", shorten(p.Approval.Reason, renderArgs))
			}
			b.WriteString("\n")
		case p.Type == agentloop.PartFile && p.File != nil:
			fmt.Fprintf(&b, "%s attached a file %q (%s)\n", who, p.File.Filename, p.File.MediaType)
		}
	}
	return b.String()
}

// shorten cuts s to about n bytes for a summarizing call's input.
func shorten(s string, n int) string {
	out, _ := preview(s, n, "", false)
	return out
}

// summaryMessage is the message that stands for what s replaces.
func summaryMessage(s Summary) agentloop.Message {
	n := s.Through - s.From
	plural := "s"
	if n == 1 {
		plural = ""
	}
	return agentloop.UserMessage(fmt.Sprintf("[Summary of the earlier part of this conversation (%d message%s, left out here to fit the context window):]\n\n%s", n, plural, s.Text))
}

// substitute sends s's message instead of the messages it replaces, taking
// back the summary sent before, if any.
func (v *view) substitute(s Summary) {
	v.removeInserts(insertSummary)
	for i := s.From; i < s.Through; i++ {
		v.drop(i)
	}
	v.addInsert(s.Through, insertSummary, summaryMessage(s))
}

// fitsSummary reports whether s can stand for a part of this history: its
// start is this history's (by digest), it starts after the pinned head and
// ends where a unit ends, and it replaces no pinned message.
func (v *view) fitsSummary(s Summary) bool {
	return s.Text != "" && s.From == v.headEnd && s.From < s.Through && s.Through < len(v.orig) &&
		v.unitStart(s.Through) && v.nextPinned(s.From) >= s.Through &&
		digest(v.orig[:s.Through]) == s.Digest
}

// room returns the budget left for the conversation after the system
// prompt, the tools and the pinned head.
func (v *view) room() int {
	r := v.limit - v.fixed
	for i := 0; i < v.headEnd; i++ {
		if !v.gone[i] {
			r -= v.tok[i]
		}
	}
	return max(r, 0)
}

// cut returns where the verbatim tail starts after summarizing from lo: the
// first unit start at or after lo from which what is still sent fits in
// budget, but not after hi (a unit start).
func (v *view) cut(lo, hi, budget int) int {
	t := 0
	for i := lo; i < len(v.orig); i++ {
		if !v.gone[i] {
			t += v.tok[i]
		}
	}
	c := lo
	for c < hi && t > budget {
		u := v.units[v.unit[c]]
		t -= v.unitTokens(u)
		c = u.end
	}
	return c
}
