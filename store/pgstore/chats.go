package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/internal/backend"
)

// GetChat implements [store.Chats].
func (s *Store) GetChat(ctx context.Context, id string) (*store.Chat, error) {
	if err := store.CheckID("chat id", id); err != nil {
		return nil, err
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	c := &store.Chat{ID: id}
	var history []byte
	err := s.retryRead(ctx, func() error {
		return s.pool.QueryRow(ctx, `SELECT owner, title, version, created, updated, history FROM agentloop_chats WHERE id = $1`, id).
			Scan(&c.Owner, &c.Title, &c.Version, &c.Created, &c.Updated, &history)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("chat", id)
	}
	if err != nil {
		return nil, s.fail("get chat", err)
	}
	c.Created, c.Updated = utc(c.Created), utc(c.Updated)
	c.History, err = backend.DecodeHistory(id, c.Version, history)
	return c, err
}

// chatVersion returns the stored version of the chat, 0 if there is none.
func (s *Store) chatVersion(ctx context.Context, id string) (int64, error) {
	var v int64
	err := s.retryRead(ctx, func() error {
		return s.pool.QueryRow(ctx, `SELECT version FROM agentloop_chats WHERE id = $1`, id).Scan(&v)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// PutChat implements [store.Chats]. The version check is in the write's
// WHERE clause (or ON CONFLICT, for a create), which PostgreSQL evaluates
// on the latest committed row.
func (s *Store) PutChat(ctx context.Context, c *store.Chat) error {
	if err := store.CheckChat(c); err != nil {
		return err
	}
	history, err := backend.EncodeHistory(c.ID, c.History)
	if err != nil {
		return err
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	var version int64
	var created, updated time.Time
	for attempt := 1; ; attempt++ {
		if c.Version == 0 {
			err = s.retryWrite(ctx, func() error {
				return s.pool.QueryRow(ctx, `INSERT INTO agentloop_chats (id, owner, title, history, version, created, updated)
					VALUES ($1, $2, $3, $4, nextval('agentloop_versions'), coalesce($5::timestamptz, now()), coalesce($5::timestamptz, now()))
					ON CONFLICT (id) DO NOTHING
					RETURNING version, created, updated`,
					c.ID, c.Owner, c.Title, history, s.clockArg()).Scan(&version, &created, &updated)
			})
		} else {
			err = s.retryWrite(ctx, func() error {
				return s.pool.QueryRow(ctx, `UPDATE agentloop_chats
					SET owner = $2, title = $3, history = $4, version = nextval('agentloop_versions'), updated = coalesce($6::timestamptz, now())
					WHERE id = $1 AND version = $5
					RETURNING version, created, updated`,
					c.ID, c.Owner, c.Title, history, c.Version, s.clockArg()).Scan(&version, &created, &updated)
			})
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			break
		}
		have, err := s.chatVersion(ctx, c.ID)
		if err != nil {
			return s.fail("put chat", err)
		}
		if have == 0 && c.Version == 0 && attempt < 3 {
			continue // the chat that was in the way was deleted meanwhile
		}
		return &store.ConflictError{ChatID: c.ID, Want: c.Version, Have: have}
	}
	if err != nil {
		return s.fail("put chat", err)
	}
	c.Version, c.Created, c.Updated = version, utc(created), utc(updated)
	return nil
}

// DeleteChat implements [store.Chats].
func (s *Store) DeleteChat(ctx context.Context, id string, version int64) error {
	if err := store.CheckID("chat id", id); err != nil {
		return err
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	// Followers of the chat's streams hear of it: the streams go with the
	// chat (by cascade), in the same statement.
	var deleted bool
	err := s.retryWrite(ctx, func() error {
		return s.pool.QueryRow(ctx, `WITH d AS (
				DELETE FROM agentloop_chats WHERE id = $1 AND version = $2 RETURNING id
			), n AS (
				SELECT pg_notify('`+channel+`', st.id) FROM agentloop_streams st, d WHERE st.chat_id = d.id
			)
			SELECT EXISTS (SELECT FROM d), (SELECT count(*) FROM n)`, id, version).Scan(&deleted, nil)
	})
	if err != nil {
		return s.fail("delete chat", err)
	}
	if deleted {
		return nil
	}
	have, err := s.chatVersion(ctx, id)
	switch {
	case err != nil:
		return s.fail("delete chat", err)
	case have == 0:
		return notFound("chat", id)
	}
	return &store.ConflictError{ChatID: id, Want: version, Have: have}
}

// ListChats implements [store.ChatLister].
func (s *Store) ListChats(ctx context.Context, q store.ListQuery) (*store.ChatPage, error) {
	limit, err := q.PageSize()
	if err != nil {
		return nil, err
	}
	var afterUpdated any // NULL: from the newest chat on
	var afterID string
	if q.Cursor != "" {
		t, id, err := backend.DecodeCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		afterUpdated, afterID = t, id
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, title, updated FROM agentloop_chats
		WHERE owner = $1 AND ($2::timestamptz IS NULL OR (updated, id) < ($2::timestamptz, $3::text COLLATE "C"))
		ORDER BY updated DESC, id DESC LIMIT $4`, q.Owner, afterUpdated, afterID, limit+1)
	if err != nil {
		return nil, s.fail("list chats", err)
	}
	chats, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.ChatSummary, error) {
		var c store.ChatSummary
		err := row.Scan(&c.ID, &c.Title, &c.Updated)
		c.Updated = utc(c.Updated)
		return c, err
	})
	if err != nil {
		return nil, s.fail("list chats", err)
	}
	page := &store.ChatPage{Chats: chats}
	if page.Chats == nil {
		page.Chats = []store.ChatSummary{}
	}
	if len(chats) > limit {
		page.Chats = chats[:limit]
		last := page.Chats[limit-1]
		page.Next = backend.EncodeCursor(last.Updated, last.ID)
	}
	return page, nil
}

// GetDoc implements [store.Docs].
func (s *Store) GetDoc(ctx context.Context, chatID, name string) (*store.Doc, error) {
	if err := store.CheckDoc(&store.Doc{ChatID: chatID, Name: name}); err != nil {
		return nil, err
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	d := &store.Doc{ChatID: chatID, Name: name}
	err := s.retryRead(ctx, func() error {
		return s.pool.QueryRow(ctx, `SELECT version, updated, data FROM `+docTable(chatID)+` WHERE chat_id = $1 AND name = $2`, chatID, name).
			Scan(&d.Version, &d.Updated, &d.Data)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, docNotFound(chatID, name)
	}
	if err != nil {
		return nil, s.fail("get document", err)
	}
	d.Updated = utc(d.Updated)
	return d, nil
}

func docNotFound(chatID, name string) error {
	if chatID == "" {
		return fmt.Errorf("%w: document %q of no chat", store.ErrNotFound, name)
	}
	return fmt.Errorf("%w: document %q of chat %q", store.ErrNotFound, name, chatID)
}

// docTable is the table of the chat's documents: agentloop_docs, or
// agentloop_chatless_docs for the documents of no chat (chatID ""), which
// has the same columns.
func docTable(chatID string) string {
	if chatID == "" {
		return "agentloop_chatless_docs"
	}
	return "agentloop_docs"
}

// docVersion returns the stored version of the document (0 if there is
// none) and whether its chat exists.
func (s *Store) docVersion(ctx context.Context, chatID, name string) (version int64, chatExists bool, err error) {
	err = s.retryRead(ctx, func() error {
		return s.pool.QueryRow(ctx, `SELECT
			coalesce((SELECT version FROM `+docTable(chatID)+` WHERE chat_id = $1 AND name = $2), 0),
			$1 = '' OR EXISTS (SELECT FROM agentloop_chats WHERE id = $1)`, chatID, name).Scan(&version, &chatExists)
	})
	return version, chatExists, err
}

// PutDoc implements [store.Docs].
func (s *Store) PutDoc(ctx context.Context, d *store.Doc) error {
	if err := store.CheckDoc(d); err != nil {
		return err
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	data := d.Data
	if data == nil {
		data = []byte{} // not NULL
	}
	var version int64
	var updated time.Time
	var err error
	if d.Version == 0 {
		err = s.retryWrite(ctx, func() error {
			return s.pool.QueryRow(ctx, `INSERT INTO `+docTable(d.ChatID)+` (chat_id, name, data, version, updated)
				VALUES ($1, $2, $3, nextval('agentloop_versions'), coalesce($4::timestamptz, now()))
				ON CONFLICT (chat_id, name) DO NOTHING
				RETURNING version, updated`, d.ChatID, d.Name, data, s.clockArg()).Scan(&version, &updated)
		})
	} else {
		err = s.retryWrite(ctx, func() error {
			return s.pool.QueryRow(ctx, `UPDATE `+docTable(d.ChatID)+`
				SET data = $3, version = nextval('agentloop_versions'), updated = coalesce($5::timestamptz, now())
				WHERE chat_id = $1 AND name = $2 AND version = $4
				RETURNING version, updated`, d.ChatID, d.Name, data, d.Version, s.clockArg()).Scan(&version, &updated)
		})
	}
	switch {
	case pgCode(err) == foreignKeyViolation:
		return notFound("chat", d.ChatID)
	case errors.Is(err, pgx.ErrNoRows):
		have, chatExists, err := s.docVersion(ctx, d.ChatID, d.Name)
		switch {
		case err != nil:
			return s.fail("put document", err)
		case !chatExists:
			return notFound("chat", d.ChatID)
		}
		return &store.ConflictError{ChatID: d.ChatID, Doc: d.Name, Want: d.Version, Have: have}
	case err != nil:
		return s.fail("put document", err)
	}
	d.Version, d.Updated = version, utc(updated)
	return nil
}

// DeleteDoc implements [store.Docs].
func (s *Store) DeleteDoc(ctx context.Context, chatID, name string, version int64) error {
	if err := store.CheckDoc(&store.Doc{ChatID: chatID, Name: name}); err != nil {
		return err
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	var tag pgconn.CommandTag
	err := s.retryWrite(ctx, func() (err error) {
		tag, err = s.pool.Exec(ctx, `DELETE FROM `+docTable(chatID)+` WHERE chat_id = $1 AND name = $2 AND version = $3`, chatID, name, version)
		return err
	})
	if err != nil {
		return s.fail("delete document", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	have, _, err := s.docVersion(ctx, chatID, name)
	switch {
	case err != nil:
		return s.fail("delete document", err)
	case have == 0:
		return docNotFound(chatID, name)
	}
	return &store.ConflictError{ChatID: chatID, Doc: name, Want: version, Have: have}
}
