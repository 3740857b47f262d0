package toolstate_test

import (
	"testing"
	"time"

	"github.com/agentloop/agentloop/toolstate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestState_FailedToolOfferedAgainAfterCooldown(t *testing.T) {
	clk := newClock()
	s := toolstate.NewState(toolstate.Config{FailureThreshold: 2, Cooldown: time.Minute})
	s.RecordFailure("t", "e", clk.Now())
	s.RecordFailure("t", "e", clk.Now())
	assert.Equal(t, toolstate.StatusFailed, s.Status("t", clk.Now()))
	clk.Advance(59 * time.Second)
	assert.Empty(t, s.Offered(clk.Now(), "t"))
	clk.Advance(time.Second)
	assert.Equal(t, []string{"t"}, s.Offered(clk.Now(), "t"))
	s.Sync(clk.Now())
	assert.Equal(t, toolstate.StatusAvailable, s.Tools["t"].Status)
	// Half-open: one more failure makes it failed again at once.
	s.RecordFailure("t", "e", clk.Now())
	assert.Equal(t, toolstate.StatusFailed, s.Status("t", clk.Now()))
}

func TestState_FailedToolWithoutCooldownStaysFailed(t *testing.T) {
	clk := newClock()
	s := toolstate.NewState(toolstate.Config{})
	for range 3 {
		s.RecordFailure("t", "e", clk.Now())
	}
	clk.Advance(1000 * time.Hour)
	assert.Equal(t, toolstate.StatusFailed, s.Status("t", clk.Now()))
}

func TestState_DisabledToolIsNeverOfferedUntilReset(t *testing.T) {
	clk := newClock()
	s := toolstate.NewState(toolstate.Config{})
	s.Disable("t", "maintenance", clk.Now())
	s.RecordSuccess("t", clk.Now())
	assert.Equal(t, toolstate.StatusDisabled, s.Status("t", clk.Now()))
	assert.Equal(t, "maintenance", s.Tools["t"].Reason)
	require.NoError(t, s.Reset("t", clk.Now()))
	assert.Equal(t, toolstate.StatusAvailable, s.Status("t", clk.Now()))
}

func TestState_UnknownToolStartsAvailableOrWaiting(t *testing.T) {
	s := toolstate.NewState(toolstate.Config{Dependencies: map[string][]string{"b": {"a"}}})
	now := newClock().Now()
	assert.Equal(t, toolstate.StatusAvailable, s.Status("new", now))
	assert.Equal(t, toolstate.StatusWaiting, s.Status("b", now))
	assert.Equal(t, []string{"a", "new"}, s.Offered(now, "a", "b", "new"))
}

func TestState_ResetUnknownToolIsAnError(t *testing.T) {
	s := toolstate.NewState(toolstate.Config{})
	err := s.Reset("ghost", newClock().Now())
	require.ErrorIs(t, err, toolstate.ErrUntrackedTool)
	assert.Contains(t, err.Error(), `"ghost"`)
}

func TestState_ResetOfAToolWithUnmetDependencyLeavesItWaiting(t *testing.T) {
	clk := newClock()
	s := toolstate.NewState(toolstate.Config{Dependencies: map[string][]string{"b": {"a"}}})
	for range 3 {
		s.RecordFailure("b", "e", clk.Now())
	}
	assert.Equal(t, toolstate.StatusFailed, s.Status("b", clk.Now()))
	assert.Equal(t, []string{"a", "b"}, s.ResetAll(clk.Now()))
	assert.Equal(t, toolstate.StatusWaiting, s.Status("b", clk.Now()))
	assert.Zero(t, s.Tools["b"].ConsecutiveFailures)
	assert.Equal(t, 3, s.Tools["b"].Failures, "totals survive a reset")
}

func TestState_SummaryCountsAndNamesEachStatus(t *testing.T) {
	clk := newClock()
	s := toolstate.NewState(toolstate.Config{Dependencies: map[string][]string{"dependent_tool": {"base_tool"}}})
	s.Sync(clk.Now(), "base_tool", "other")
	for range 3 {
		s.RecordFailure("failing_tool", "e", clk.Now())
	}
	assert.Equal(t, "4 tools: 2 available (base_tool, other), 1 failed (failing_tool), 1 waiting (dependent_tool), 0 disabled",
		s.Summary(clk.Now()))
}

func TestConfig_ValidateNamesTheProblem(t *testing.T) {
	tests := map[string]struct {
		cfg  toolstate.Config
		want string
	}{
		"self":     {toolstate.Config{Dependencies: map[string][]string{"a": {"a"}}}, `tool "a" depends on itself`},
		"cycle":    {toolstate.Config{Dependencies: map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}}}, "dependency cycle a -> b -> c -> a"},
		"cooldown": {toolstate.Config{Cooldown: -time.Second}, "cool-down -1s is negative"},
		"empty":    {toolstate.Config{Dependencies: map[string][]string{"a": {""}}}, "empty name"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.ErrorContains(t, tt.cfg.Validate(), tt.want)
		})
	}
	assert.NoError(t, toolstate.Config{Dependencies: map[string][]string{"c": {"a", "b"}, "b": {"a"}}}.Validate())
}
