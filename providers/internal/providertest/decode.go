package providertest

import (
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
)

// AddFixtures adds each testdata/name to f's seed corpus.
func AddFixtures(f *testing.F, names ...string) {
	f.Helper()
	for _, name := range names {
		f.Add(Testdata(f, name))
	}
}

// CheckDecoded fails t unless what a stream decoder gave is well formed:
// yielded (the first error the decoder yielded itself, nil if none) is nil,
// err (what it returned) is nil or starts with prefix, every ToolCall has
// arguments, and there is at most one Finish, the last chunk. A call's id
// may be empty: the loop fills it. It is for fuzz targets.
func CheckDecoded(t testing.TB, prefix string, chunks []agentloop.Chunk, yielded, err error) {
	t.Helper()
	if yielded != nil {
		t.Fatalf("the decoder yielded an error itself: %v", yielded)
	}
	if err != nil && !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("error does not name the provider: %v", err)
	}
	finishes := 0
	for i, c := range chunks {
		switch c := c.(type) {
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
}
