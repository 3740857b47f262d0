package aisdk

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
)

// conflictOnce is a store whose first document write loses a race: another
// writer saved the document between this writer's read and its write.
type conflictOnce struct {
	*memstore.Store
	raced atomic.Bool
}

func (s *conflictOnce) PutDoc(ctx context.Context, d *store.Doc) error {
	if !s.raced.Swap(true) {
		rival := &store.Doc{ChatID: d.ChatID, Name: d.Name, Version: d.Version, Data: []byte(`{"state":"failed"}`)}
		if err := s.Store.PutDoc(ctx, rival); err != nil {
			return err
		}
	}
	return s.Store.PutDoc(ctx, d)
}

func TestRecordRunEnd_ARacingWriteDoesNotLoseTheEnd(t *testing.T) {
	ctx := context.Background()
	st := &conflictOnce{Store: memstore.New(memstore.Options{})}
	err := st.PutChat(ctx, &store.Chat{ID: "c"})
	require.NoError(t, err)
	h := &ChatServer{Store: st}

	h.recordRunEnd(ctx, "c", store.StreamCancelled)

	require.True(t, st.raced.Load(), "the rival write did not happen")
	require.Equal(t, RunStopped, h.lastRun(ctx, "c"), "the run's end was lost to a version conflict")
}
