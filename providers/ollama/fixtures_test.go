package ollama

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The expectations below are the figures of each fixture's sidecar
// (testdata/<name>.md, "Computed stats").
var fixtureCases = []struct {
	file           string
	think          ThinkMode
	textDeltas     int // "lines with content"
	reasoningDelts int // "lines with thinking"
	textPrefix     string
	reasoningPre   string
	calls          []agentloop.ToolCall
	usage          agentloop.Usage
	finish         agentloop.FinishReason
	kinds          []string
}{
	{
		file:       "rig-parallel-tool-calls.ndjson",
		textDeltas: 433, textPrefix: "Okay",
		calls: []agentloop.ToolCall{
			{ID: "call_REDACTED_1", Name: "lookup_harbor_label", Args: []byte(`{}`)},
			{ID: "call_REDACTED_2", Name: "lookup_orchard_label", Args: []byte(`{}`)},
		},
		usage: agentloop.Usage{Input: 262, Output: 473}, finish: agentloop.FinishToolCalls,
		kinds: []string{"text", "tool_call", "usage", "finish"},
	},
	{
		file:       "rig-same-tool-four-calls.ndjson",
		textDeltas: 468,
		calls: []agentloop.ToolCall{
			{ID: "call_REDACTED_4", Name: "add", Args: []byte(`{"x":2,"y":3}`)},
			{ID: "call_REDACTED_1", Name: "add", Args: []byte(`{"x":10,"y":20}`)},
			{ID: "call_REDACTED_2", Name: "add", Args: []byte(`{"x":2,"y":3}`)},
			{ID: "call_REDACTED_3", Name: "add", Args: []byte(`{"x":10,"y":20}`)},
		},
		usage: agentloop.Usage{Input: 236, Output: 619}, finish: agentloop.FinishToolCalls,
		kinds: []string{"text", "tool_call", "usage", "finish"},
	},
	{
		file:       "rig-text-done-reason-length.ndjson",
		textDeltas: 64,
		usage:      agentloop.Usage{Input: 18, Output: 64}, finish: agentloop.FinishLength,
		kinds: []string{"text", "usage", "finish"},
	},
	{
		file: "rig-thinking-and-tool-call.ndjson", think: ThinkOn,
		reasoningDelts: 546, reasoningPre: "Okay, the user wants me to call the `lookup_harbor_label` function exactly once.",
		calls: []agentloop.ToolCall{{ID: "call_REDACTED_1", Name: "lookup_harbor_label", Args: []byte(`{}`)}},
		usage: agentloop.Usage{Input: 195, Output: 575}, finish: agentloop.FinishToolCalls,
		kinds: []string{"reasoning", "reasoning_end", "tool_call", "usage", "finish"},
	},
	{
		file: "rig-thinking-tool-roundtrip.turn1.ndjson", think: ThinkOn,
		reasoningDelts: 494, reasoningPre: "Okay, the user is asking about the current weather in Tokyo, Japan",
		calls: []agentloop.ToolCall{{ID: "call_REDACTED_1", Name: "get_weather", Args: []byte(`{"city":"Tokyo"}`)}},
		usage: agentloop.Usage{Input: 234, Output: 517}, finish: agentloop.FinishToolCalls,
		kinds: []string{"reasoning", "reasoning_end", "tool_call", "usage", "finish"},
	},
	{
		file: "rig-thinking-tool-roundtrip.turn2.ndjson", think: ThinkOn,
		textDeltas: 56, reasoningDelts: 419, reasoningPre: "Okay, let's see. The user asked about the current weather in Tokyo",
		usage: agentloop.Usage{Input: 792, Output: 478}, finish: agentloop.FinishStop,
		kinds: []string{"reasoning", "reasoning_end", "text", "usage", "finish"},
	},
	{
		file:       "rig-tool-roundtrip.turn1.ndjson",
		textDeltas: 296, textPrefix: "Okay, the user wants me to calculate 2 minus 5.",
		calls: []agentloop.ToolCall{{ID: "call_REDACTED_1", Name: "subtract", Args: []byte(`{"x":2,"y":5}`)}},
		usage: agentloop.Usage{Input: 237, Output: 321}, finish: agentloop.FinishToolCalls,
		kinds: []string{"text", "tool_call", "usage", "finish"},
	},
	{
		file:       "rig-tool-roundtrip.turn2.ndjson",
		textDeltas: 191, textPrefix: "Okay, let me go through this step by step.",
		usage: agentloop.Usage{Input: 570, Output: 192}, finish: agentloop.FinishStop,
		kinds: []string{"text", "usage", "finish"},
	},
}

func TestOllama_RecordedStreamsYieldTheSidecarFigures(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		for _, tc := range fixtureCases {
			t.Run(strings.TrimSuffix(tc.file, ".ndjson"), func(t *testing.T) {
				srv := newNDJSONServer(t, providertest.Testdata(t, tc.file))
				m := rd.model(t, srv.URL, Config{Think: tc.think})
				got := stream(m, userRequest("hi"))

				require.NoError(t, got.Err)
				assert.Equal(t, tc.kinds, got.Kinds, "order of chunk kinds")
				assert.Equal(t, tc.textDeltas, got.TextDeltas, "text deltas")
				assert.Equal(t, tc.reasoningDelts, got.ReasoningDels, "reasoning deltas")
				assert.True(t, strings.HasPrefix(got.Text, tc.textPrefix), "text starts with %q: %.80q", tc.textPrefix, got.Text)
				assert.True(t, strings.HasPrefix(got.Reasoning, tc.reasoningPre), "reasoning starts with %q: %.80q", tc.reasoningPre, got.Reasoning)
				if tc.reasoningDelts > 0 {
					assert.Equal(t, 1, got.ReasoningEnds, "one reasoning block, closed once")
				}
				require.Len(t, got.Calls, len(tc.calls))
				for i, want := range tc.calls {
					assert.Equal(t, want.ID, got.Calls[i].ID, "call %d id", i)
					assert.Equal(t, want.Name, got.Calls[i].Name, "call %d name", i)
					assert.JSONEq(t, string(want.Args), string(got.Calls[i].Args), "call %d args", i)
				}
				assert.Equal(t, []agentloop.Usage{tc.usage}, got.Usage)
				assert.Equal(t, []agentloop.FinishReason{tc.finish}, got.Finish)
			})
		}
	})
}

// The official client keeps the top-level order of the arguments and decodes
// nested objects into Go maps, which marshal with sorted keys: either way the
// JSON is deterministic for a given stream.
func TestOllama_ArgumentsKeepTopLevelKeyOrderAndSortNestedKeys(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := newNDJSONServer(t, lines(
			`{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":0,"name":"f","arguments":{"zeta":1,"alpha":{"b":[1,2],"a":"x"}}}}]},"done":false}`,
			`{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}`,
		))
		m := rd.model(t, srv.URL, Config{})
		got := stream(m, userRequest("hi"))
		require.NoError(t, got.Err)
		require.Len(t, got.Calls, 1)
		assert.Equal(t, `{"zeta":1,"alpha":{"a":"x","b":[1,2]}}`, string(got.Calls[0].Args))
	})
}

func TestOllama_CallsWithoutIDsAreYieldedWithoutIDsAndTheLoopNamesThem(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		body := lines(
			`{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":0,"name":"a","arguments":{}}},{"function":{"index":1,"name":"b","arguments":{"k":"v"}}}]},"done":false}`,
			`{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":2,"name":"c"}}]},"done":false}`,
			`{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":7}`,
		)
		srv := newNDJSONServer(t, body)
		m := rd.model(t, srv.URL, Config{})
		req := &agentloop.Request{Turn: 3, Messages: agentloop.History{
			agentloop.UserMessage("q1"),
			{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("a1")}},
			agentloop.UserMessage("q2"),
			{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("a2")}},
			agentloop.UserMessage("q3"),
		}}
		got := stream(m, req)
		require.NoError(t, got.Err)
		assert.Equal(t, []agentloop.ToolCall{
			{ID: "", Name: "a", Args: []byte(`{}`)},
			{ID: "", Name: "b", Args: []byte(`{"k":"v"}`)},
			{ID: "", Name: "c", Args: []byte(`{}`)},
		}, got.Calls, "the provider invents no ids")
		assert.Equal(t, []agentloop.FinishReason{agentloop.FinishToolCalls}, got.Finish)
		assert.Equal(t, []agentloop.Usage{{Input: 5, Output: 7}}, got.Usage)

		// Through the loop, every call gets an id, distinct within the turn.
		tool := func(name string) *agentloop.Tool {
			tl, err := agentloop.NewRawTool(name, "", nil, func(context.Context, json.RawMessage) (string, error) { return "ok", nil })
			require.NoError(t, err)
			return tl
		}
		srv2 := newNDJSONServer(t, body, lines(`{"model":"m","message":{"role":"assistant","content":"done"},"done":true,"done_reason":"stop"}`))
		agent := &agentloop.Agent{Model: rd.model(t, srv2.URL, Config{}), Tools: []*agentloop.Tool{tool("a"), tool("b"), tool("c")}}
		last, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("q")}, nil))
		require.NoError(t, err)
		ids := map[string]bool{}
		for _, c := range last.(agentloop.Final).History[1].ToolCalls() {
			assert.NotEmpty(t, c.ID)
			ids[c.ID] = true
		}
		assert.Len(t, ids, 3)
	})
}

func TestOllama_ReasoningIsClosedWhenTextStartsInTheSameChunk(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := newNDJSONServer(t, lines(
			`{"model":"m","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}`,
			`{"model":"m","message":{"role":"assistant","content":"Hi","thinking":" ok"},"done":false}`,
			`{"model":"m","message":{"role":"assistant","content":"!"},"done":true,"done_reason":"stop"}`,
		))
		m := rd.model(t, srv.URL, Config{})
		got := stream(m, userRequest("hi"))
		require.NoError(t, got.Err)
		assert.Equal(t, []string{"reasoning", "reasoning_end", "text", "usage", "finish"}, got.Kinds)
		assert.Equal(t, "hmm ok", got.Reasoning)
		assert.Equal(t, "Hi!", got.Text)
	})
}

func TestOllama_ReasoningOnlyStreamIsClosedAtTheEnd(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		srv := newNDJSONServer(t, lines(
			`{"model":"m","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}`,
			`{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"length"}`,
		))
		m := rd.model(t, srv.URL, Config{})
		got := stream(m, userRequest("hi"))
		require.NoError(t, got.Err)
		assert.Equal(t, []string{"reasoning", "reasoning_end", "usage", "finish"}, got.Kinds)
		assert.Equal(t, []agentloop.FinishReason{agentloop.FinishLength}, got.Finish)
	})
}

func TestFinishReason_MapsOllamasDoneReasons(t *testing.T) {
	for _, tc := range []struct {
		reason string
		calls  bool
		want   agentloop.FinishReason
	}{
		{"stop", false, agentloop.FinishStop},
		{"stop", true, agentloop.FinishToolCalls},
		{"", false, agentloop.FinishStop},
		{"", true, agentloop.FinishToolCalls},
		{"length", false, agentloop.FinishLength},
		{"length", true, agentloop.FinishToolCalls}, // Ollama sends only whole calls
		{"load", false, agentloop.FinishOther},
		{"unload", false, agentloop.FinishOther},
		{"something-new", true, agentloop.FinishOther},
	} {
		assert.Equal(t, tc.want, finishReason(tc.reason, tc.calls), "done_reason %q, calls %v", tc.reason, tc.calls)
	}
}

func TestOllama_ModelIsSafeForConcurrentStreams(t *testing.T) {
	forEachReader(t, func(t *testing.T, rd reader) {
		const runs = 6
		body := providertest.Testdata(t, "rig-same-tool-four-calls.ndjson")
		bodies := make([][]byte, runs)
		for i := range bodies {
			bodies[i] = body
		}
		srv := newNDJSONServer(t, bodies...)
		m := rd.model(t, srv.URL, Config{Options: map[string]any{"top_k": 1}})

		results := make(chan collected, runs)
		for range runs {
			go func() { results <- stream(m, userRequest("hi")) }()
		}
		for range runs {
			got := <-results
			require.NoError(t, got.Err)
			assert.Len(t, got.Calls, 4)
			assert.Equal(t, []agentloop.FinishReason{agentloop.FinishToolCalls}, got.Finish)
		}
	})
}
