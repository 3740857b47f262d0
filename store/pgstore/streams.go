package pgstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/internal/backend"
)

// streamColumns, then the store's time (now), which the caller passes
// as $2 (see Store.clockArg).
const streamColumns = `id, chat_id, token, state, started, lease_expires, ended, next_seq, stop_requested, coalesce($2::timestamptz, now())`

// streamRow is a stream as stored (State is active until the stream ends,
// whatever its lease), and the store's time when it was read.
type streamRow struct {
	info  store.Stream
	token string
	now   time.Time
}

// getStream returns the stream with the given id as stored, or nil.
func (s *Store) getStream(ctx context.Context, streamID string) (*streamRow, error) {
	return scanStream(s.pool.QueryRow(ctx, `SELECT `+streamColumns+` FROM agentloop_streams WHERE id = $1`, streamID, s.clockArg()))
}

func scanStream(row pgx.Row) (*streamRow, error) {
	var r streamRow
	var state string
	var ended *time.Time
	err := row.Scan(&r.info.ID, &r.info.ChatID, &r.token, &state, &r.info.Started, &r.info.LeaseExpires, &ended, &r.info.Len, &r.info.StopRequested, &r.now)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.info.State = store.StreamState(state)
	r.info.Started, r.info.LeaseExpires, r.now = utc(r.info.Started), utc(r.info.LeaseExpires), utc(r.now)
	if ended != nil {
		r.info.Ended = utc(*ended)
	}
	return &r, nil
}

// lost returns the error of a lease that a write did not find valid,
// saying why.
func (s *Store) lost(ctx context.Context, op string, l store.Lease) error {
	r, err := s.getStream(ctx, l.StreamID)
	if err != nil {
		return s.fail(op, err)
	}
	if r == nil {
		return backend.LeaseLost(l.StreamID, backend.WhyLost(nil, "", l.Token, time.Time{}))
	}
	why := backend.WhyLost(&r.info, r.token, l.Token, r.now)
	if why == "" {
		why = "was not held when written" // the clocks of the write and the re-read disagree
	}
	return backend.LeaseLost(l.StreamID, why)
}

// StartStream implements [store.StreamWriter]. The partial unique index
// agentloop_streams_one_active keeps one active stream per chat, whichever
// replica starts it.
func (s *Store) StartStream(ctx context.Context, chatID string, ttl time.Duration) (store.Lease, error) {
	if err := store.CheckID("chat id", chatID); err != nil {
		return store.Lease{}, err
	}
	if err := store.CheckTTL(ttl); err != nil {
		return store.Lease{}, err
	}
	if err := s.check(ctx); err != nil {
		return store.Lease{}, err
	}
	for {
		l, err := s.startStream(ctx, chatID, ttl)
		if !errors.Is(err, errStreamJustEnded) {
			return l, err
		}
		// The active stream that refused the insert ended or expired
		// since: try again (a store that fails keeps failing, and ctx
		// ends the tries).
		if err := ctx.Err(); err != nil {
			return store.Lease{}, err
		}
	}
}

// errStreamJustEnded is startStream's error when the chat's active stream
// refused the new one but ended before it could be named.
var errStreamJustEnded = errors.New("pgstore: the active stream ended meanwhile")

// startStream is one try of StartStream.
func (s *Store) startStream(ctx context.Context, chatID string, ttl time.Duration) (store.Lease, error) {
	l := store.Lease{ChatID: chatID, StreamID: backend.RandomID(), Token: backend.RandomID()}
	err := s.retryWrite(ctx, func() error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			// A stream whose holder let its lease expire is interrupted, and
			// its followers hear of it.
			if _, err := tx.Exec(ctx, `UPDATE agentloop_streams SET state = 'interrupted', ended = lease_expires
			WHERE chat_id = $1 AND state = 'active' AND lease_expires <= coalesce($2::timestamptz, now())
			RETURNING pg_notify('`+channel+`', id)`, chatID, s.clockArg()); err != nil {
				return err
			}
			return tx.QueryRow(ctx, `INSERT INTO agentloop_streams (id, chat_id, token, state, started, lease_expires)
			VALUES ($1, $2, $3, 'active', coalesce($4::timestamptz, now()), coalesce($4::timestamptz, now()) + $5::float8 * interval '1 microsecond')
			RETURNING lease_expires`, l.StreamID, chatID, l.Token, s.clockArg(), float64(ttl.Microseconds())).Scan(&l.Expires)
		})
	})
	switch pgCode(err) {
	case "":
	case foreignKeyViolation:
		return store.Lease{}, notFound("chat", chatID)
	case uniqueViolation:
		active, err := s.ActiveStream(ctx, chatID)
		if errors.Is(err, store.ErrNotFound) {
			return store.Lease{}, errStreamJustEnded
		}
		if err != nil {
			return store.Lease{}, err
		}
		return store.Lease{}, &store.ActiveStreamError{ChatID: chatID, StreamID: active.ID, LeaseExpires: active.LeaseExpires}
	}
	if err != nil {
		return store.Lease{}, s.fail("start stream", err)
	}
	l.Expires = utc(l.Expires)
	return l, nil
}

// heldBy is the condition of a write that only the lease holder may make.
const heldBy = `id = $1 AND token = $2 AND state = 'active' AND lease_expires > coalesce($3::timestamptz, now())`

// AppendChunks implements [store.StreamWriter]: one statement moves the
// stream's next sequence number on (if the lease holds), inserts the
// chunks and notifies.
func (s *Store) AppendChunks(ctx context.Context, l store.Lease, chunks ...[]byte) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	data := make([][]byte, len(chunks))
	for i, c := range chunks {
		if c == nil {
			c = []byte{} // not NULL
		}
		data[i] = c
	}
	var next int64
	err := s.retryWrite(ctx, func() error {
		return s.pool.QueryRow(ctx, `WITH s AS (
				UPDATE agentloop_streams SET next_seq = next_seq + cardinality($4::bytea[])
				WHERE `+heldBy+`
				RETURNING next_seq
			), ins AS (
				INSERT INTO agentloop_chunks (stream_id, seq, data)
				SELECT $1, s.next_seq - cardinality($4::bytea[]) + c.ord - 1, c.data
				FROM s, unnest($4::bytea[]) WITH ORDINALITY AS c (data, ord)
			)
			SELECT next_seq, CASE WHEN cardinality($4::bytea[]) > 0 THEN pg_notify('`+channel+`', $1) END FROM s`,
			l.StreamID, l.Token, s.clockArg(), data).Scan(&next, nil)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, s.lost(ctx, "append chunks", l)
	}
	if err != nil {
		return 0, s.fail("append chunks", err)
	}
	return next, nil
}

// RenewLease implements [store.StreamWriter].
func (s *Store) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if err := store.CheckTTL(ttl); err != nil {
		return store.Lease{}, err
	}
	if err := s.check(ctx); err != nil {
		return store.Lease{}, err
	}
	err := s.retryWrite(ctx, func() error {
		return s.pool.QueryRow(ctx, `WITH s AS (
				UPDATE agentloop_streams SET lease_expires = coalesce($3::timestamptz, now()) + $4::float8 * interval '1 microsecond'
				WHERE `+heldBy+`
				RETURNING lease_expires
			)
			SELECT lease_expires, pg_notify('`+channel+`', $1) FROM s`,
			l.StreamID, l.Token, s.clockArg(), float64(ttl.Microseconds())).Scan(&l.Expires, nil)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Lease{}, s.lost(ctx, "renew lease", l)
	}
	if err != nil {
		return store.Lease{}, s.fail("renew lease", err)
	}
	l.Expires = utc(l.Expires)
	return l, nil
}

// EndStream implements [store.StreamWriter].
func (s *Store) EndStream(ctx context.Context, l store.Lease, state store.StreamState) error {
	if err := store.CheckEndState(state); err != nil {
		return err
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	err := s.retryWrite(ctx, func() error {
		return s.pool.QueryRow(ctx, `WITH s AS (
				UPDATE agentloop_streams SET state = $4, ended = coalesce($3::timestamptz, now())
				WHERE `+heldBy+`
				RETURNING id
			)
			SELECT pg_notify('`+channel+`', $1) FROM s`,
			l.StreamID, l.Token, s.clockArg(), string(state)).Scan(nil)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return s.lost(ctx, "end stream", l)
	}
	if err != nil {
		return s.fail("end stream", err)
	}
	return nil
}

// WaitStop implements [store.StreamWriter].
func (s *Store) WaitStop(ctx context.Context, l store.Lease) error {
	return s.waiter.WaitStop(ctx, l, func(ctx context.Context, l store.Lease) (bool, time.Time, error) {
		if err := s.check(ctx); err != nil {
			return false, time.Time{}, err
		}
		r, err := s.getStream(ctx, l.StreamID)
		if err != nil {
			return false, time.Time{}, s.fail("wait for a stop", err)
		}
		var info *store.Stream
		var token string
		var now time.Time
		if r != nil {
			info, token, now = &r.info, r.token, r.now
		}
		if why := backend.WhyLost(info, token, l.Token, now); why != "" {
			return false, time.Time{}, backend.LeaseLost(l.StreamID, why)
		}
		return r.info.StopRequested, r.info.LeaseExpires, nil
	})
}

// StopStream implements [store.Streams].
func (s *Store) StopStream(ctx context.Context, chatID string) error {
	if err := store.CheckID("chat id", chatID); err != nil {
		return err
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	err := s.retryWrite(ctx, func() error {
		return s.pool.QueryRow(ctx, `WITH s AS (
				UPDATE agentloop_streams SET stop_requested = true
				WHERE chat_id = $1 AND state = 'active' AND lease_expires > coalesce($2::timestamptz, now())
				RETURNING id
			)
			SELECT pg_notify('`+channel+`', id) FROM s`, chatID, s.clockArg()).Scan(nil)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return noActiveStream(chatID)
	}
	if err != nil {
		return s.fail("stop stream", err)
	}
	return nil
}

func noActiveStream(chatID string) error {
	return fmt.Errorf("%w: chat %q has no active stream", store.ErrNotFound, chatID)
}

// ActiveStream implements [store.StreamReader].
func (s *Store) ActiveStream(ctx context.Context, chatID string) (*store.Stream, error) {
	if err := store.CheckID("chat id", chatID); err != nil {
		return nil, err
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var r *streamRow
	err := s.retryRead(ctx, func() (err error) {
		r, err = scanStream(s.pool.QueryRow(ctx, `SELECT `+streamColumns+` FROM agentloop_streams
			WHERE chat_id = $1 AND state = 'active' AND lease_expires > coalesce($2::timestamptz, now())`, chatID, s.clockArg()))
		return err
	})
	if err != nil {
		return nil, s.fail("get active stream", err)
	}
	if r == nil {
		return nil, noActiveStream(chatID)
	}
	return &r.info, nil
}

// GetStream implements [store.StreamReader].
func (s *Store) GetStream(ctx context.Context, streamID string) (*store.Stream, error) {
	info, _, err := s.read(ctx, streamID, 0, 0)
	return info, err
}

// read returns the stream, in the state it effectively has now, and up to
// max of its chunks from sequence number from on.
func (s *Store) read(ctx context.Context, streamID string, from int64, max int) (info *store.Stream, chunks []store.Chunk, err error) {
	if err := store.CheckID("stream id", streamID); err != nil {
		return nil, nil, err
	}
	if err := s.check(ctx); err != nil {
		return nil, nil, err
	}
	err = s.retryRead(ctx, func() (err error) {
		info, chunks, err = s.readOnce(ctx, streamID, from, max)
		return err
	})
	return info, chunks, err
}

// readOnce is one attempt of read.
func (s *Store) readOnce(ctx context.Context, streamID string, from int64, max int) (*store.Stream, []store.Chunk, error) {
	r, err := s.getStream(ctx, streamID)
	if err != nil {
		return nil, nil, s.fail("read stream", err)
	}
	if r == nil {
		return nil, nil, notFound("stream", streamID)
	}
	backend.EffectiveState(&r.info, r.now)
	if max == 0 || from >= r.info.Len {
		return &r.info, nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, data FROM agentloop_chunks
		WHERE stream_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq LIMIT $4`, streamID, from, r.info.Len, max)
	if err != nil {
		return nil, nil, s.fail("read stream", err)
	}
	chunks, err := pgx.CollectRows(rows, pgx.RowToStructByPos[store.Chunk])
	if err != nil {
		return nil, nil, s.fail("read stream", err)
	}
	return &r.info, chunks, nil
}

// ReadStream implements [store.StreamReader].
func (s *Store) ReadStream(ctx context.Context, streamID string, from int64) iter.Seq2[store.Chunk, error] {
	return s.waiter.Follow(ctx, streamID, from, s.read)
}

// DeleteEndedStreams implements [store.Streams].
func (s *Store) DeleteEndedStreams(ctx context.Context, before time.Time) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	var n int64
	err := s.retryWrite(ctx, func() error {
		return s.pool.QueryRow(ctx, `WITH d AS (
				DELETE FROM agentloop_streams
				WHERE (state <> 'active' AND ended < $1)
				   OR (state = 'active' AND lease_expires <= coalesce($2::timestamptz, now()) AND lease_expires < $1)
				RETURNING id
			), n AS (
				SELECT pg_notify('`+channel+`', id) FROM d
			)
			SELECT count(*) FROM n`, before, s.clockArg()).Scan(&n)
	})
	if err != nil {
		return 0, s.fail("delete ended streams", err)
	}
	return n, nil
}
