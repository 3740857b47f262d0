package storetest_test

import (
	"fmt"
	"time"

	"github.com/agentloop/agentloop/store/storetest"
)

// The suite's clock is safe for concurrent use; a backend under test reads
// it for timestamps and leases, and the suite moves it on.
func ExampleClock() {
	c := storetest.NewClock()
	start := c.Now()
	c.Advance(90 * time.Second)
	fmt.Println(c.Now().Sub(start), c.Now().Format(time.RFC3339))
	// Output:
	// 1m30s 2030-01-02T03:05:35Z
}
