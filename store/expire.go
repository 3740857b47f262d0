package store

import (
	"context"
	"errors"
	"time"
)

// ExpireStreams deletes the stream logs that ended more than keep ago
// ([Streams.DeleteEndedStreams]) once every interval, until ctx is done,
// and then returns ctx's error. A server runs it in a goroutine; every
// replica may run one, since a delete of what is already gone deletes
// nothing. The error of a round goes to onError (nil ignores it) and the
// next round goes on. A non-positive interval or a negative keep is an
// error wrapping [ErrInvalid], returned at once.
//
// A log is only needed while its run is active (a client resumes an
// active stream), so keep can be short; a few minutes leave time to look
// at a finished run's log.
func ExpireStreams(ctx context.Context, s Streams, interval, keep time.Duration, onError func(error)) error {
	if interval <= 0 || keep < 0 {
		return errors.Join(ErrInvalid, errors.New("store: ExpireStreams needs a positive interval and a keep of zero or more"))
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if _, err := s.DeleteEndedStreams(ctx, time.Now().Add(-keep)); err != nil && ctx.Err() == nil && onError != nil {
			onError(err)
		}
	}
}
