package pipenet_test

import (
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/aisdk/internal/pipenet"
)

// A server on pipes runs in a synctest bubble: a handler that waits an
// hour answers at once on the fake clock, and the request reports a
// loopback remote address, as the stored server's loopback check wants.
func TestServe_InABubbleFollowsTheFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, client := pipenet.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Hour)
			_, _ = io.WriteString(w, r.RemoteAddr)
		}))
		start := time.Now()
		resp, err := client.Get("http://127.0.0.1/")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, time.Hour, time.Since(start))
		assert.Contains(t, string(body), "127.0.0.1:")
	})
}
