package backend

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
)

func TestCursor_RoundTripsAndRefusesTimesNoDatabaseHolds(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 123000, time.UTC)
	updated, id, err := DecodeCursor(EncodeCursor(at, "chat ü/1"))
	require.NoError(t, err)
	require.Equal(t, at, updated)
	require.Equal(t, "chat ü/1", id)
	for _, far := range []time.Time{time.UnixMicro(math.MaxInt64), time.UnixMicro(math.MinInt64), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		_, _, err := DecodeCursor(EncodeCursor(far, "c"))
		require.ErrorIs(t, err, store.ErrInvalid, "%v", far)
	}
	_, _, err = DecodeCursor(EncodeCursor(at, "nul\x00"))
	require.ErrorIs(t, err, store.ErrInvalid)
}
