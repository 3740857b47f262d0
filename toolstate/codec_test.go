package toolstate_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/agentloop/agentloop/toolstate"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarshal_RoundTripsStatesConfigAndTimestamp(t *testing.T) {
	clk := newClock()
	s := toolstate.NewState(toolstate.Config{FailureThreshold: 2, Cooldown: time.Minute, Dependencies: map[string][]string{"b": {"a"}}})
	s.RecordSuccess("a", clk.Now())
	clk.Advance(time.Second)
	s.RecordFailure("c", "boom", clk.Now())
	s.RecordFailure("c", "boom", clk.Now())
	s.Disable("d", "maintenance", clk.Now())
	data, err := toolstate.Marshal(s)
	require.NoError(t, err)
	got, err := toolstate.Unmarshal(data)
	require.NoError(t, err)
	assert.Empty(t, cmp.Diff(s, got))
	assert.Contains(t, string(data), `"version":1`)
	assert.Contains(t, string(data), `"timestamp":"2026-01-02T03:04:06Z"`)
}

func TestUnmarshal_RejectsBadInputWithAClearError(t *testing.T) {
	tests := []struct {
		name, in, want string
		sentinel       error
	}{
		{"not json", `nope`, "not a JSON object", toolstate.ErrCorrupt},
		{"empty", ``, "not a JSON object", toolstate.ErrCorrupt},
		{"array", `[]`, "not a JSON object", toolstate.ErrCorrupt},
		{"no version", `{"states":{}}`, "no version field", toolstate.ErrCorrupt},
		{"string version", `{"version":"1","states":{}}`, `version "1" is not an integer`, toolstate.ErrCorrupt},
		{"future version", `{"version":2,"states":{}}`, "version 2 (this build reads version 1)", toolstate.ErrVersion},
		{"no states", `{"version":1}`, "no states object", toolstate.ErrCorrupt},
		{"truncated", `{"version":1,"states":{"a":{"status":"available"`, "unexpected end", toolstate.ErrCorrupt},
		{"trailing garbage", `{"version":1,"states":{}} x`, "invalid character", toolstate.ErrCorrupt},
		{"unknown status", `{"version":1,"states":{"a":{"status":"sideways"}}}`, `tool "a" has unknown status "sideways"`, toolstate.ErrCorrupt},
		{"negative count", `{"version":1,"states":{"a":{"status":"failed","consecutiveFailures":-1}}}`, `tool "a" has a negative count`, toolstate.ErrCorrupt},
		{"empty tool name", `{"version":1,"states":{"":{"status":"failed"}}}`, "empty name", toolstate.ErrCorrupt},
		{"bad time", `{"version":1,"states":{"a":{"status":"failed","lastUpdated":"yesterday"}}}`, "yesterday", toolstate.ErrCorrupt},
		{"dependency cycle", `{"version":1,"states":{},"config":{"dependencies":{"a":["b"],"b":["a"]}}}`, "dependency cycle a -> b -> a", toolstate.ErrCorrupt},
		{"negative threshold", `{"version":1,"states":{},"config":{"failureThreshold":-1}}`, "failure threshold -1 is negative", toolstate.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := toolstate.Unmarshal([]byte(tt.in))
			require.ErrorIs(t, err, tt.sentinel)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func FuzzUnmarshal(f *testing.F) {
	clk := newClock()
	s := toolstate.NewState(toolstate.Config{Cooldown: time.Minute, Dependencies: map[string][]string{"b": {"a"}}})
	s.RecordSuccess("a", clk.Now())
	s.RecordFailure("c", "boom", clk.Now())
	s.Disable("d", "off", clk.Now())
	good, err := toolstate.Marshal(s)
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte(`{"version":1,"states":{}}`))
	f.Add([]byte(`{"version":2,"states":{}}`))
	f.Add([]byte(`{"version":1,"states":{"a":{"status":"waiting","lastUpdated":"2026-01-01T00:00:00Z"}},"config":{"dependencies":{"a":["b"]}}}`))
	f.Add([]byte(`{"version":1,"states":{"a":{"status":"sideways"}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := toolstate.Unmarshal(data)
		if err != nil {
			// Every refusal is one the caller can recognise and recover from.
			if !errors.Is(err, toolstate.ErrCorrupt) && !errors.Is(err, toolstate.ErrVersion) {
				t.Fatalf("error wraps neither ErrCorrupt nor ErrVersion: %v", err)
			}
			return
		}
		// Whatever decodes encodes, and encodes stably.
		out, err := toolstate.Marshal(s)
		require.NoError(t, err)
		s2, err := toolstate.Unmarshal(out)
		require.NoError(t, err, "re-decoding %s", out)
		out2, err := toolstate.Marshal(s2)
		require.NoError(t, err)
		require.True(t, bytes.Equal(out, out2), "%s\n%s", out, out2)
		// And the rules run on it without panicking.
		s2.Sync(clk.Now(), "a", "b")
		_ = s2.Summary(clk.Now())
	})
}

func TestMarshal_RefusesAStateItCouldNotReadBack(t *testing.T) {
	now := newClock().Now()
	tests := []struct {
		name  string
		state *toolstate.State
		want  string
	}{
		{"nil", nil, "nil state"},
		{"dependency cycle", toolstate.NewState(toolstate.Config{Dependencies: map[string][]string{"a": {"b"}, "b": {"a"}}}), "dependency cycle a -> b -> a"},
		{"unknown status", &toolstate.State{Tools: map[string]toolstate.ToolState{"a": {Status: "sideways", LastUpdated: now}}}, `tool "a" has unknown status "sideways"`},
		{"negative count", &toolstate.State{Tools: map[string]toolstate.ToolState{"a": {Status: toolstate.StatusAvailable, Failures: -1}}}, `tool "a" has a negative count`},
		{"empty name", &toolstate.State{Tools: map[string]toolstate.ToolState{"": {Status: toolstate.StatusAvailable}}}, "empty name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := toolstate.Marshal(tt.state)
			require.ErrorIs(t, err, toolstate.ErrInvalidState)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
