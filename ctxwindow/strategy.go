package ctxwindow

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentloop/agentloop"
)

// Strategy is one way to make a request fit its budget: [DropReasoning],
// [ShortenResults], [Summarize] or [SlidingWindow]. The [Manager] applies its
// strategies in order while the request is over budget. Each works from the
// oldest messages on; DropReasoning, ShortenResults and SlidingWindow stop as soon
// as the request fits, Summarize leaves room for the conversation to grow
// (Summarize.Recent).
//
// Every strategy keeps what providers need for a valid request: each tool
// call is sent with all its results and approval decisions or not at all;
// what is sent never starts with a result; the system messages at the start,
// the first and the newest user message, and the latest turn are always
// sent. The set is closed so that these promises can be proven for each
// (this package's property tests check them over random histories); to
// shape requests in other ways, add a BeforeModelCall hook of your own.
type Strategy interface {
	apply(ctx context.Context, v *view) error
}

// DefaultStrategies returns the strategies a [Manager] uses when
// Config.Strategies is nil: DropReasoning, ShortenResults, then SlidingWindow.
func DefaultStrategies() []Strategy {
	return []Strategy{DropReasoning{}, ShortenResults{}, SlidingWindow{}}
}

// DropReasoning leaves out the reasoning of assistant messages older than
// the newest user message, oldest first, until the request fits. Reasoning
// after the newest user message (the turn in progress) is kept: Anthropic
// requires the thinking of the turn that made the tool calls being answered,
// and the model needs it to go on. An assistant message that held nothing
// but reasoning is left out.
type DropReasoning struct{}

func (DropReasoning) apply(_ context.Context, v *view) error {
	for i := 0; i < v.newestUser && !v.fits(); i++ {
		m := v.msgs[i]
		if v.gone[i] || m.Role != agentloop.RoleAssistant {
			continue
		}
		if !slices.ContainsFunc(m.Parts, isReasoning) {
			continue
		}
		m.Parts = slices.DeleteFunc(slices.Clone(m.Parts), isReasoning)
		if len(m.Parts) == 0 {
			v.drop(i)
			continue
		}
		v.set(i, m)
	}
	return nil
}

func isReasoning(p agentloop.Part) bool { return p.Type == agentloop.PartReasoning }

// Defaults of [ShortenResults].
const (
	DefaultShortenPreview = 1 << 10
	DefaultShortenKeep    = 1
)

// ShortenResults sends old tool results as previews (their start and end,
// with a marker saying how much was left out, as [LargeResults] does),
// oldest first, until the request fits. The results of the newest Keep
// model turns are sent whole.
type ShortenResults struct {
	// Preview is how many bytes of a shortened result are sent; 0 means
	// DefaultShortenPreview. Results not much longer are sent whole.
	Preview int
	// Keep is how many of the newest model turns keep their results whole;
	// 0 means DefaultShortenKeep.
	Keep int
}

func (s ShortenResults) check() error {
	if s.Preview < 0 || s.Keep < 0 {
		return fmt.Errorf("ctxwindow: ShortenResults.Preview (%d) and Keep (%d) must not be negative", s.Preview, s.Keep)
	}
	return nil
}

func (s ShortenResults) apply(_ context.Context, v *view) error {
	keep, n := s.Preview, s.Keep
	if keep == 0 {
		keep = DefaultShortenPreview
	}
	if n == 0 {
		n = DefaultShortenKeep
	}
	// Results in the newest n units that hold a model turn stay whole.
	end := len(v.orig)
	for u := len(v.units) - 1; u >= 0 && n > 0; u-- {
		end = v.units[u].start
		if v.orig[end].Role == agentloop.RoleAssistant {
			n--
		}
	}
	for i := 0; i < end && !v.fits(); i++ {
		if !v.gone[i] && v.orig[i].Role == agentloop.RoleTool {
			v.shortenResults(i, keep+minSaving, keep)
		}
	}
	return nil
}

// SlidingWindow is a sliding window over the turns: it leaves out the
// oldest turns, whole, until the request fits, and puts a short note where
// messages were left out so that the model knows. It keeps the system messages at the start, the
// first user message (often the task), a summary made by [Summarize], the
// newest user message and the latest turn. Put it last: it is the strategy
// that makes any history fit, unless what it keeps is over budget itself.
type SlidingWindow struct{}

func (SlidingWindow) apply(_ context.Context, v *view) error {
	if v.fits() {
		return nil
	}
	// Every gap gets a note; reserve the longest one a gap can need.
	noteTok := v.est.Message(note(len(v.orig)))
	inGap := false
	var gaps []gap
	for _, u := range v.units {
		if v.fits() {
			break
		}
		switch {
		case v.unitGone(u):
			continue // left out already (summarized, emptied): no gap of its own
		case u.pinned:
			inGap = false
			continue
		}
		if !inGap {
			inGap = true
			gaps = append(gaps, gap{at: u.start})
			v.total += noteTok
		}
		g := &gaps[len(gaps)-1]
		for i := u.start; i < u.end; i++ {
			if !v.gone[i] {
				v.drop(i)
				g.n++
			}
		}
		g.end = u.end
	}
	// Put each gap's note in, at its real size.
	for _, g := range gaps {
		v.total -= noteTok
		v.addInsert(g.end, insertNote, note(g.n))
	}
	return nil
}

type gap struct {
	at, end int // orig[at:end] holds the messages left out
	n       int // how many
}

// note tells the model that n messages were left out where it stands.
func note(n int) agentloop.Message {
	if n == 1 {
		return agentloop.UserMessage("[1 earlier message of this conversation is left out here to fit the context window.]")
	}
	return agentloop.UserMessage(fmt.Sprintf("[%d earlier messages of this conversation are left out here to fit the context window.]", n))
}
