package gemini

import (
	"context"
	"time"
)

// SetRetrySleep replaces the retry transport's wait, for tests.
func SetRetrySleep(m *Model, sleep func(ctx context.Context, d time.Duration) error) {
	m.retry.Sleep = sleep
}
