package openairesponses

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
)

// FuzzResponses_Decoder feeds arbitrary bodies to the stream decoder: it
// must not panic, must stop at the first failure, and must yield
// well-formed chunks (no empty deltas, calls with non-empty arguments, at
// most one Finish, and Finish last).
func FuzzResponses_Decoder(f *testing.F) {
	for _, name := range []string{"rig-parallel-function-calls.sse", "rig-incomplete-mid-tool-call.sse", "rig-reasoning-two-calls-session.turn1.sse", "rig-three-turn-tool-session.turn3.sse"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":3,\"item\":{\"type\":\"function_call\"}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var chunks []agentloop.Chunk
		var yieldedErr error
		err := new(decoder).run(bytes.NewReader(body), func(c agentloop.Chunk, err error) bool {
			if err != nil {
				yieldedErr = err
			}
			chunks = append(chunks, c)
			return true
		})
		if yieldedErr != nil {
			t.Fatalf("the decoder yielded an error itself: %v", yieldedErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "openai") {
			t.Fatalf("error does not name the provider: %v", err)
		}
		finishes := 0
		for i, c := range chunks {
			switch c := c.(type) {
			case agentloop.TextDelta:
				if c.Text == "" {
					t.Fatal("empty text delta")
				}
			case agentloop.ReasoningDelta:
				if c.Text == "" {
					t.Fatal("empty reasoning delta")
				}
			case agentloop.ToolCall:
				if len(c.Args) == 0 {
					t.Fatalf("call without arguments %+v", c)
				}
			case agentloop.Finish:
				finishes++
				if i != len(chunks)-1 {
					t.Fatalf("Finish at %d of %d", i, len(chunks))
				}
			}
		}
		if finishes > 1 {
			t.Fatalf("%d finishes", finishes)
		}
	})
}
