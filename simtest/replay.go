package simtest

import (
	"os"
	"testing"

	"github.com/agentloop/agentloop"
)

// EnvRecord names the environment variable that makes [Replay] record
// instead of replaying: SIMTEST_RECORD=1 go test ./...
const EnvRecord = "SIMTEST_RECORD"

// Replay returns the model for a test that replays the session recorded in
// the script file at path, with no server. A replay whose agent sends
// something else than was recorded fails its model call with an
// [*ExpectationError] naming the first difference; when the test fails,
// Replay logs how to accept the change. A replay that leaves turns
// unplayed fails the test at cleanup.
//
// With SIMTEST_RECORD=1 in the environment, it records instead: it returns
// a [Recorder] around live() and writes path at cleanup if the test
// passed, so a changed agent is accepted by running the test once against
// the live model. live is called only then.
func Replay(tb testing.TB, path string, live func() agentloop.Model) agentloop.Model {
	tb.Helper()
	if os.Getenv(EnvRecord) == "1" {
		r := &Recorder{Model: live()}
		tb.Cleanup(func() {
			if tb.Failed() {
				tb.Logf("simtest: the session was not written to %s: the test failed", path)
				return
			}
			if err := r.Script().WriteFile(path); err != nil {
				tb.Error(err)
			}
		})
		return r
	}
	s, err := LoadScript(path)
	if err != nil {
		tb.Fatalf("%v (record it with %s=1)", err, EnvRecord)
	}
	m := s.Model()
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("simtest: the replay of %s failed; if the agent changed on purpose, accept the change by recording again with %s=1", path, EnvRecord)
			return
		}
		if n := m.Remaining(); n > 0 {
			tb.Errorf("simtest: the replay of %s left %d of %d turns unplayed (record again with %s=1 if the agent changed on purpose)", path, n, len(s.Turns), EnvRecord)
		}
	})
	return m
}
