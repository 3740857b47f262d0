package providertest

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
)

// addFixtures adds each testdata/name to f's seed corpus.
func addFixtures(f *testing.F, names ...string) {
	f.Helper()
	for _, name := range names {
		f.Add(Testdata(f, name))
	}
}

// checkDecoded fails t unless what a stream decoder gave is well formed:
// yielded (the first error the decoder yielded itself, nil if none) is nil,
// err (what it returned) is nil or starts with prefix, every ToolCall has
// arguments, and there is at most one Finish, the last chunk. A call's id
// may be empty: the loop fills it.  It is what [FuzzDecoder] checks.
func checkDecoded(t testing.TB, prefix string, chunks []agentloop.Chunk, yielded, err error) {
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

// FuzzDecoder fuzzes a provider's stream decoder: f's seed corpus gets
// testdata/<seed> for each seed (besides what f.Add put there before), and
// what decode gives for every body must be well formed: no error yielded
// by the decoder itself, a returned error that starts with prefix, calls
// with arguments, at most one Finish and that one last. check, if not nil,
// then checks the chunks further. decode must start afresh for each body;
// it is called from one goroutine at a time.
func FuzzDecoder(f *testing.F, prefix string, decode func(r io.Reader, yield func(agentloop.Chunk, error) bool) error, check func(t *testing.T, chunks []agentloop.Chunk), seeds ...string) {
	f.Helper()
	addFixtures(f, seeds...)
	f.Fuzz(func(t *testing.T, body []byte) {
		var chunks []agentloop.Chunk
		var yielded error
		err := decode(bytes.NewReader(body), func(c agentloop.Chunk, err error) bool {
			if err != nil && yielded == nil {
				yielded = err
			}
			chunks = append(chunks, c)
			return true
		})
		checkDecoded(t, prefix, chunks, yielded, err)
		if check != nil {
			check(t, chunks)
		}
	})
}
