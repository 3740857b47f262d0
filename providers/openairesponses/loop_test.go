package openairesponses_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/agentloop/agentloop/providers/openairesponses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// normalize keeps what the API acts on of a request's input items: their
// type, and per type the role and text, the reasoning item's id, summary
// and encrypted content, the call's id, name and arguments (as JSON), and
// the output's call id and text. Item ids of calls and messages, and
// statuses, which the history does not keep, are left out.
func normalize(body map[string]any) []string {
	var out []string
	items, _ := body["input"].([]any)
	for _, x := range items {
		it := x.(map[string]any)
		typ, _ := it["type"].(string)
		if typ == "" && it["role"] != nil {
			typ = "message"
		}
		var line string
		switch typ {
		case "message":
			line = fmt.Sprintf("message %v: %q", it["role"], providertest.TextOf(it["content"]))
		case "reasoning":
			var summary []string
			ss, _ := it["summary"].([]any)
			for _, s := range ss {
				summary = append(summary, s.(map[string]any)["text"].(string))
			}
			line = fmt.Sprintf("reasoning %v summary=%q encrypted=%v", it["id"], summary, it["encrypted_content"])
		case "function_call":
			line = fmt.Sprintf("function_call %v %v %s", it["call_id"], it["name"], providertest.CanonicalJSON(it["arguments"]))
		case "function_call_output":
			line = fmt.Sprintf("function_call_output %v %q", it["call_id"], it["output"])
		default:
			line = "unknown " + typ
		}
		out = append(out, line)
	}
	return out
}

func normalizeTools(body map[string]any) []string {
	var out []string
	tools, _ := body["tools"].([]any)
	for _, x := range tools {
		tl := x.(map[string]any)
		schema, _ := json.Marshal(tl["parameters"])
		out = append(out, fmt.Sprintf("%v %v %v %s", tl["type"], tl["name"], tl["description"], schema))
	}
	return out
}

// A two-turn run through the loop (reasoning and two parallel calls, then
// the answer) sends the same requests as the recorded client: the
// reasoning item goes back with its id and encrypted content, then both
// calls and both outputs.
func TestResponses_ReasoningAndTwoCallsThroughTheLoopResendTheRecordedHistory(t *testing.T) {
	const name = "rig-reasoning-two-calls-session"
	rec := providertest.RecordedRequests(t, name)
	require.Len(t, rec, 2)
	first := rec[0].RequestBody

	outputs := map[string]string{} // city -> recorded output
	for _, x := range rec[1].RequestBody["input"].([]any) {
		it := x.(map[string]any)
		if it["type"] == "function_call_output" {
			out := it["output"].(string)
			city := strings.TrimSuffix(strings.TrimPrefix(out, "Weather in "), out[strings.Index(out, ":"):])
			outputs[city] = out
		}
	}
	tl := first["tools"].([]any)[0].(map[string]any)
	schema, _ := json.Marshal(tl["parameters"])
	weather, err := agentloop.NewRawTool(tl["name"].(string), tl["description"].(string), schema, func(_ context.Context, args json.RawMessage) (string, error) {
		var a struct{ City string }
		if err := json.Unmarshal(args, &a); err != nil {
			return "", err
		}
		return outputs[a.City], nil
	})
	require.NoError(t, err)

	srv := providertest.NewSSEServer(t, providertest.Testdata(t, name+".turn1.sse"), providertest.Testdata(t, name+".turn2.sse"))
	m, err := openairesponses.New(openairesponses.Config{Model: "gpt-5.2", BaseURL: srv.URL, ReasoningEffort: "low"})
	require.NoError(t, err)
	agent := &agentloop.Agent{
		Model:    m,
		System:   first["instructions"].(string),
		Tools:    []*agentloop.Tool{weather},
		Settings: agentloop.Settings{MaxTokens: int(first["max_output_tokens"].(float64))},
	}
	user := providertest.TextOf(first["input"].([]any)[0].(map[string]any)["content"])
	last, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage(user)}, nil))
	require.NoError(t, err)
	final := last.(agentloop.Final)
	assert.Equal(t, 2, final.Turns)
	assert.True(t, strings.HasPrefix(final.Text, "Tokyo is currently **72°F (22°C)**"), final.Text)
	assert.Equal(t, agentloop.Usage{Input: 144 + 276, Output: 62 + 89, Reasoning: 12}, final.Usage)

	for i, r := range rec {
		ours := srv.Request(t, i).JSON(t)
		assert.Equal(t, normalize(r.RequestBody), normalize(ours), "input of turn %d", r.Turn)
		assert.Equal(t, normalizeTools(r.RequestBody), normalizeTools(ours), "tools of turn %d", r.Turn)
		for _, k := range []string{"model", "instructions", "max_output_tokens", "reasoning", "include", "stream"} {
			assert.Equal(t, r.RequestBody[k], ours[k], "%s of turn %d", k, r.Turn)
		}
		assert.Equal(t, false, ours["store"], "stateless: the history carries the reasoning")
		for _, tool := range ours["tools"].([]any) {
			assert.Equal(t, false, tool.(map[string]any)["strict"])
		}
	}
}

// The four responses of a vercel/ai agent run (reasoning with a summary,
// three calculator calls, the answer) through the loop: each request sends
// back the reasoning summary and encrypted content, and every call with its
// output, in order.
func TestResponses_FourTurnRunSendsBackReasoningSummaryEncryptedContentAndCalls(t *testing.T) {
	bodies := vercelResponses(t)
	var ops []string
	calc, err := agentloop.NewTool("calculator", "Arithmetic.", func(_ context.Context, a struct {
		A  float64 `json:"a"`
		B  float64 `json:"b"`
		Op string  `json:"op"`
	}) (float64, error) {
		ops = append(ops, a.Op)
		switch a.Op {
		case "add":
			return a.A + a.B, nil
		case "multiply":
			return a.A * a.B, nil
		}
		return 0, fmt.Errorf("unknown op %q", a.Op)
	})
	require.NoError(t, err)
	srv := providertest.NewSSEServer(t, bodies...)
	agent := &agentloop.Agent{Model: newModel(t, srv.URL), Tools: []*agentloop.Tool{calc}, ToolConcurrency: 1}
	last, err := agentloop.Drain(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("(12 + 7) * 3 * 10?")}, nil))
	require.NoError(t, err)
	final := last.(agentloop.Final)
	assert.Equal(t, 4, final.Turns)
	assert.Equal(t, []string{"add", "multiply", "multiply"}, ops)
	assert.Contains(t, final.Text, "570")

	req4 := normalize(srv.Request(t, 3).JSON(t))
	require.Len(t, req4, 8, "user, reasoning, then three calls each with its output")
	assert.Equal(t, `message user: "(12 + 7) * 3 * 10?"`, req4[0])
	assert.True(t, strings.HasPrefix(req4[1], `reasoning rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9 summary=["**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7`), req4[1])
	assert.Contains(t, req4[1], "encrypted=gAAAAABpPDIV", "the encrypted content of output_item.done")
	assert.Equal(t, `function_call call_AB6AaRZ1FYZB2RwS6A5vbdqn calculator {"a":12,"b":7,"op":"add"}`, req4[2])
	assert.Equal(t, `function_call_output call_AB6AaRZ1FYZB2RwS6A5vbdqn "19"`, req4[3])
	assert.Equal(t, `function_call_output call_Zl5vIMnD7dVAjgU6FkhmiCZh "570"`, req4[7])
}
