// Command tinyollama writes the tiny test model (tiny.gguf) and the
// Modelfiles of its variants into a directory, for trying the model on an
// Ollama server by hand:
//
//	go run ./providers/internal/tinyollama/cmd/tinyollama -dir /tmp/tiny
//	ollama create tiny -f /tmp/tiny/tiny.Modelfile
//
// The integration suite (providers/internal/realollama) does the same
// itself.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/agentloop/agentloop/providers/internal/tinyollama"
)

func main() {
	dir := flag.String("dir", ".", "directory to write tiny.gguf and the <variant>.Modelfile files into")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	paths, err := tinyollama.WriteAll(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, v := range slices.Sorted(maps.Keys(paths)) {
		fmt.Printf("ollama create %s -f %s\n", v, paths[v])
	}
}
