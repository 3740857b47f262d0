package openai

import (
	"context"
	"time"
)

// SetRetrySleep replaces the wait between retries (tests only; call before
// the first Stream).
func SetRetrySleep(m *Model, sleep func(context.Context, time.Duration) error) {
	m.ep.SetRetrySleep(sleep)
}
