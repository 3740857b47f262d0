package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
	var created, updated int64
	var history []byte
	err := s.r.QueryRowContext(ctx, `SELECT owner, title, version, created, updated, history FROM agentloop_chats WHERE id = ?`, id).
		Scan(&c.Owner, &c.Title, &c.Version, &created, &updated, &history)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("chat", id)
	}
	if err != nil {
		return nil, s.fail("get chat", err)
	}
	c.Created, c.Updated = fromMicros(created), fromMicros(updated)
	c.History, err = backend.DecodeHistory(id, c.Version, history)
	return c, err
}

// chatVersion returns the stored version of the chat, 0 if there is none.
func chatVersion(ctx context.Context, tx *sql.Tx, id string) (int64, error) {
	var v int64
	err := tx.QueryRowContext(ctx, `SELECT version FROM agentloop_chats WHERE id = ?`, id).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v, db(err)
}

// PutChat implements [store.Chats].
func (s *Store) PutChat(ctx context.Context, c *store.Chat) error {
	if err := store.CheckChat(c); err != nil {
		return err
	}
	history, err := backend.EncodeHistory(c.ID, c.History)
	if err != nil {
		return err
	}
	var version, created, now int64
	err = s.write(ctx, "put chat", func(tx *sql.Tx) error {
		have, err := chatVersion(ctx, tx, c.ID)
		if err != nil {
			return err
		}
		if have != c.Version {
			return &store.ConflictError{ChatID: c.ID, Want: c.Version, Have: have}
		}
		if version, err = nextVersion(ctx, tx); err != nil {
			return err
		}
		now = s.clock()
		if have == 0 {
			created = now
			_, err = tx.ExecContext(ctx, `INSERT INTO agentloop_chats (id, owner, title, version, created, updated, history) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				c.ID, c.Owner, c.Title, version, now, now, history)
			return db(err)
		}
		return db(tx.QueryRowContext(ctx, `UPDATE agentloop_chats SET owner = ?, title = ?, version = ?, updated = ?, history = ? WHERE id = ? RETURNING created`,
			c.Owner, c.Title, version, now, history, c.ID).Scan(&created))
	})
	if err != nil {
		return err
	}
	c.Version, c.Created, c.Updated = version, fromMicros(created), fromMicros(now)
	return nil
}

// DeleteChat implements [store.Chats].
func (s *Store) DeleteChat(ctx context.Context, id string, version int64) error {
	if err := store.CheckID("chat id", id); err != nil {
		return err
	}
	var streams []string
	err := s.write(ctx, "delete chat", func(tx *sql.Tx) error {
		have, err := chatVersion(ctx, tx, id)
		switch {
		case err != nil:
			return err
		case have == 0:
			return notFound("chat", id)
		case have != version:
			return &store.ConflictError{ChatID: id, Want: version, Have: have}
		}
		if streams, err = queryStrings(ctx, tx, `SELECT id FROM agentloop_streams WHERE chat_id = ?`, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM agentloop_chats WHERE id = ?`, id) // and, by cascade, the rest
		return db(err)
	})
	for _, sid := range streams {
		s.hub.Notify(sid)
	}
	return err
}

func queryStrings(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, db(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, db(err)
		}
		out = append(out, s)
	}
	return out, db(rows.Err())
}

// ListChats implements [store.ChatLister].
func (s *Store) ListChats(ctx context.Context, q store.ListQuery) (*store.ChatPage, error) {
	limit, err := q.PageSize()
	if err != nil {
		return nil, err
	}
	// With no cursor, start after the newest possible chat.
	afterUpdated, afterID, first := int64(0), "", q.Cursor == ""
	if !first {
		t, id, err := backend.DecodeCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		afterUpdated, afterID = t.UnixMicro(), id
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, title, updated FROM agentloop_chats
		WHERE owner = ? AND (? OR (updated, id) < (?, ?))
		ORDER BY updated DESC, id DESC LIMIT ?`, q.Owner, first, afterUpdated, afterID, limit+1)
	if err != nil {
		return nil, s.fail("list chats", err)
	}
	defer rows.Close()
	page := &store.ChatPage{Chats: []store.ChatSummary{}}
	for rows.Next() {
		var c store.ChatSummary
		var updated int64
		if err := rows.Scan(&c.ID, &c.Title, &updated); err != nil {
			return nil, s.fail("list chats", err)
		}
		c.Updated = fromMicros(updated)
		page.Chats = append(page.Chats, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("list chats", err)
	}
	if len(page.Chats) > limit {
		page.Chats = page.Chats[:limit]
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
	var updated int64
	err := s.r.QueryRowContext(ctx, `SELECT version, updated, data FROM `+docTable(chatID)+` WHERE chat_id = ? AND name = ?`, chatID, name).
		Scan(&d.Version, &updated, &d.Data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, docNotFound(chatID, name)
	}
	if err != nil {
		return nil, s.fail("get document", err)
	}
	d.Updated = fromMicros(updated)
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

func docVersion(ctx context.Context, tx *sql.Tx, chatID, name string) (int64, error) {
	var v int64
	err := tx.QueryRowContext(ctx, `SELECT version FROM `+docTable(chatID)+` WHERE chat_id = ? AND name = ?`, chatID, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v, db(err)
}

// PutDoc implements [store.Docs].
func (s *Store) PutDoc(ctx context.Context, d *store.Doc) error {
	if err := store.CheckDoc(d); err != nil {
		return err
	}
	data := d.Data
	if data == nil {
		data = []byte{} // not NULL
	}
	var version, now int64
	err := s.write(ctx, "put document", func(tx *sql.Tx) error {
		if d.ChatID != "" {
			chat, err := chatVersion(ctx, tx, d.ChatID)
			if err != nil {
				return err
			}
			if chat == 0 {
				return notFound("chat", d.ChatID)
			}
		}
		have, err := docVersion(ctx, tx, d.ChatID, d.Name)
		if err != nil {
			return err
		}
		if have != d.Version {
			return &store.ConflictError{ChatID: d.ChatID, Doc: d.Name, Want: d.Version, Have: have}
		}
		if version, err = nextVersion(ctx, tx); err != nil {
			return err
		}
		now = s.clock()
		_, err = tx.ExecContext(ctx, `INSERT INTO `+docTable(d.ChatID)+` (chat_id, name, version, updated, data) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (chat_id, name) DO UPDATE SET version = excluded.version, updated = excluded.updated, data = excluded.data`,
			d.ChatID, d.Name, version, now, data)
		return db(err)
	})
	if err != nil {
		return err
	}
	d.Version, d.Updated = version, fromMicros(now)
	return nil
}

// DeleteDoc implements [store.Docs].
func (s *Store) DeleteDoc(ctx context.Context, chatID, name string, version int64) error {
	if err := store.CheckDoc(&store.Doc{ChatID: chatID, Name: name}); err != nil {
		return err
	}
	return s.write(ctx, "delete document", func(tx *sql.Tx) error {
		have, err := docVersion(ctx, tx, chatID, name)
		switch {
		case err != nil:
			return err
		case have == 0:
			return docNotFound(chatID, name)
		case have != version:
			return &store.ConflictError{ChatID: chatID, Doc: name, Want: version, Have: have}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM `+docTable(chatID)+` WHERE chat_id = ? AND name = ?`, chatID, name)
		return db(err)
	})
}
