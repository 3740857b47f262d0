package syncbuf_test

import (
	"fmt"
	"sync"

	"github.com/agentloop/agentloop/internal/syncbuf"
)

func Example() {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { fmt.Fprint(&b, "x") })
	}
	wg.Wait()
	fmt.Println(b.String())
	// Output: xxx
}
