package anthropic

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
)

// FuzzAnthropic_Decoder feeds arbitrary bodies to the stream decoder: it must not
// panic, must stop at the first failure, and must yield well-formed chunks
// (calls with non-empty arguments, at most one Finish, and Finish last). A
// call's id may be empty: the loop fills it.
func FuzzAnthropic_Decoder(f *testing.F) {
	for _, name := range []string{"rig-thinking-text-tool-roundtrip.turn1.sse", "rig-redacted-thinking.sse", "rig-parallel-tool-use.sse"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var chunks []agentloop.Chunk
		err := new(decoder).run(bytes.NewReader(body), func(c agentloop.Chunk, err error) bool {
			if err != nil {
				t.Fatalf("the decoder yielded an error itself: %v", err)
			}
			chunks = append(chunks, c)
			return true
		})
		if err != nil && !strings.HasPrefix(err.Error(), "anthropic") {
			t.Fatalf("error does not name the provider: %v", err)
		}
		finishes := 0
		for i, c := range chunks {
			switch c := c.(type) {
			case agentloop.ToolCall:
				if len(c.Args) == 0 {
					t.Fatalf("malformed call %+v", c)
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
