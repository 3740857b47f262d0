package tinyollama

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/fs/ggml"
	ollamatemplate "github.com/ollama/ollama/template"
	"github.com/ollama/ollama/tokenizer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// generate runs the model without a server: from start, it picks the
// highest logit of the output matrix's column for the last token (the block
// is an identity, so that is the whole forward pass), until the end token
// or max tokens.
func generate(v *vocab, start, max int) []int {
	hidden := hiddenSize(len(v.tokens))
	_, out := weights(v, hidden)
	eos := v.ids["<|im_end|>"]
	var ids []int
	t := start
	for range max {
		best, bestLogit := -1, float32(0)
		for j := range v.tokens {
			if l := out[j*hidden+t]; best < 0 || l > bestLogit {
				best, bestLogit = j, l
			}
		}
		if best == eos {
			break
		}
		ids = append(ids, best)
		t = best
	}
	return ids
}

// decode turns ids into text with Ollama's own tokenizer, so the byte runes
// are checked against the server's decoder.
func decode(t *testing.T, v *vocab, ids []int) string {
	t.Helper()
	bpe := tokenizer.NewBytePairEncoding(&tokenizer.Vocabulary{Values: v.tokens, Types: v.types})
	ids32 := make([]int32, len(ids))
	for i, id := range ids {
		ids32[i] = int32(id)
	}
	s, err := bpe.Decode(ids32)
	require.NoError(t, err)
	return s
}

func TestModel_EachTriggerWritesItsChainThenEnds(t *testing.T) {
	v := newVocab()
	call := "<tool_call>" + callJSON(CallArgs) + "</tool_call>"
	for trigger, want := range map[string]string{
		"<|answer|>": Answer,
		"<|call|>":   call,
		"<|call2|>":  call + "\n<tool_call>" + callJSON(SecondCallArgs) + "</tool_call>",
		"<|im_end|>": "", // any other token ends the turn
		"T":          "",
	} {
		assert.Equal(t, want, decode(t, v, generate(v, v.ids[trigger], 100)), "after %s", trigger)
	}
	assert.Len(t, generate(v, v.ids["<|answer|>"], 100), 11, "the answer is 11 tokens")
	assert.Len(t, generate(v, v.ids["<|call|>"], 100), 3, "a call is 3 tokens: <tool_call>, the JSON, </tool_call>")
	assert.Equal(t, strings.Repeat(Loop, 100), decode(t, v, generate(v, v.ids["<|loop|>"], 100)), "the loop never ends")
	assert.Equal(t, strings.Repeat(Loop+Babble, 50), decode(t, v, generate(v, v.ids["<|babble|>"], 100)), "nor does the babble")
}

func TestModel_ChainsWinByAWideMarginOverTheBiases(t *testing.T) {
	v := newVocab()
	hidden := hiddenSize(len(v.tokens))
	_, out := weights(v, hidden)
	for tok := range v.tokens {
		var first, second float32 = -1e9, -1e9
		for j := range v.tokens {
			l := out[j*hidden+tok] * float32(sqrt(hidden))
			switch {
			case l > first:
				first, second = l, first
			case l > second:
				second = l
			}
		}
		assert.Greater(t, first-second, float32(25), "token %q", v.tokens[tok])
	}
}

func TestWriteGGUF_IsASmallQwen3ModelOllamaCanRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, WriteGGUF(path))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Less(t, info.Size(), int64(2<<20), "about 1 MB")

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	g, err := ggml.Decode(f, -1)
	require.NoError(t, err)
	kv := g.KV()
	assert.Equal(t, "qwen3", kv.Architecture())
	assert.Equal(t, uint64(1), kv.BlockCount())
	assert.Equal(t, "gpt2", kv.String("tokenizer.ggml.model"))
	tokens := kv.Strings("tokenizer.ggml.tokens")
	assert.Len(t, tokens, len(newVocab().tokens))
	assert.GreaterOrEqual(t, int(kv.EmbeddingLength()), len(tokens), "one-hot embeddings need H ≥ V")
	assert.Len(t, g.Tensors().Items(), 14)

	again := filepath.Join(t.TempDir(), "again.gguf")
	require.NoError(t, WriteGGUF(again))
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(again)
	assert.Equal(t, a, b, "the file is deterministic")
}

// The Modelfile's template decides the chain: a call when tools are offered
// and no tool result follows, the answer otherwise; the prompt ends in the
// trigger token.
func TestModelfile_TemplateEndsThePromptInTheTrigger(t *testing.T) {
	tools := api.Tools{{Type: "function", Function: api.ToolFunction{Name: CallName}}}
	args := api.NewToolCallFunctionArguments()
	args.Set("city", "Paris")
	user := api.Message{Role: "user", Content: "Weather?"}
	callMsg := api.Message{Role: "assistant", ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: CallName, Arguments: args}}}}
	result := api.Message{Role: "tool", Content: "sunny", ToolName: CallName}

	render := func(variant string, vals ollamatemplate.Values) string {
		t.Helper()
		mf, err := Modelfile(variant, "/m/tiny.gguf")
		require.NoError(t, err)
		_, rest, ok := strings.Cut(mf, `TEMPLATE """`)
		require.True(t, ok)
		text, _, ok := strings.Cut(rest, `"""`)
		require.True(t, ok)
		tmpl, err := ollamatemplate.Parse(text)
		require.NoError(t, err)
		var sb strings.Builder
		require.NoError(t, tmpl.Execute(&sb, vals))
		return sb.String()
	}

	assert.True(t, strings.HasSuffix(render(Tiny, ollamatemplate.Values{Messages: []api.Message{user}, Tools: tools}), "<|im_start|>assistant\n<|call|>"))
	assert.True(t, strings.HasSuffix(render(Tiny, ollamatemplate.Values{Messages: []api.Message{user}}), "\n<|answer|>"))
	afterTool := render(Tiny, ollamatemplate.Values{Messages: []api.Message{user, callMsg, result}, Tools: tools})
	assert.True(t, strings.HasSuffix(afterTool, "\n<|answer|>"), afterTool)
	assert.Contains(t, afterTool, `<tool_call>{"name": "get_weather", "arguments": {"city":"Paris"}}</tool_call>`)
	assert.True(t, strings.HasSuffix(render(TinyParallel, ollamatemplate.Values{Messages: []api.Message{user}, Tools: tools}), "<|call2|>"))
	assert.True(t, strings.HasSuffix(render(TinyLoop, ollamatemplate.Values{Messages: []api.Message{user}}), "<|loop|>"))
	assert.True(t, strings.HasSuffix(render(TinyBabble, ollamatemplate.Values{Messages: []api.Message{user}}), "<|babble|>"))
	sys := render(TinyNoTools, ollamatemplate.Values{Messages: []api.Message{{Role: "system", Content: "Be brief."}, user}})
	assert.True(t, strings.HasPrefix(sys, "<|im_start|>system\nBe brief.<|im_end|>\n"), sys)

	mf, err := Modelfile(TinyNoTools, "/m/tiny.gguf")
	require.NoError(t, err)
	assert.NotContains(t, mf, ".Tools", "without .Tools the server refuses tools")
	assert.NotContains(t, mf, "PARSER")
	mf, err = Modelfile(Tiny, "/m/tiny.gguf")
	require.NoError(t, err)
	assert.Contains(t, mf, "FROM /m/tiny.gguf\n")
	assert.Contains(t, mf, "PARSER qwen3\n")
	_, err = Modelfile("nope", "x")
	assert.ErrorContains(t, err, `unknown variant "nope"`)
}

func sqrt(n int) float64 {
	x := float64(n)
	r := x
	for range 50 {
		r = (r + x/r) / 2
	}
	return r
}
