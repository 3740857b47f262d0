package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/fallback"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake yields chunks, then err (if any), and counts its calls and whether
// its consumer stopped early.
type fake struct {
	name    string
	chunks  []agentloop.Chunk
	err     error
	calls   atomic.Int32
	stopped atomic.Bool
}

func (f *fake) Stream(_ context.Context, _ *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	return func(yield func(agentloop.Chunk, error) bool) {
		f.calls.Add(1)
		for _, c := range f.chunks {
			if !yield(c, nil) {
				f.stopped.Store(true)
				return
			}
		}
		if f.err != nil {
			yield(nil, f.err)
		}
	}
}

func (f *fake) ModelInfo() agentloop.ModelInfo {
	return agentloop.ModelInfo{Provider: "fake", Model: f.name}
}

func text(s string) []agentloop.Chunk {
	return []agentloop.Chunk{agentloop.TextDelta{Text: s}, agentloop.Finish{Reason: agentloop.FinishStop}}
}

func run(t *testing.T, m agentloop.Model) (string, error) {
	t.Helper()
	var out string
	for c, err := range m.Stream(context.Background(), &agentloop.Request{}) {
		if err != nil {
			return out, err
		}
		if d, ok := c.(agentloop.TextDelta); ok {
			out += d.Text
		}
	}
	return out, nil
}

func newModel(t *testing.T, cfg fallback.Config) *fallback.Model {
	t.Helper()
	m, err := fallback.New(cfg)
	require.NoError(t, err)
	return m
}

func unreachable() error {
	return fmt.Errorf("openai: cannot reach http://127.0.0.1:1/v1/chat/completions: %w", providers.ErrUnreachable)
}

func TestFallback_ErrorsWorthItBeforeTheFirstChunkMoveToTheNextModel(t *testing.T) {
	for name, err := range map[string]error{
		"unreachable":              unreachable(),
		"overloaded (503)":         &providers.APIError{Provider: "openai", StatusCode: 503, Message: "busy"},
		"overloaded (529)":         &providers.APIError{Provider: "anthropic", StatusCode: 529, Message: "Overloaded"},
		"overloaded event":         &providers.APIError{Provider: "anthropic", Type: "overloaded_error", Message: "Overloaded"},
		"rate limited, no wait":    &providers.APIError{Provider: "openai", StatusCode: 429},
		"rate limited, long wait":  &providers.APIError{Provider: "openai", StatusCode: 429, RetryAfter: time.Hour},
		"wrapped by a turn prefix": fmt.Errorf("turn 1: %w", &providers.APIError{StatusCode: 502}),
	} {
		t.Run(name, func(t *testing.T) {
			first := &fake{name: "first", err: err}
			second := &fake{name: "second", chunks: text("from the second")}
			var fellBack []int
			var seen error
			m := newModel(t, fallback.Config{
				Models: []agentloop.Model{first, second},
				OnFallback: func(_ context.Context, failed int, err error) {
					fellBack = append(fellBack, failed)
					seen = err
				},
			})
			got, gotErr := run(t, m)
			require.NoError(t, gotErr)
			assert.Equal(t, "from the second", got)
			assert.Equal(t, []int{0}, fellBack)
			assert.Same(t, err, seen)
		})
	}
}

func TestFallback_ErrorsOfTheRequestItselfAreReturnedWithoutTryingTheNext(t *testing.T) {
	for name, err := range map[string]error{
		"bad request":           &providers.APIError{StatusCode: 400, Message: "bad schema"},
		"auth":                  &providers.APIError{StatusCode: 401},
		"unknown model":         &providers.APIError{StatusCode: 404},
		"rate limited, 2s wait": &providers.APIError{StatusCode: 429, RetryAfter: 2 * time.Second},
		"cancelled":             fmt.Errorf("openai: request cancelled: %w", context.Canceled),
		"plain":                 errors.New("openai: malformed stream event"),
	} {
		t.Run(name, func(t *testing.T) {
			second := &fake{chunks: text("no")}
			m := newModel(t, fallback.Config{Models: []agentloop.Model{&fake{err: err}, second}})
			_, gotErr := run(t, m)
			assert.Same(t, err, gotErr)
			assert.Zero(t, second.calls.Load())
		})
	}
}

func TestFallback_AnErrorAfterTheFirstChunkIsPassedOnAsItIs(t *testing.T) {
	err := &providers.APIError{StatusCode: 503}
	first := &fake{chunks: []agentloop.Chunk{agentloop.TextDelta{Text: "Hel"}}, err: err}
	second := &fake{chunks: text("Hello")}
	got, gotErr := run(t, newModel(t, fallback.Config{Models: []agentloop.Model{first, second}}))
	assert.Equal(t, "Hel", got, "no mix of two models' replies")
	assert.Same(t, err, gotErr)
	assert.Zero(t, second.calls.Load())
}

func TestFallback_WhenEveryModelFailsTheErrorHoldsEachInOrder(t *testing.T) {
	e1, e2, e3 := unreachable(), &providers.APIError{StatusCode: 503, Message: "busy"}, &providers.APIError{StatusCode: 400, Message: "bad"}
	third := &fake{err: e3}
	fourth := &fake{chunks: text("never")}
	_, err := run(t, newModel(t, fallback.Config{Models: []agentloop.Model{&fake{err: e1}, &fake{err: e2}, third, fourth}}))
	var fe *fallback.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, []error{e1, e2, e3}, fe.Errs, "the 400 ends the chain")
	assert.ErrorIs(t, err, providers.ErrUnreachable)
	assert.ErrorIs(t, err, providers.ErrOverloaded)
	assert.ErrorIs(t, err, providers.ErrInvalidRequest)
	assert.Equal(t, "fallback: 3 models failed; model 0: "+e1.Error()+"; model 1: "+e2.Error()+"; model 2: "+e3.Error(), err.Error())
	assert.Zero(t, fourth.calls.Load())
}

func TestFallback_TheLastModelsLoneErrorIsReturnedAsItIs(t *testing.T) {
	err := unreachable()
	_, got := run(t, newModel(t, fallback.Config{Models: []agentloop.Model{&fake{err: err}}}))
	assert.Same(t, err, got)
}

func TestFallback_ConfigRulesReplaceTheDefault(t *testing.T) {
	bad := &providers.APIError{StatusCode: 400}
	m := newModel(t, fallback.Config{
		Models:         []agentloop.Model{&fake{err: bad}, &fake{chunks: text("ok")}},
		ShouldFallBack: func(err error) bool { return errors.Is(err, providers.ErrInvalidRequest) },
	})
	got, err := run(t, m)
	require.NoError(t, err)
	assert.Equal(t, "ok", got)

	limited := &providers.APIError{StatusCode: 429, RetryAfter: time.Second}
	m = newModel(t, fallback.Config{Models: []agentloop.Model{&fake{err: limited}, &fake{chunks: text("ok")}}, MaxRetryAfter: -1})
	got, err = run(t, m)
	require.NoError(t, err)
	assert.Equal(t, "ok", got, "a negative MaxRetryAfter falls back on every rate limit")
}

func TestFallback_StoppingEarlyStopsTheModelInUse(t *testing.T) {
	first := &fake{chunks: []agentloop.Chunk{agentloop.TextDelta{Text: "a"}, agentloop.TextDelta{Text: "b"}}}
	for range newModel(t, fallback.Config{Models: []agentloop.Model{first}}).Stream(context.Background(), &agentloop.Request{}) {
		break
	}
	assert.True(t, first.stopped.Load())
}

func TestFallback_ADoneContextIsNotAReasonToTryTheNext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	second := &fake{chunks: text("no")}
	cancelledAfterDial := &fake{err: unreachable()} // the dial failed because the context ended
	var err error
	for _, e := range newModel(t, fallback.Config{Models: []agentloop.Model{cancelledAfterDial, second}}).Stream(ctx, &agentloop.Request{}) {
		err = e
	}
	assert.ErrorIs(t, err, providers.ErrUnreachable)
	assert.Zero(t, second.calls.Load())
}

func TestNew_RefusesNoModelsAndNilModels(t *testing.T) {
	_, err := fallback.New(fallback.Config{})
	assert.EqualError(t, err, "fallback: Config.Models is empty")
	_, err = fallback.New(fallback.Config{Models: []agentloop.Model{&fake{}, nil}})
	assert.EqualError(t, err, "fallback: Config.Models[1] is nil")
}

func TestFallback_ModelInfoNamesTheFirstModel(t *testing.T) {
	m := newModel(t, fallback.Config{Models: []agentloop.Model{&fake{name: "primary"}, &fake{name: "backup"}}})
	assert.Equal(t, agentloop.ModelInfo{Provider: "fake", Model: "primary"}, m.ModelInfo())
	anon := newModel(t, fallback.Config{Models: []agentloop.Model{agentloop.ModelFunc(func(context.Context, *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(func(agentloop.Chunk, error) bool) {}
	})}})
	assert.Zero(t, anon.ModelInfo())
}

// Through the agent with real providers: the first server cannot be
// reached, the second answers.
func TestFallback_AnAgentRunAnswersFromTheSecondProviderWhenTheFirstIsDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + l.Addr().String() + "/v1"
	l.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi from the backup.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	primary, err := openai.New(openai.Config{Model: "primary", BaseURL: down, MaxAttempts: 1})
	require.NoError(t, err)
	backup, err := openai.New(openai.Config{Model: "backup", BaseURL: up.URL})
	require.NoError(t, err)

	agent := &agentloop.Agent{Model: newModel(t, fallback.Config{Models: []agentloop.Model{primary, backup}})}
	got, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("hi")}, nil))
	require.NoError(t, err)
	assert.Equal(t, "Hi from the backup.", got)
}
