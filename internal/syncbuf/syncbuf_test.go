package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentloop/agentloop/internal/syncbuf"
)

// Writes from many goroutines, while another reads, all land whole (run
// with -race to check the locking).
func TestBuffer_ConcurrentWritesAndReadsLoseNothing(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				n, err := b.Write([]byte("ab"))
				assert.NoError(t, err)
				assert.Equal(t, 2, n)
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			_ = b.String()
		}
	})
	wg.Wait()
	assert.Equal(t, strings.Repeat("ab", 800), b.String())
}
