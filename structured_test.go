package agentloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

type forecast struct {
	City string `json:"city" jsonschema:"enum=Paris,enum=Rome"`
	Temp int    `json:"temp"`
}

// replies is a Model that answers each call with the next text and records
// the requests.
type replies struct {
	mu       sync.Mutex
	texts    []string
	requests []*agentloop.Request
}

func (r *replies) Stream(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	return func(yield func(agentloop.Chunk, error) bool) {
		r.mu.Lock()
		n := len(r.requests)
		r.requests = append(r.requests, req)
		r.mu.Unlock()
		if n >= len(r.texts) {
			yield(nil, errors.New("no more replies"))
			return
		}
		if yield(agentloop.TextDelta{Text: r.texts[n]}, nil) {
			yield(agentloop.Usage{Input: 10, Output: 5}, nil)
		}
	}
}

// design.md §11: Structured asks for T's schema and decodes a valid answer.
func TestStructured_DecodesAValidAnswerAndAsksForTheTypesSchema(t *testing.T) {
	m := &replies{texts: []string{`{"city":"Paris","temp":4}`}}
	agent := &agentloop.Agent{Model: m, Settings: agentloop.Settings{MaxTokens: 50}}
	got, final, err := agentloop.Structured[forecast](context.Background(), agent, user("Weather?"), nil)
	require.NoError(t, err)
	assert.Equal(t, forecast{City: "Paris", Temp: 4}, got)
	assert.Equal(t, 1, final.Turns)

	require.Len(t, m.requests, 1)
	s := m.requests[0].Settings
	assert.Equal(t, 50, s.MaxTokens, "the agent's settings are kept")
	require.NotNil(t, s.ResponseFormat)
	assert.Equal(t, "forecast", s.ResponseFormat.Name)
	want, err := agentloop.SchemaFor[forecast]()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(s.ResponseFormat.Schema))
	assert.Nil(t, agent.Settings.ResponseFormat, "the agent is not modified")
}

// design.md §11: a bad answer is explained to the model, which answers once more.
func TestStructured_TellsTheModelWhatFailedAndItsSecondAnswerCounts(t *testing.T) {
	m := &replies{texts: []string{`{"city":"Berlin","temp":4}`, "```json\n{\"city\":\"Rome\",\"temp\":21}\n```"}}
	agent := &agentloop.Agent{Model: m}
	got, final, err := agentloop.Structured[forecast](context.Background(), agent, user("Weather?"), nil)
	require.NoError(t, err)
	assert.Equal(t, forecast{City: "Rome", Temp: 21}, got, "a code fence around the JSON is accepted")
	assert.Equal(t, 2, final.Turns, "turns of both runs")
	assert.Equal(t, agentloop.Usage{Input: 20, Output: 10}, final.Usage, "usage of both runs")

	require.Len(t, m.requests, 2)
	retry := m.requests[1].Messages
	require.Len(t, retry, 3, "user, the first answer, the complaint")
	assert.Equal(t, `{"city":"Berlin","temp":4}`, retry[1].Text())
	assert.Equal(t, agentloop.RoleUser, retry[2].Role)
	assert.Contains(t, retry[2].Text(), "Your answer cannot be used: the answer breaks the schema")
	assert.Contains(t, retry[2].Text(), "/properties/city: enum: Berlin does not equal any of: [Paris Rome]", "the model is told what failed")
	require.Len(t, final.History, 4)
}

// design.md §11: a second bad answer is an *OutputError with the text and the history.
func TestStructured_ASecondBadAnswerIsAnOutputErrorWithTheHistory(t *testing.T) {
	m := &replies{texts: []string{"It is sunny.", `{"city":"Paris"}`}}
	_, _, err := agentloop.Structured[forecast](context.Background(), &agentloop.Agent{Model: m}, user("Weather?"), nil)
	var oe *agentloop.OutputError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, `{"city":"Paris"}`, oe.Text)
	assert.Contains(t, oe.Err.Error(), "temp", "the missing property is named")
	assert.Len(t, oe.History, 4)
	assert.Contains(t, m.requests[1].Messages[2].Text(), "not valid JSON")
	assert.Len(t, m.requests, 2, "one retry only")
}

func TestStructured_RunSettingsAreKeptAndTheirFormatReplaced(t *testing.T) {
	m := &replies{texts: []string{`{"city":"Paris","temp":4}`}}
	other := &agentloop.ResponseFormat{Name: "other", Schema: json.RawMessage(`{"type":"object"}`)}
	opts := &agentloop.RunOptions{Settings: &agentloop.Settings{MaxTokens: 7, ResponseFormat: other}}
	_, _, err := agentloop.Structured[forecast](context.Background(), &agentloop.Agent{Model: m}, user("Weather?"), opts)
	require.NoError(t, err)
	s := m.requests[0].Settings
	assert.Equal(t, 7, s.MaxTokens)
	assert.Equal(t, "forecast", s.ResponseFormat.Name)
	assert.Same(t, other, opts.Settings.ResponseFormat, "the caller's options are not modified")
}

func TestStructured_RunErrorsAndPendingRunsAreReturned(t *testing.T) {
	_, _, err := agentloop.Structured[forecast](context.Background(), &agentloop.Agent{Model: &replies{}}, user("Weather?"), nil)
	assert.ErrorContains(t, err, "no more replies")

	ask := agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			yield(agentloop.ToolCall{ID: "c1", Name: "confirm", Args: json.RawMessage(`{}`)}, nil)
		}
	})
	confirm, err := agentloop.NewClientTool("confirm", "", nil)
	require.NoError(t, err)
	_, _, err = agentloop.Structured[forecast](context.Background(), &agentloop.Agent{Model: ask, Tools: []*agentloop.Tool{confirm}}, user("Weather?"), nil)
	assert.ErrorIs(t, err, agentloop.ErrPending)
}

func TestStructured_ATypeThatIsNotAStructIsRefused(t *testing.T) {
	_, _, err := agentloop.Structured[[]string](context.Background(), &agentloop.Agent{Model: &replies{}}, user("x"), nil)
	assert.ErrorContains(t, err, "not a struct")
}

func TestResponseFormatFor_NamesTheFormatAfterTheType(t *testing.T) {
	f, err := agentloop.ResponseFormatFor[*forecast]()
	require.NoError(t, err)
	assert.Equal(t, "forecast", f.Name)
	assert.Equal(t, "forecast", f.FormatName())
	assert.Equal(t, "response", (&agentloop.ResponseFormat{}).FormatName())
	type weird struct{ A int }
	g, err := agentloop.ResponseFormatFor[weird]()
	require.NoError(t, err)
	assert.Equal(t, "weird", g.Name)
}

// Structured asks for a JSON answer of a Go type and decodes it.
func ExampleStructured() {
	// A model that answers with JSON (a provider would be asked for it
	// through Settings.ResponseFormat).
	model := agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			fmt.Println("asked for:", req.Settings.ResponseFormat.Name)
			yield(agentloop.TextDelta{Text: `{"city":"Paris","temp":4}`}, nil)
		}
	})
	type Forecast struct {
		City string `json:"city"`
		Temp int    `json:"temp"`
	}
	f, _, err := agentloop.Structured[Forecast](context.Background(), &agentloop.Agent{Model: model},
		agentloop.History{agentloop.UserMessage("What is the weather in Paris?")}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d°C\n", f.City, f.Temp)
	// Output:
	// asked for: Forecast
	// Paris: 4°C
}
