package sse_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentloop/agentloop/internal/sse"
)

func Example() {
	body := "event: greeting\ndata: hello\n\n: a comment\ndata: two\ndata: lines\n\n"
	r := sse.NewReader(strings.NewReader(body))
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		fmt.Printf("%q %q\n", ev.Name, ev.Data)
	}
	// Output:
	// "greeting" "hello"
	// "" "two\nlines"
}
