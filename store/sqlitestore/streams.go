package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/internal/backend"
)

const streamColumns = `id, chat_id, token, state, started, lease_expires, COALESCE(ended, 0), next_seq, stop_requested`

// streamRow is a stream as stored: State is active until the stream ends,
// whatever its lease.
type streamRow struct {
	info  store.Stream
	token string
}

func scanStream(row *sql.Row) (*streamRow, error) {
	var r streamRow
	var state string
	var started, expires, ended int64
	err := row.Scan(&r.info.ID, &r.info.ChatID, &r.token, &state, &started, &expires, &ended, &r.info.Len, &r.info.StopRequested)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, db(err)
	}
	r.info.State = store.StreamState(state)
	r.info.Started, r.info.LeaseExpires = fromMicros(started), fromMicros(expires)
	if ended != 0 {
		r.info.Ended = fromMicros(ended)
	}
	return &r, nil
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// getStream returns the stream as stored, or nil.
func getStream(ctx context.Context, q queryRower, streamID string) (*streamRow, error) {
	return scanStream(q.QueryRowContext(ctx, `SELECT `+streamColumns+` FROM agentloop_streams WHERE id = ?`, streamID))
}

// held returns the lease's stream if the lease still holds it at now.
func held(ctx context.Context, q queryRower, l store.Lease, now int64) (*streamRow, error) {
	r, err := getStream(ctx, q, l.StreamID)
	if err != nil {
		return nil, err
	}
	var info *store.Stream
	var token string
	if r != nil {
		info, token = &r.info, r.token
	}
	if why := backend.WhyLost(info, token, l.Token, fromMicros(now)); why != "" {
		return nil, backend.LeaseLost(l.StreamID, why)
	}
	return r, nil
}

// StartStream implements [store.StreamWriter].
func (s *Store) StartStream(ctx context.Context, chatID string, ttl time.Duration) (store.Lease, error) {
	if err := store.CheckID("chat id", chatID); err != nil {
		return store.Lease{}, err
	}
	if err := store.CheckTTL(ttl); err != nil {
		return store.Lease{}, err
	}
	var l store.Lease
	var interrupted string
	err := s.write(ctx, "start stream", func(tx *sql.Tx) error {
		chat, err := chatVersion(ctx, tx, chatID)
		if err != nil {
			return err
		}
		if chat == 0 {
			return notFound("chat", chatID)
		}
		now := s.clock()
		old, err := scanStream(tx.QueryRowContext(ctx, `SELECT `+streamColumns+` FROM agentloop_streams WHERE chat_id = ? AND state = 'active'`, chatID))
		if err != nil {
			return err
		}
		if old != nil {
			if now < old.info.LeaseExpires.UnixMicro() {
				return &store.ActiveStreamError{ChatID: chatID, StreamID: old.info.ID, LeaseExpires: old.info.LeaseExpires}
			}
			if _, err := tx.ExecContext(ctx, `UPDATE agentloop_streams SET state = 'interrupted', ended = lease_expires WHERE id = ?`, old.info.ID); err != nil {
				return db(err)
			}
			interrupted = old.info.ID
		}
		l = store.Lease{ChatID: chatID, StreamID: backend.RandomID(), Token: backend.RandomID(), Expires: fromMicros(now).Add(ttl)}
		_, err = tx.ExecContext(ctx, `INSERT INTO agentloop_streams (id, chat_id, token, state, started, lease_expires) VALUES (?, ?, ?, 'active', ?, ?)`,
			l.StreamID, chatID, l.Token, now, l.Expires.UnixMicro())
		return db(err)
	})
	if interrupted != "" && err == nil {
		s.hub.Notify(interrupted)
	}
	return l, err
}

// AppendChunks implements [store.StreamWriter].
func (s *Store) AppendChunks(ctx context.Context, l store.Lease, chunks ...[]byte) (int64, error) {
	var next int64
	err := s.write(ctx, "append chunks", func(tx *sql.Tx) error {
		r, err := held(ctx, tx, l, s.clock())
		if err != nil {
			return err
		}
		next = r.info.Len
		if len(chunks) == 0 {
			return nil
		}
		insert, err := tx.PrepareContext(ctx, `INSERT INTO agentloop_chunks (stream_id, seq, data) VALUES (?, ?, ?)`)
		if err != nil {
			return db(err)
		}
		defer insert.Close()
		for _, c := range chunks {
			if c == nil {
				c = []byte{} // not NULL
			}
			if _, err := insert.ExecContext(ctx, l.StreamID, next, c); err != nil {
				return db(err)
			}
			next++
		}
		_, err = tx.ExecContext(ctx, `UPDATE agentloop_streams SET next_seq = ? WHERE id = ?`, next, l.StreamID)
		return db(err)
	})
	if err != nil {
		return 0, err
	}
	if len(chunks) > 0 {
		s.hub.Notify(l.StreamID)
	}
	return next, nil
}

// RenewLease implements [store.StreamWriter].
func (s *Store) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if err := store.CheckTTL(ttl); err != nil {
		return store.Lease{}, err
	}
	err := s.write(ctx, "renew lease", func(tx *sql.Tx) error {
		now := s.clock()
		if _, err := held(ctx, tx, l, now); err != nil {
			return err
		}
		l.Expires = fromMicros(now).Add(ttl)
		_, err := tx.ExecContext(ctx, `UPDATE agentloop_streams SET lease_expires = ? WHERE id = ?`, l.Expires.UnixMicro(), l.StreamID)
		return db(err)
	})
	if err != nil {
		return store.Lease{}, err
	}
	s.hub.Notify(l.StreamID)
	return l, nil
}

// EndStream implements [store.StreamWriter].
func (s *Store) EndStream(ctx context.Context, l store.Lease, state store.StreamState) error {
	if err := store.CheckEndState(state); err != nil {
		return err
	}
	err := s.write(ctx, "end stream", func(tx *sql.Tx) error {
		now := s.clock()
		if _, err := held(ctx, tx, l, now); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE agentloop_streams SET state = ?, ended = ? WHERE id = ?`, string(state), now, l.StreamID)
		return db(err)
	})
	if err == nil {
		s.hub.Notify(l.StreamID)
	}
	return err
}

// WaitStop implements [store.StreamWriter].
func (s *Store) WaitStop(ctx context.Context, l store.Lease) error {
	return s.waiter.WaitStop(ctx, l, func(ctx context.Context, l store.Lease) (bool, time.Time, error) {
		if err := s.check(ctx); err != nil {
			return false, time.Time{}, err
		}
		r, err := held(ctx, s.r, l, s.clock())
		if err != nil {
			var dbErr *dbError
			if errors.As(err, &dbErr) {
				err = s.fail("wait for a stop", dbErr.err)
			}
			return false, time.Time{}, err
		}
		return r.info.StopRequested, r.info.LeaseExpires, nil
	})
}

// StopStream implements [store.Streams].
func (s *Store) StopStream(ctx context.Context, chatID string) error {
	if err := store.CheckID("chat id", chatID); err != nil {
		return err
	}
	var streamID string
	err := s.write(ctx, "stop stream", func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE agentloop_streams SET stop_requested = 1
			WHERE chat_id = ? AND state = 'active' AND lease_expires > ? RETURNING id`, chatID, s.clock()).Scan(&streamID)
		if errors.Is(err, sql.ErrNoRows) {
			return noActiveStream(chatID)
		}
		return db(err)
	})
	if err == nil {
		s.hub.Notify(streamID)
	}
	return err
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
	r, err := scanStream(s.r.QueryRowContext(ctx, `SELECT `+streamColumns+` FROM agentloop_streams
		WHERE chat_id = ? AND state = 'active' AND lease_expires > ?`, chatID, s.clock()))
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
func (s *Store) read(ctx context.Context, streamID string, from int64, max int) (*store.Stream, []store.Chunk, error) {
	if err := store.CheckID("stream id", streamID); err != nil {
		return nil, nil, err
	}
	if err := s.check(ctx); err != nil {
		return nil, nil, err
	}
	r, err := getStream(ctx, s.r, streamID)
	if err != nil {
		return nil, nil, s.fail("read stream", err)
	}
	if r == nil {
		return nil, nil, notFound("stream", streamID)
	}
	backend.EffectiveState(&r.info, fromMicros(s.clock()))
	if max == 0 || from >= r.info.Len {
		return &r.info, nil, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, data FROM agentloop_chunks WHERE stream_id = ? AND seq >= ? AND seq < ? ORDER BY seq LIMIT ?`,
		streamID, from, r.info.Len, max)
	if err != nil {
		return nil, nil, s.fail("read stream", err)
	}
	defer rows.Close()
	var chunks []store.Chunk
	for rows.Next() {
		var c store.Chunk
		if err := rows.Scan(&c.Seq, &c.Data); err != nil {
			return nil, nil, s.fail("read stream", err)
		}
		chunks = append(chunks, c)
	}
	if err := rows.Err(); err != nil {
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
	var ids []string
	err := s.write(ctx, "delete ended streams", func(tx *sql.Tx) error {
		var err error
		ids, err = queryStrings(ctx, tx, `DELETE FROM agentloop_streams
			WHERE (state <> 'active' AND ended < ?1) OR (state = 'active' AND lease_expires <= ?2 AND lease_expires < ?1)
			RETURNING id`, before.UnixMicro(), s.clock())
		return err
	})
	for _, id := range ids {
		s.hub.Notify(id)
	}
	return int64(len(ids)), err
}
