package simtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func stream(t *testing.T, m *simtest.Model, req *agentloop.Request) ([]agentloop.Chunk, error) {
	t.Helper()
	var out []agentloop.Chunk
	for c, err := range m.Stream(t.Context(), req) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func TestModel_StreamsTextByWordAndArgsInFragments(t *testing.T) {
	m := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{
		simtest.Text("Hello big world"),
		simtest.Call("c1", "add", map[string]int{"a": 1}),
		simtest.Usage(3, 4),
	}})
	chunks, err := stream(t, m, &agentloop.Request{})
	require.NoError(t, err)
	assert.Equal(t, []agentloop.Chunk{
		agentloop.TextDelta{Text: "Hello "}, agentloop.TextDelta{Text: "big "}, agentloop.TextDelta{Text: "world"},
		agentloop.ToolCallDelta{ID: "c1", Name: "add", Args: `{"a`}, agentloop.ToolCallDelta{ID: "c1", Name: "add", Args: `":1`},
		agentloop.ToolCallDelta{ID: "c1", Name: "add", Args: `}`},
		agentloop.ToolCall{ID: "c1", Name: "add", Args: json.RawMessage(`{"a":1}`)},
		agentloop.Usage{Input: 3, Output: 4},
		agentloop.Finish{Reason: agentloop.FinishToolCalls},
	}, chunks)
}

func TestModel_FragmentsKeepMultibyteRunesWhole(t *testing.T) {
	m := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Call("c1", "say", `{"t":"ééééééé"}`)}})
	chunks, err := stream(t, m, &agentloop.Request{})
	require.NoError(t, err)
	var joined string
	n := 0
	for _, c := range chunks {
		if d, ok := c.(agentloop.ToolCallDelta); ok {
			assert.True(t, utf8.ValidString(d.Args), "a fragment split a rune: %q", d.Args)
			joined += d.Args
			n++
		}
	}
	assert.Equal(t, 3, n)
	assert.Equal(t, `{"t":"ééééééé"}`, joined)
}

func TestModel_ExpectationMismatchNamesTurnAndDifference(t *testing.T) {
	m := simtest.NewModel(simtest.Turn{Expect: simtest.Expect{Tools: []string{"a", "b"}}, Reply: []simtest.Step{simtest.Text("x")}})
	_, err := stream(t, m, &agentloop.Request{Tools: []agentloop.ToolDef{{Name: "a"}}})
	var ee *simtest.ExpectationError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "simtest: turn 1: tools offered: want [a b], got [a]", err.Error())

	m = simtest.NewModel(simtest.Turn{Expect: simtest.Expect{User: "Berlin"}})
	_, err = stream(t, m, &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("Paris please")}})
	assert.EqualError(t, err, `simtest: turn 1: latest user text: want text containing "Berlin", got "Paris please"`)

	m = simtest.NewModel(simtest.Turn{Expect: simtest.Expect{ToolResults: map[string]string{"c9": "5"}}})
	_, err = stream(t, m, &agentloop.Request{})
	assert.EqualError(t, err, `simtest: turn 1: tool result for c9: want a result containing "5", got no result for that call id`)
}

func TestModel_CallPastTheScriptFails(t *testing.T) {
	m := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("only")}})
	_, err := stream(t, m, &agentloop.Request{})
	require.NoError(t, err)
	_, err = stream(t, m, &agentloop.Request{})
	require.ErrorIs(t, err, simtest.ErrScriptExhausted)
	assert.ErrorContains(t, err, "model call 2, but the script has 1 turns")
	assert.Equal(t, 2, m.Calls())
	assert.Equal(t, 0, m.Remaining())
}

func TestModel_FailDelayAndHang(t *testing.T) {
	m := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("a"), simtest.Fail("boom")}})
	chunks, err := stream(t, m, &agentloop.Request{})
	var se *simtest.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Len(t, chunks, 1)

	m = simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Hang()}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, err := range m.Stream(ctx, &agentloop.Request{}) {
		require.ErrorIs(t, err, context.Canceled)
	}
	assert.Equal(t, 0, m.Open())
}

func TestModel_DelayPausesUntilDoneOrCancelled(t *testing.T) {
	m := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("a"), simtest.Delay(0), simtest.Text("b")}})
	chunks, err := stream(t, m, &agentloop.Request{})
	require.NoError(t, err)
	assert.Equal(t, []agentloop.Chunk{agentloop.TextDelta{Text: "a"}, agentloop.TextDelta{Text: "b"}, agentloop.Finish{Reason: agentloop.FinishStop}}, chunks)

	m = simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("a"), simtest.Delay(time.Hour), simtest.Text("b")}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got []agentloop.Chunk
	for c, err := range m.Stream(ctx, &agentloop.Request{}) {
		if err != nil {
			require.ErrorIs(t, err, context.Canceled, "a cancelled delay ends the stream with the context's error")
			break
		}
		got = append(got, c)
		cancel() // cancel while the delay is pending
	}
	assert.Equal(t, []agentloop.Chunk{agentloop.TextDelta{Text: "a"}}, got)
	assert.Equal(t, 0, m.Open())
}

func TestModel_ReplyFuncSeesTheRequest(t *testing.T) {
	m := simtest.NewModel(simtest.Turn{ReplyFunc: func(req *agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text("turn " + req.Messages[0].Text())}, nil
	}}, simtest.Turn{ReplyFunc: func(*agentloop.Request) ([]simtest.Step, error) { return nil, errors.New("no idea") }})
	chunks, err := stream(t, m, &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage("one")}})
	require.NoError(t, err)
	assert.Equal(t, agentloop.TextDelta{Text: "turn "}, chunks[0])
	_, err = stream(t, m, &agentloop.Request{})
	assert.ErrorContains(t, err, "turn 2: reply func: no idea")
	assert.Len(t, m.Requests(), 2)
}

// design.md §18.1: the script format's example in the design document
// (testdata/design-example.json, the same JSON) parses and plays.
func TestParseScript_ReadsTheDesignExample(t *testing.T) {
	script, err := simtest.LoadScript("testdata/design-example.json")
	require.NoError(t, err)
	add, err := agentloop.NewTool("add", "Add.", func(ctx context.Context, a struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}) (float64, error) {
		return a.A + a.B, nil
	})
	require.NoError(t, err)
	loc, err := agentloop.NewClientTool("getLocation", "Where the user is.", nil)
	require.NoError(t, err)
	a := &agentloop.Agent{Model: script.Model(), Tools: []*agentloop.Tool{add, loc}}
	last, err := agentloop.Drain(a.Stream(t.Context(), agentloop.History{agentloop.UserMessage("I am in Berlin: 2+3?")}, nil))
	require.NoError(t, err, "every expectation of the script is met")
	f := last.(agentloop.Final)
	assert.Equal(t, "2 + 3 = 5.", f.Text)
	assert.Equal(t, agentloop.Usage{Input: 12, Output: 7}, f.Usage)
	first := f.History[1]
	require.Len(t, first.Parts, 3)
	assert.Equal(t, agentloop.Part{Type: agentloop.PartReasoning, Text: "Need the sum first."}, first.Parts[0])
	assert.Equal(t, "Let me add that.", first.Parts[1].Text)
	assert.JSONEq(t, `{"a": 2, "b": 3}`, string(first.Parts[2].ToolCall.Args))
	assert.Equal(t, "call_1", first.Parts[2].ToolCall.ID)
}

// A scripted conversation whose turns report cache and reasoning counts: a
// budget of 250 tokens stops it after the second turn (120 + 150 tokens),
// before the third model call, with every tool result in the history.
func TestParseScript_UsageCountsDriveABudgetToTheExactTurn(t *testing.T) {
	script, err := simtest.ParseScript([]byte(`{"turns": [
	  {"reply": [{"tool_call": {"name": "echo", "args": {}}}, {"usage": {"input": 100, "output": 20, "cacheWrite": 90}}]},
	  {"reply": [{"tool_call": {"name": "echo", "args": {}}}, {"usage": {"input": 130, "output": 20, "cacheRead": 90, "reasoning": 5}}]},
	  {"reply": [{"text": "never reached"}]}
	]}`))
	require.NoError(t, err)
	echo, err := agentloop.NewRawTool("echo", "Echo.", nil, func(context.Context, json.RawMessage) (string, error) { return "ok", nil })
	require.NoError(t, err)
	m := script.Model()
	a := &agentloop.Agent{Model: m, Tools: []*agentloop.Tool{echo}, Budget: agentloop.Budget{Tokens: 250}}
	_, err = agentloop.Drain(a.Stream(t.Context(), agentloop.History{agentloop.UserMessage("go")}, nil))
	var be *agentloop.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 2, m.Calls())
	assert.Equal(t, agentloop.Usage{Input: 230, Output: 40, CacheRead: 90, CacheWrite: 90, Reasoning: 5}, be.Usage)
	assert.Len(t, be.History, 5, "user, then two turns of call and result")
}

func TestParseScript_RejectsMalformedScripts(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"two keys":      {`{"turns":[{"reply":[{"text":"a","finish":"stop"}]}]}`, "turn 1, reply element 1: want an object with exactly one key, got 2 keys"},
		"unknown key":   {`{"turns":[{"reply":[{"txt":"a"}]}]}`, `unknown key "txt"`},
		"no turns":      {`{}`, `no "turns" array`},
		"unknown field": {`{"turns":[],"model":"x"}`, `unknown field "model"`},
		"bad call":      {`{"turns":[{"reply":[{"tool_call":{"args":{}}}]}]}`, `"name" is required`},
		"bad delay":     {`{"turns":[{"reply":[{"delay_ms":-1}]}]}`, `"delay_ms": want a non-negative integer`},
		"text number":   {`{"turns":[{},{"reply":[{"text":5}]}]}`, `turn 2, reply element 1: "text": want a string`},
		"trailing data": {`{"turns":[]} {"turns":[]}`, "data after the script object"},
		"hang false":    {`{"turns":[{"reply":[{"hang":false}]}]}`, `turn 1, reply element 1: "hang": want true`},
		"expect typo":   {`{"turns":[{"expect":{"tool":["a"]}}]}`, `unknown field "tool"`},
		"usage typo":    {`{"turns":[{"reply":[{"usage":{"cached":1}}]}]}`, `unknown field "cached"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := simtest.ParseScript([]byte(tc.in))
			require.ErrorIs(t, err, simtest.ErrBadScript)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add([]byte(`{"turns":[{"expect":{"tools":["a"]},"reply":[{"text":"x"},{"tool_call":{"name":"a","args":{"b":1}}},{"hang":true}]}]}`))
	f.Add([]byte(`{"turns":[{"reply":[{"usage":{"input":1,"output":2}},{"delay_ms":0},{"error":"x"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		script, err := simtest.ParseScript(data)
		if err != nil {
			return
		}
		_ = script.Model()
		if _, err := json.Marshal(script); err != nil {
			t.Fatalf("a parsed script does not marshal: %v", err)
		}
	})
}

func TestNewFuncModel_AnswersEveryCall(t *testing.T) {
	m := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text(req.Messages[len(req.Messages)-1].Text())}, nil
	})
	for _, word := range []string{"one", "two", "three"} {
		chunks, err := stream(t, m, &agentloop.Request{Messages: agentloop.History{agentloop.UserMessage(word)}})
		require.NoError(t, err)
		assert.Equal(t, agentloop.TextDelta{Text: word}, chunks[0])
	}
	assert.Equal(t, 3, m.Calls())
}
