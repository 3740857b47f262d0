package gemini_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every stream, finished, stopped early or failed, leaves no goroutine
// behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
