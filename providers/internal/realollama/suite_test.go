package realollama_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/fallback"
	"github.com/agentloop/agentloop/providers/internal/tinyollama"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tiny model's reply is 11 tokens and the end-of-turn token.
const answerTokens = 12

func TestText_TheWholeAnswerWithUsageAndStop(t *testing.T) {
	inputs := map[string]int{}
	eachProvider(t, func(t *testing.T, p provider, root string) {
		agent := &agentloop.Agent{Model: p.model(t, root, tinyollama.Tiny, false), System: "Be brief."}
		r := stream(t, agent)
		require.NoError(t, r.Err)
		require.NotNil(t, r.Final)
		assert.Equal(t, tinyollama.Answer, r.Final.Text)
		assert.Equal(t, tinyollama.Answer, r.Text)
		assert.Equal(t, []agentloop.FinishReason{agentloop.FinishStop}, r.finishes())
		assert.Equal(t, answerTokens, r.Final.Usage.Output)
		assert.Positive(t, r.Final.Usage.Input)
		inputs[p.name] = r.Final.Usage.Input
	})
	assertSame(t, inputs, "input tokens: the system prompt and message are rendered alike")
}

func TestToolLoop_TheServersCallRunsAndTheModelAnswersFromItsResult(t *testing.T) {
	inputs := map[string]int{}
	eachProvider(t, func(t *testing.T, p provider, root string) {
		var w weatherTool
		agent := &agentloop.Agent{Model: p.model(t, root, tinyollama.Tiny, false), Tools: []*agentloop.Tool{w.tool(t)}}
		r := stream(t, agent)
		require.NoError(t, r.Err)
		require.NotNil(t, r.Final)
		require.Len(t, r.Calls, 1)
		c := r.Calls[0].Call
		assert.Equal(t, tinyollama.CallName, c.Name)
		jsonEq(t, tinyollama.CallArgs, c.Args)
		assert.True(t, strings.HasPrefix(c.ID, "call_"), "the server's id is kept: %q", c.ID)
		assert.Equal(t, []string{"Paris"}, w.called())
		require.Len(t, r.Results, 1)
		assert.Equal(t, "sunny in Paris", r.Results[0].Result.Content)
		assert.Equal(t, []agentloop.FinishReason{agentloop.FinishToolCalls, agentloop.FinishStop}, r.finishes())
		assert.Equal(t, 2, r.Final.Turns)
		assert.Equal(t, tinyollama.Answer, r.Final.Text)
		require.Len(t, r.Final.History, 4, "user, call, result, answer")
		inputs[p.name] = r.TurnEnds[1].Usage.Input
	})
	assertSame(t, inputs, "second-turn input tokens: the call and its result are sent back alike")
}

func TestParallelCalls_BothRunInOrderAndBothResultsGoBack(t *testing.T) {
	inputs := map[string]int{}
	eachProvider(t, func(t *testing.T, p provider, root string) {
		var w weatherTool
		agent := &agentloop.Agent{Model: p.model(t, root, tinyollama.TinyParallel, false), Tools: []*agentloop.Tool{w.tool(t)}}
		r := stream(t, agent)
		require.NoError(t, r.Err)
		require.NotNil(t, r.Final)
		require.Len(t, r.Calls, 2)
		jsonEq(t, tinyollama.CallArgs, r.Calls[0].Call.Args)
		jsonEq(t, tinyollama.SecondCallArgs, r.Calls[1].Call.Args)
		assert.NotEqual(t, r.Calls[0].Call.ID, r.Calls[1].Call.ID)
		assert.ElementsMatch(t, []string{"Paris", "Rome"}, w.called())
		require.Len(t, r.Results, 2)
		assert.Equal(t, "sunny in Paris", r.Results[0].Result.Content)
		assert.Equal(t, "sunny in Rome", r.Results[1].Result.Content)
		assert.Equal(t, tinyollama.Answer, r.Final.Text)
		inputs[p.name] = r.TurnEnds[1].Usage.Input
	})
	assertSame(t, inputs, "second-turn input tokens: two calls and two results are sent back alike")
}

func TestLength_MidTextEndsTheRunWithTheTextSoFar(t *testing.T) {
	eachProvider(t, func(t *testing.T, p provider, root string) {
		agent := &agentloop.Agent{Model: p.model(t, root, tinyollama.Tiny, false), Settings: agentloop.Settings{MaxTokens: 5}}
		r := stream(t, agent)
		require.NoError(t, r.Err)
		require.NotNil(t, r.Final)
		assert.Equal(t, "The tiny model says hello", r.Final.Text)
		assert.Equal(t, []agentloop.FinishReason{p.lengthFinish()}, r.finishes())
		assert.Equal(t, 5, r.Final.Usage.Output)
	})
}

// The limit falls on the token that completes the call (a call is three
// tokens): Ollama's native API says "length", its compatible APIs say the
// calls ended the turn. Every provider runs the call.
func TestLength_RightAfterAWholeCallRunsTheCall(t *testing.T) {
	eachProvider(t, func(t *testing.T, p provider, root string) {
		var w weatherTool
		agent := &agentloop.Agent{Model: p.model(t, root, tinyollama.Tiny, false), Tools: []*agentloop.Tool{w.tool(t)}, Settings: agentloop.Settings{MaxTokens: 3}}
		r := stream(t, agent)
		require.NoError(t, r.Err)
		require.NotNil(t, r.Final)
		assert.Equal(t, []string{"Paris"}, w.called())
		assert.Equal(t, []agentloop.FinishReason{agentloop.FinishToolCalls, p.lengthFinish()}, r.finishes())
		assert.Equal(t, "The tiny model", r.Final.Text, "the answer after the call is cut at 3 tokens too")
	})
}

// The limit falls inside the call: Ollama's parsers drop a call they could
// not parse whole, so every provider sees a turn cut by length with no text
// and no calls, and the run ends with an empty answer (the SDK cannot know
// a call was being written). Callers that care check the finish reason.
func TestLength_MidCallTheServerDropsTheCall(t *testing.T) {
	eachProvider(t, func(t *testing.T, p provider, root string) {
		var w weatherTool
		agent := &agentloop.Agent{Model: p.model(t, root, tinyollama.Tiny, false), Tools: []*agentloop.Tool{w.tool(t)}, Settings: agentloop.Settings{MaxTokens: 2}}
		r := stream(t, agent)
		require.NoError(t, r.Err)
		require.NotNil(t, r.Final)
		assert.Empty(t, w.called())
		assert.Empty(t, r.Calls)
		assert.Equal(t, "", r.Final.Text)
		assert.Equal(t, []agentloop.FinishReason{p.lengthFinish()}, r.finishes())
	})
}

// The Responses API has no stop sequences: that provider refuses them
// before sending anything.
func TestStopSequence_EndsTheTextBeforeIt(t *testing.T) {
	eachProvider(t, func(t *testing.T, p provider, root string) {
		agent := &agentloop.Agent{Model: p.model(t, root, tinyollama.Tiny, false), Settings: agentloop.Settings{Stop: []string{" hello"}}}
		r := stream(t, agent)
		if !p.hasStop {
			assert.ErrorContains(t, r.Err, "no stop sequences")
			return
		}
		require.NoError(t, r.Err)
		require.NotNil(t, r.Final)
		assert.Equal(t, "The tiny model says", r.Final.Text)
		assert.Equal(t, []agentloop.FinishReason{agentloop.FinishStop}, r.finishes())
	})
}

func TestUnknownModel_IsErrModelNotFound(t *testing.T) {
	eachProvider(t, func(t *testing.T, p provider, root string) {
		r := stream(t, &agentloop.Agent{Model: p.model(t, root, "no-such-model", false)})
		var te *agentloop.TurnError
		require.ErrorAs(t, r.Err, &te)
		assert.Equal(t, 1, te.Turn)
		var ae *providers.APIError
		require.ErrorAs(t, r.Err, &ae)
		assert.Equal(t, 404, ae.StatusCode)
		assert.Equal(t, p.apiName, ae.Provider)
		assert.ErrorIs(t, r.Err, providers.ErrModelNotFound)
		assert.Contains(t, r.Err.Error(), "no-such-model")
	})
}

func TestModelWithoutToolSupport_RefusesToolsWithErrInvalidRequest(t *testing.T) {
	eachProvider(t, func(t *testing.T, p provider, root string) {
		var w weatherTool
		r := stream(t, &agentloop.Agent{Model: p.model(t, root, tinyollama.TinyNoTools, false), Tools: []*agentloop.Tool{w.tool(t)}})
		var ae *providers.APIError
		require.ErrorAs(t, r.Err, &ae)
		assert.Equal(t, 400, ae.StatusCode)
		assert.ErrorIs(t, r.Err, providers.ErrInvalidRequest)
		assert.Contains(t, ae.Message, "does not support tools")
		assert.Empty(t, w.called())

		// Without tools the same model answers.
		r = stream(t, &agentloop.Agent{Model: p.model(t, root, tinyollama.TinyNoTools, false)})
		require.NoError(t, r.Err)
		assert.Equal(t, tinyollama.Answer, r.Final.Text)
	})
}

// Ollama's native and Chat Completions APIs refuse thinking for a model
// that cannot think; its Anthropic-compatible API relaxes the request to no
// thinking, and its Responses API ignores the reasoning effort, and both
// answer (documented in the providers' packages).
func TestThinkingOnAModelWithoutIt_IsRefusedByTheNativeAndChatAPIs(t *testing.T) {
	eachProvider(t, func(t *testing.T, p provider, root string) {
		r := stream(t, &agentloop.Agent{Model: p.model(t, root, tinyollama.Tiny, true)})
		if !p.refusesThinking {
			require.NoError(t, r.Err)
			assert.Equal(t, tinyollama.Answer, r.Final.Text)
			return
		}
		var ae *providers.APIError
		require.ErrorAs(t, r.Err, &ae)
		assert.ErrorIs(t, r.Err, providers.ErrInvalidRequest)
		assert.Contains(t, ae.Message, "does not support thinking")
	})
}

// tiny-loop writes the same token until Ollama's repeat limit ends the 200
// stream without its final event: every provider yields the text so far and
// an error that wraps io.ErrUnexpectedEOF and says the server stopped (not
// that a connection was lost).
func TestRunawayGeneration_TheServerStopsItAndTheErrorSaysSo(t *testing.T) {
	eachProvider(t, func(t *testing.T, p provider, root string) {
		r := stream(t, &agentloop.Agent{Model: p.model(t, root, tinyollama.TinyLoop, false)})
		require.Error(t, r.Err)
		assert.ErrorIs(t, r.Err, io.ErrUnexpectedEOF)
		var te *agentloop.TurnError
		require.ErrorAs(t, r.Err, &te)
		assert.Equal(t, 31, r.TextDeltas, "Ollama stops after 30 repeats of the first token")
		assert.Equal(t, strings.Repeat(tinyollama.Loop, 31), r.Text)
		assert.NotContains(t, r.Err.Error(), "connection lost")
		assert.Contains(t, r.Err.Error(), "server")
	})
}

// A consumer that stops ranging makes the provider close its connection
// while the server is still generating (tiny-babble never stops by itself),
// and the server is free for the next request at once.
func TestEarlyBreak_ClosesTheConnectionWhileTheServerStillStreams(t *testing.T) {
	eachProvider(t, func(t *testing.T, p provider, root string) {
		px := newProxy(t, strings.TrimPrefix(root, "http://"))
		agent := &agentloop.Agent{Model: p.model(t, "http://"+px.addr(), tinyollama.TinyBabble, false), Settings: agentloop.Settings{MaxTokens: 1000}}
		ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
		defer cancel()
		deltas := 0
		for item, err := range agent.Stream(ctx, agentloop.History{agentloop.UserMessage("hi")}, nil) {
			require.NoError(t, err)
			if _, ok := item.(agentloop.TextDelta); ok {
				deltas++
				if deltas == 3 {
					break
				}
			}
		}
		select {
		case side := <-px.firstClosed:
			assert.Equal(t, "client", side, "the provider closed the connection before the server ended its stream")
		case <-ctx.Done():
			t.Fatalf("neither side closed the connection: %v\nserver log:\n%s", ctx.Err(), serverLog())
		}

		r := stream(t, &agentloop.Agent{Model: p.model(t, root, tinyollama.TinyBabble, false), Settings: agentloop.Settings{MaxTokens: 4}})
		require.NoError(t, r.Err)
		assert.Equal(t, " la li la li", r.Final.Text)
	})
}

func TestUnreachableServer_IsErrUnreachableNamingTheURLOnce(t *testing.T) {
	for _, p := range allProviders {
		t.Run(p.name, func(t *testing.T) {
			// The providers retry a refused connection with backoff; in a
			// synctest bubble the backoff runs on fake time.
			synctest.Test(t, func(t *testing.T) {
				r := stream(t, &agentloop.Agent{Model: p.model(t, "http://127.0.0.1:1", tinyollama.Tiny, false)})
				assert.ErrorIs(t, r.Err, providers.ErrUnreachable)
				assert.Equal(t, 1, strings.Count(r.Err.Error(), "127.0.0.1:1"+p.endpoint), "%v", r.Err)
			})
		})
	}
}

// assertSame checks that every provider saw the same value.
func assertSame(t *testing.T, byProvider map[string]int, what string) {
	t.Helper()
	if len(byProvider) != len(allProviders) {
		return // a subtest failed before recording
	}
	want := byProvider[allProviders[0].name]
	for name, got := range byProvider {
		assert.Equal(t, want, got, "%s: %s differs from %s", what, name, allProviders[0].name)
	}
}

// proxy forwards one TCP connection at a time to target and reports which
// side closed first: "client" or "server".
type proxy struct {
	l           net.Listener
	target      string
	firstClosed chan string
	wg          sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	px := &proxy{l: l, target: target, firstClosed: make(chan string, 1)}
	px.wg.Add(1)
	go px.serve()
	t.Cleanup(func() {
		l.Close()
		px.wg.Wait()
	})
	return px
}

func (px *proxy) addr() string { return px.l.Addr().String() }

func (px *proxy) serve() {
	defer px.wg.Done()
	for {
		c, err := px.l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", px.target)
		if err != nil {
			c.Close()
			continue
		}
		var once sync.Once
		report := func(side string) {
			once.Do(func() {
				select {
				case px.firstClosed <- side:
				default:
				}
			})
		}
		px.wg.Add(2)
		go func() {
			defer px.wg.Done()
			_, _ = io.Copy(up, c)
			report("client")
			up.Close()
		}()
		go func() {
			defer px.wg.Done()
			_, err := io.Copy(c, up)
			if !errors.Is(err, net.ErrClosed) {
				report("server")
			}
			c.Close()
		}()
	}
}

type forecast struct {
	City string `json:"city" jsonschema:"enum=Paris,enum=Rome"`
	Temp int    `json:"temp"`
}

// Structured output: Ollama's native and OpenAI-compatible APIs turn the
// schema into a grammar that constrains the tiny model, whose biases then
// write short valid JSON. Ollama's Anthropic-compatible API ignores
// output_config, so the model writes its sentence, is told what failed,
// writes it again, and Structured gives up with an OutputError.
func TestStructuredOutput_TheServersGrammarConstrainsTheModel(t *testing.T) {
	eachProvider(t, func(t *testing.T, p provider, root string) {
		zero := 0.0
		agent := &agentloop.Agent{Model: p.model(t, root, tinyollama.Tiny, false), Settings: agentloop.Settings{Temperature: &zero}}
		ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
		defer cancel()
		got, final, err := agentloop.Structured[forecast](ctx, agent, agentloop.History{agentloop.UserMessage("Weather in Paris?")}, nil)
		if p.name == "anthropic" {
			var oe *agentloop.OutputError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tinyollama.Answer, oe.Text)
			require.Len(t, oe.History, 4, "the answer, the complaint, the second answer")
			assert.Contains(t, oe.History[2].Text(), "not valid JSON")
			return
		}
		require.NoError(t, err)
		assert.Equal(t, forecast{City: "Paris", Temp: 4}, got)
		assert.Equal(t, 1, final.Turns, "valid at the first try")
		assert.JSONEq(t, `{"city":"Paris","temp":4}`, final.Text)
	})
}

// A fallback from a server that is down to the real one answers with the
// real one's reply.
func TestFallback_FromADownServerToTheRealOne(t *testing.T) {
	root := server(t).URL
	down, err := openai.New(openai.Config{Model: tinyollama.Tiny, BaseURL: "http://127.0.0.1:1/v1", MaxAttempts: 1})
	require.NoError(t, err)
	var failed []int
	m, err := fallback.New(fallback.Config{
		Models:     []agentloop.Model{down, allProviders[0].model(t, root, tinyollama.Tiny, false)},
		OnFallback: func(_ context.Context, i int, _ error) { failed = append(failed, i) },
	})
	require.NoError(t, err)
	r := stream(t, &agentloop.Agent{Model: m})
	require.NoError(t, r.Err)
	assert.Equal(t, tinyollama.Answer, r.Final.Text)
	assert.Equal(t, []int{0}, failed)
}
