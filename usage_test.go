package agentloop_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentloop/agentloop"
)

func TestUsageAddSumsEveryCountAndTotalIsInputPlusOutput(t *testing.T) {
	a := agentloop.Usage{Input: 100, Output: 20, CacheRead: 60, CacheWrite: 30, Reasoning: 5}
	b := agentloop.Usage{Input: 10, Output: 2, CacheRead: 6, CacheWrite: 3, Reasoning: 1}
	assert.Equal(t, agentloop.Usage{Input: 110, Output: 22, CacheRead: 66, CacheWrite: 33, Reasoning: 6}, a.Add(b))
	assert.Equal(t, 120, a.Total(), "cache and reasoning counts are parts of Input and Output, not added again")
}
