// Package tinyollama writes a tiny, deterministic language model that a real
// Ollama server can run, and the Modelfiles of the variants the real-server
// integration suite registers (providers/internal/realollama).
//
// Nothing is trained or downloaded. The model is a 1 MB GGUF of Ollama's
// qwen3 architecture (which Ollama runs on its own Go engine), written with
// Ollama's fs/ggml writer, whose weights are set by hand so that it is a
// "bigram machine": the last token alone picks the next one.
//
//   - One transformer block whose attention-output and FFN-down weights are
//     zero, so the block passes its input through unchanged.
//   - One-hot token embeddings, so after the final RMS norm a token t is
//     the vector √H·e_t.
//   - An output matrix whose column t holds a large logit (≈34) for the
//     token that follows t in a fixed table, plus a few small constant biases
//     (see below). The margin makes the choice certain even at temperature 1.
//
// The vocabulary is a GPT-2 byte vocabulary (the 256 bytes), control tokens
// (<|im_start|>, <|im_end|>, which is the end of a turn, and the trigger
// tokens <|answer|>, <|call|>, <|call2|>, <|loop|>, <|babble|>), the user-defined
// <tool_call> and </tool_call>, and a few whole-word tokens that only the
// model writes. The Modelfile's TEMPLATE ends every prompt in a trigger
// token, and the chains that follow them are:
//
//	<|answer|> → "The tiny model says hello from a real Ollama server." (11 tokens), end
//	<|call|>   → <tool_call> {"name": "get_weather", "arguments": {"city": "Paris"}} </tool_call>, end
//	<|call2|>  → two whole calls, get_weather Paris and Rome (2 tokens), end
//	<|loop|>   → " la" for ever (the server's repeat limit stops it)
//	<|babble|> → " la li la li …" for ever (the repeat limit never trips)
//	any other token → end
//
// Under a "format" grammar the chains' tokens are not allowed, and the
// biases decide: '"' +6, '}' and ']' +3, ',' +2.5, '4' +2, whitespace −3,
// so a JSON Schema yields short valid JSON ({"city":"Paris","temp":4} for an
// object of an enum city and an integer temp) instead of a run of
// whitespace. Ties among the allowed tokens are broken by sampling, so
// constrained runs should use temperature 0.
package tinyollama

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/ollama/ollama/fs/ggml"
)

// Texts the model writes.
const (
	// Answer is the whole reply of the <|answer|> chain.
	Answer = "The tiny model says hello from a real Ollama server."
	// CallName and CallArgs are the call of the <|call|> chain.
	CallName = "get_weather"
	CallArgs = `{"city": "Paris"}`
	// SecondCallArgs are the arguments of the second call of <|call2|>.
	SecondCallArgs = `{"city": "Rome"}`
	// Loop is the token the <|loop|> chain repeats.
	Loop = " la"
	// Babble is the token that alternates with Loop in the <|babble|> chain.
	Babble = " li"
)

// Token types of Ollama's vocabulary (tokenizer.TOKEN_TYPE_*).
const (
	typeNormal      = 1
	typeControl     = 3
	typeUserDefined = 4
)

// Model shape. The hidden size must be at least the vocabulary size (the
// embeddings are one-hot) and a multiple of the heads' width.
const (
	heads   = 2
	headDim = 32
	ffn     = 32
	context = 4096
)

// vocab is the model's vocabulary: its tokens (in GPT-2's byte-to-rune
// form), their types, and the next-token table.
type vocab struct {
	tokens []string
	types  []int32
	ids    map[string]int
	next   map[int]int // token → the token that follows it (else: end of turn)
}

func (v *vocab) add(text string, typ int32) int {
	id := len(v.tokens)
	v.tokens = append(v.tokens, text)
	v.types = append(v.types, typ)
	v.ids[text] = id
	return id
}

// word adds a token that writes s, spelled in GPT-2's byte runes.
func (v *vocab) word(s string) int {
	return v.add(byteRunes(s), typeNormal)
}

// chain makes each token follow the one before it.
func (v *vocab) chain(ids ...int) {
	for i := 1; i < len(ids); i++ {
		v.next[ids[i-1]] = ids[i]
	}
}

func callJSON(args string) string {
	return `{"name": "` + CallName + `", "arguments": ` + args + `}`
}

func newVocab() *vocab {
	v := &vocab{ids: map[string]int{}, next: map[int]int{}}
	for b := range 256 {
		v.add(string(byteRune(byte(b))), typeNormal)
	}
	v.add("<|endoftext|>", typeControl)
	v.add("<|im_start|>", typeControl)
	v.add("<|im_end|>", typeControl)
	answer := v.add("<|answer|>", typeControl)
	call := v.add("<|call|>", typeControl)
	call2 := v.add("<|call2|>", typeControl)
	loop := v.add("<|loop|>", typeControl)
	babble := v.add("<|babble|>", typeControl)
	open := v.add("<tool_call>", typeUserDefined)
	closeTag := v.add("</tool_call>", typeUserDefined)

	words := []int{answer}
	for _, w := range []string{"The", " tiny", " model", " says", " hello", " from", " a", " real", " Ollama", " server"} {
		words = append(words, v.word(w))
	}
	words = append(words, v.ids["."])
	v.chain(words...)

	v.chain(call, open, v.word(callJSON(CallArgs)), closeTag)
	v.chain(call2,
		v.word("<tool_call>"+callJSON(CallArgs)+"</tool_call>"),
		v.word("\n<tool_call>"+callJSON(SecondCallArgs)+"</tool_call>"))
	la := v.word(Loop)
	v.chain(loop, la, la)
	// " la" already follows itself, so babble's " la" is a token of its own.
	la2, li := v.word(Loop), v.word(Babble)
	v.chain(babble, la2, li, la2)
	return v
}

// bias is the constant logit bias of token text (spelled in byte runes).
func bias(text string) float32 {
	switch text {
	case `"`:
		return 6
	case "}", "]":
		return 3
	case ",":
		return 2.5
	case "4":
		return 2
	case string(byteRune(' ')), string(byteRune('\n')), string(byteRune('\t')), string(byteRune('\r')):
		return -3
	}
	return 0
}

// WriteGGUF writes the model to path.
func WriteGGUF(path string) error {
	v := newVocab()
	n := len(v.tokens)
	hidden := hiddenSize(n)

	kv := ggml.KV{
		"general.architecture":                   "qwen3",
		"general.name":                           "agentloop-tiny",
		"general.file_type":                      uint32(0), // all F32
		"qwen3.block_count":                      uint32(1),
		"qwen3.context_length":                   uint32(context),
		"qwen3.embedding_length":                 uint32(hidden),
		"qwen3.feed_forward_length":              uint32(ffn),
		"qwen3.attention.head_count":             uint32(heads),
		"qwen3.attention.head_count_kv":          uint32(heads),
		"qwen3.attention.key_length":             uint32(headDim),
		"qwen3.attention.value_length":           uint32(headDim),
		"qwen3.attention.layer_norm_rms_epsilon": float32(1e-6),
		"qwen3.rope.freq_base":                   float32(1e6),
		"tokenizer.ggml.model":                   "gpt2",
		"tokenizer.ggml.pre":                     "qwen2",
		"tokenizer.ggml.tokens":                  v.tokens,
		"tokenizer.ggml.token_type":              v.types,
		"tokenizer.ggml.bos_token_id":            uint32(v.ids["<|endoftext|>"]),
		"tokenizer.ggml.eos_token_id":            uint32(v.ids["<|im_end|>"]),
		"tokenizer.ggml.padding_token_id":        uint32(v.ids["<|endoftext|>"]),
		"tokenizer.ggml.add_bos_token":           false,
	}

	embd, out := weights(v, hidden)
	qkv := heads * headDim
	tensors := []*ggml.Tensor{
		tensor("token_embd.weight", embd, hidden, n),
		tensor("output.weight", out, hidden, n),
		tensor("output_norm.weight", ones(hidden), hidden),
		tensor("blk.0.attn_norm.weight", ones(hidden), hidden),
		tensor("blk.0.attn_q.weight", make([]float32, hidden*qkv), hidden, qkv),
		tensor("blk.0.attn_k.weight", make([]float32, hidden*qkv), hidden, qkv),
		tensor("blk.0.attn_v.weight", make([]float32, hidden*qkv), hidden, qkv),
		tensor("blk.0.attn_q_norm.weight", ones(headDim), headDim),
		tensor("blk.0.attn_k_norm.weight", ones(headDim), headDim),
		tensor("blk.0.attn_output.weight", make([]float32, qkv*hidden), qkv, hidden),
		tensor("blk.0.ffn_norm.weight", ones(hidden), hidden),
		tensor("blk.0.ffn_gate.weight", make([]float32, hidden*ffn), hidden, ffn),
		tensor("blk.0.ffn_up.weight", make([]float32, hidden*ffn), hidden, ffn),
		tensor("blk.0.ffn_down.weight", make([]float32, ffn*hidden), ffn, hidden),
	}

	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("tinyollama: %w", err)
	}
	if err := ggml.WriteGGUF(f, kv, tensors); err != nil {
		f.Close()
		return fmt.Errorf("tinyollama: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tinyollama: %w", err)
	}
	return nil
}

// hiddenSize is the smallest multiple of the heads' width that holds n
// one-hot embeddings.
func hiddenSize(n int) int {
	w := heads * headDim
	return (n + w - 1) / w * w
}

// weights returns the token embeddings and the output matrix, both of shape
// [hidden, n] (row-major: row t of embd is token t's embedding, row j of out
// gives token j's logit for each input dimension).
//
// After the identity block and the final norm, token t is √H·e_t, so the
// logit of token j is √H·out[j][t]: out[j][t] = margin/√H makes j follow t
// with logit margin, and bias(j)/√H in every column adds bias(j) whatever t.
func weights(v *vocab, hidden int) (embd, out []float32) {
	n := len(v.tokens)
	scale := float32(math.Sqrt(float64(hidden)))
	const margin = 34
	eos := v.ids["<|im_end|>"]
	embd = make([]float32, n*hidden)
	out = make([]float32, n*hidden)
	for t := range n {
		embd[t*hidden+t] = 1
	}
	for j := range n {
		b := bias(v.tokens[j]) / scale
		for t := range n {
			out[j*hidden+t] = b
		}
	}
	for t := range n {
		nt, ok := v.next[t]
		if !ok {
			nt = eos
		}
		out[nt*hidden+t] += margin / scale
	}
	return embd, out
}

func ones(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// tensor is an F32 tensor of the given shape (fastest dimension first).
func tensor(name string, data []float32, shape ...int) *ggml.Tensor {
	t := &ggml.Tensor{Name: name, Kind: 0, WriterTo: f32s(data)}
	for _, d := range shape {
		t.Shape = append(t.Shape, uint64(d))
	}
	return t
}

type f32s []float32

func (s f32s) WriteTo(w io.Writer) (int64, error) {
	err := binary.Write(w, binary.LittleEndian, []float32(s))
	if err != nil {
		return 0, err
	}
	return int64(4 * len(s)), nil
}

// byteRune is GPT-2's byte-to-rune map: printable Latin-1 bytes stand for
// themselves, the others for the runes from U+0100 on, in byte order.
func byteRune(b byte) rune {
	switch {
	case b >= '!' && b <= '~', b >= 0xA1 && b <= 0xAC, b >= 0xAE:
		return rune(b)
	}
	n := 0
	for c := range int(b) {
		if !(c >= '!' && c <= '~' || c >= 0xA1 && c <= 0xAC || c >= 0xAE) {
			n++
		}
	}
	return rune(0x100 + n)
}

func byteRunes(s string) string {
	var sb strings.Builder
	for i := range len(s) {
		sb.WriteRune(byteRune(s[i]))
	}
	return sb.String()
}

// Model variants registered by the suite.
const (
	Tiny         = "tiny"          // text; one tool call when tools are offered
	TinyParallel = "tiny-parallel" // two tool calls when tools are offered
	TinyNoTools  = "tiny-notools"  // no tools capability
	TinyLoop     = "tiny-loop"     // writes " la" until the server's repeat limit stops it
	TinyBabble   = "tiny-babble"   // writes " la li la li …" until the context is full
)

// Variants lists the model variants in the order they are registered.
var Variants = []string{Tiny, TinyParallel, TinyNoTools, TinyLoop, TinyBabble}

// template renders the chat in the usual ChatML shape and ends the prompt in
// a trigger token: callTrigger when tools are offered and the last message
// is not a tool result, else answerTrigger. The prompt must end in the
// trigger itself, with no newline after it.
func template(tools bool, callTrigger, answerTrigger string) string {
	var sb strings.Builder
	sb.WriteString(`{{- if .System }}<|im_start|>system
{{ .System }}<|im_end|>
{{ end }}`)
	sb.WriteString(`{{- $last := "" }}{{- range .Messages }}{{ $last = .Role }}<|im_start|>{{ .Role }}
{{ .Content }}`)
	if tools {
		sb.WriteString(`{{ if .ToolCalls }}{{ range .ToolCalls }}<tool_call>{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}</tool_call>{{ end }}{{ end }}`)
	}
	sb.WriteString(`<|im_end|>
{{ end }}<|im_start|>assistant
`)
	if tools {
		sb.WriteString(`{{ if and .Tools (ne $last "tool") }}` + callTrigger + `{{ else }}` + answerTrigger + `{{ end }}`)
	} else {
		sb.WriteString(answerTrigger)
	}
	return sb.String()
}

// Modelfile returns the Modelfile of variant for the model file at gguf.
func Modelfile(variant, gguf string) (string, error) {
	var tmpl, parser string
	switch variant {
	case Tiny:
		tmpl, parser = template(true, "<|call|>", "<|answer|>"), "qwen3"
	case TinyParallel:
		tmpl, parser = template(true, "<|call2|>", "<|answer|>"), "qwen3"
	case TinyNoTools:
		tmpl = template(false, "", "<|answer|>")
	case TinyLoop:
		tmpl = template(false, "", "<|loop|>")
	case TinyBabble:
		tmpl = template(false, "", "<|babble|>")
	default:
		return "", fmt.Errorf("tinyollama: unknown variant %q", variant)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "FROM %s\n", gguf)
	fmt.Fprintf(&sb, "TEMPLATE \"\"\"%s\"\"\"\n", tmpl)
	if parser != "" {
		fmt.Fprintf(&sb, "PARSER %s\n", parser)
	}
	return sb.String(), nil
}

// WriteAll writes tiny.gguf and one <variant>.Modelfile per variant into
// dir, and returns the Modelfiles' paths by variant.
func WriteAll(dir string) (map[string]string, error) {
	gguf := filepath.Join(dir, "tiny.gguf")
	if err := WriteGGUF(gguf); err != nil {
		return nil, err
	}
	paths := map[string]string{}
	for _, v := range Variants {
		mf, err := Modelfile(v, gguf)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, v+".Modelfile")
		if err := os.WriteFile(p, []byte(mf), 0o644); err != nil {
			return nil, fmt.Errorf("tinyollama: %w", err)
		}
		paths[v] = p
	}
	return paths, nil
}
