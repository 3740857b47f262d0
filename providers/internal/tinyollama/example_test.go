package tinyollama_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentloop/agentloop/providers/internal/tinyollama"
)

// Write the model and the Modelfiles, then register them with
// `ollama create NAME -f FILE` (the realollama harness does that).
func Example() {
	dir, err := os.MkdirTemp("", "tiny")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	paths, err := tinyollama.WriteAll(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range tinyollama.Variants {
		mf, _ := os.ReadFile(paths[v])
		first, _, _ := strings.Cut(string(mf), "\n")
		fmt.Printf("%s: %s, parser %v\n", v, strings.Replace(first, dir, "DIR", 1), strings.Contains(string(mf), "PARSER qwen3"))
	}
	info, _ := os.Stat(filepath.Join(dir, "tiny.gguf"))
	fmt.Println("model under 2 MB:", info.Size() < 2<<20)
	// Output:
	// tiny: FROM DIR/tiny.gguf, parser true
	// tiny-parallel: FROM DIR/tiny.gguf, parser true
	// tiny-notools: FROM DIR/tiny.gguf, parser false
	// tiny-loop: FROM DIR/tiny.gguf, parser false
	// tiny-babble: FROM DIR/tiny.gguf, parser false
	// model under 2 MB: true
}
