package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentloop/agentloop"
)

// Call is a tool call as a trajectory wants it, and as a report shows it.
type Call struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Args are the call's arguments. In a [Trajectory], nil matches any
	// arguments, and an object matches arguments that hold each of its
	// keys with an equal JSON value (further keys are allowed).
	Args json.RawMessage `json:"args,omitempty"`
}

// Trajectory scores the tool calls of a run against want: which tools, in
// which order, with which arguments. Its value is the share of positions
// (of the longer of the two sequences) where the run's call matches the
// wanted one; 1 only for the same calls in the same order. An empty want
// asks for no call. The reason names the first difference.
func Trajectory(want ...Call) Scorer { return trajectory(want) }

type trajectory []Call

func (want trajectory) Score(ctx context.Context, run *Run) Score {
	s := Score{Scorer: "trajectory"}
	n := max(len(want), len(run.Calls))
	if n == 0 {
		s.Value = 1
		return s
	}
	matched := 0
	for i := range n {
		switch {
		case i >= len(want):
			s.note(fmt.Sprintf("call %d: want no call, got %s(%s)", i+1, run.Calls[i].Name, run.Calls[i].Args))
		case i >= len(run.Calls):
			s.note(fmt.Sprintf("call %d: want %s, got no call", i+1, want[i]))
		case want[i].Name != run.Calls[i].Name || !argsMatch(want[i].Args, run.Calls[i].Args):
			s.note(fmt.Sprintf("call %d: want %s, got %s(%s)", i+1, want[i], run.Calls[i].Name, run.Calls[i].Args))
		default:
			matched++
		}
	}
	s.Value = float64(matched) / float64(n)
	return s
}

// String returns the call as name(args), or name(…) for any arguments.
func (c Call) String() string {
	if c.Args == nil {
		return c.Name + "(…)"
	}
	return fmt.Sprintf("%s(%s)", c.Name, c.Args)
}

// note keeps the first reason.
func (s *Score) note(reason string) {
	if s.Reason == "" {
		s.Reason = reason
	}
}

// argsMatch reports whether got holds want (see [Call]).
func argsMatch(want, got json.RawMessage) bool {
	if want == nil {
		return true
	}
	var w, g any
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
		return bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(got))
	}
	wm, ok := w.(map[string]any)
	if !ok {
		return reflect.DeepEqual(w, g)
	}
	gm, ok := g.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range wm {
		if gv, ok := gm[k]; !ok || !reflect.DeepEqual(v, gv) {
			return false
		}
	}
	return true
}

// Exact scores 1 when the final answer, without leading and trailing
// space, equals want.
func Exact(want string) Scorer {
	return textScorer{"exact", func(got string) bool { return strings.TrimSpace(got) == want }, fmt.Sprintf("want %q", want)}
}

// Contains scores 1 when the final answer holds each of want
// (case-sensitive).
func Contains(want ...string) Scorer {
	return textScorer{"contains", func(got string) bool {
		for _, w := range want {
			if !strings.Contains(got, w) {
				return false
			}
		}
		return true
	}, fmt.Sprintf("want text containing %q", want)}
}

type textScorer struct {
	name string
	ok   func(string) bool
	want string
}

func (t textScorer) Score(ctx context.Context, run *Run) Score {
	if t.ok(run.Text) {
		return Score{Scorer: t.name, Value: 1}
	}
	return Score{Scorer: t.name, Reason: fmt.Sprintf("%s, got %q", t.want, run.Text)}
}

// Schema scores 1 when the final answer is JSON (a Markdown code fence
// around it is allowed) valid against the JSON Schema schema, validated as
// agentloop validates tool arguments and structured answers (the same
// library, draft 2020-12 by default); [agentloop.SchemaFor] makes the
// schema of a Go type. A schema that does not compile is an error.
func Schema(schema json.RawMessage) (Scorer, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("eval: invalid schema: %w", err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("eval: invalid schema: %w", err)
	}
	return schemaScorer{resolved}, nil
}

type schemaScorer struct{ schema *jsonschema.Resolved }

func (s schemaScorer) Score(ctx context.Context, run *Run) Score {
	var inst any
	if err := json.Unmarshal([]byte(finalJSON(run.Text)), &inst); err != nil {
		return Score{Scorer: "schema", Reason: fmt.Sprintf("the answer is not JSON: %v", err)}
	}
	if err := s.schema.Validate(inst); err != nil {
		return Score{Scorer: "schema", Reason: fmt.Sprintf("the answer breaks the schema: %v", oneLine(err.Error()))}
	}
	return Score{Scorer: "schema", Value: 1}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Check scores with a Go func: 1 when check returns nil, else 0 with the
// error as the reason. name names the score.
func Check(name string, check func(run *Run) error) Scorer { return checkScorer{name, check} }

type checkScorer struct {
	name  string
	check func(*Run) error
}

func (c checkScorer) Score(ctx context.Context, run *Run) Score {
	if err := c.check(run); err != nil {
		return Score{Scorer: c.name, Reason: err.Error()}
	}
	return Score{Scorer: c.name, Value: 1}
}

// Judge scores a run with a model that grades it against a rubric: an LLM
// as the judge. The judge is sent the rubric, the case's input, the tool
// calls and the final answer, and asked for a JSON verdict {"score": 0 to
// 1, "reason": "…"}, with [agentloop.Structured] (so the answer is
// validated, and a malformed one asked for again once). A judge that
// fails scores 0 with the failure as the reason. Any [agentloop.Model]
// can judge; a simtest model makes a deterministic judge for tests.
type Judge struct {
	// Model grades the run. Required.
	Model agentloop.Model
	// Rubric says what a good run is, in words.
	Rubric string
}

// Verdict is the answer a [Judge] asks its model for.
type Verdict struct {
	// Score is between 0 (fails the rubric) and 1 (meets it fully).
	Score float64 `json:"score" jsonschema:"minimum=0,maximum=1"`
	// Reason explains the score in a sentence.
	Reason string `json:"reason"`
}

// JudgeSystem is the system prompt of a [Judge]'s model.
const JudgeSystem = "You grade the run of an AI assistant against a rubric. " +
	`Answer with only a JSON object: {"score": a number from 0 (fails the rubric) to 1 (meets it fully), "reason": one sentence}.`

// Score asks the judge's model for a verdict on run.
func (j *Judge) Score(ctx context.Context, run *Run) Score {
	var b strings.Builder
	fmt.Fprintf(&b, "Rubric:\n%s\n\nConversation:\n", j.Rubric)
	for _, m := range run.Case.Input {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Text())
	}
	if len(run.Calls) > 0 {
		b.WriteString("\nTool calls:\n")
		for i, c := range run.Calls {
			fmt.Fprintf(&b, "%s(%s)", c.Name, c.Args)
			if i < len(run.Results) {
				fmt.Fprintf(&b, " -> %s", run.Results[i].Content)
			}
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "\nFinal answer:\n%s\n", run.Text)
	judge := &agentloop.Agent{Model: j.Model, System: JudgeSystem}
	v, _, err := agentloop.Structured[Verdict](ctx, judge, agentloop.History{agentloop.UserMessage(b.String())}, nil)
	if err != nil {
		return Score{Scorer: "judge", Reason: fmt.Sprintf("the judge failed: %v", err)}
	}
	return Score{Scorer: "judge", Value: v.Score, Reason: v.Reason}
}
