package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/store"
)

// migrations are the schema's versions: migrations[i] takes a database
// from version i to version i+1. They are only ever appended to.
var migrations = []string{
	// 1: chats, their documents, their streams and the streams' chunks.
	// Times are Unix microseconds; versions come from agentloop_seq.
	`CREATE TABLE agentloop_seq (n INTEGER NOT NULL);
	INSERT INTO agentloop_seq (n) VALUES (0);

	CREATE TABLE agentloop_chats (
		id      TEXT PRIMARY KEY,
		owner   TEXT NOT NULL,
		title   TEXT NOT NULL,
		version INTEGER NOT NULL,
		created INTEGER NOT NULL,
		updated INTEGER NOT NULL,
		history BLOB NOT NULL
	);
	CREATE INDEX agentloop_chats_list ON agentloop_chats (owner, updated DESC, id DESC);

	CREATE TABLE agentloop_docs (
		chat_id TEXT NOT NULL REFERENCES agentloop_chats (id) ON DELETE CASCADE,
		name    TEXT NOT NULL,
		version INTEGER NOT NULL,
		updated INTEGER NOT NULL,
		data    BLOB NOT NULL,
		PRIMARY KEY (chat_id, name)
	);

	CREATE TABLE agentloop_streams (
		id             TEXT PRIMARY KEY,
		chat_id        TEXT NOT NULL REFERENCES agentloop_chats (id) ON DELETE CASCADE,
		token          TEXT NOT NULL,
		state          TEXT NOT NULL,
		started        INTEGER NOT NULL,
		lease_expires  INTEGER NOT NULL,
		ended          INTEGER,
		next_seq       INTEGER NOT NULL DEFAULT 0,
		stop_requested INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX agentloop_streams_chat ON agentloop_streams (chat_id);
	CREATE UNIQUE INDEX agentloop_streams_one_active ON agentloop_streams (chat_id) WHERE state = 'active';

	CREATE TABLE agentloop_chunks (
		stream_id TEXT NOT NULL REFERENCES agentloop_streams (id) ON DELETE CASCADE,
		seq       INTEGER NOT NULL,
		data      BLOB NOT NULL,
		PRIMARY KEY (stream_id, seq)
	) WITHOUT ROWID;`,
	// 2: documents of no chat (store.Doc with an empty ChatID), in a table
	// of their own with the same columns, so that every query of a
	// document reads the same and the chats' foreign key stays as it is.
	`CREATE TABLE agentloop_chatless_docs (
		chat_id TEXT NOT NULL DEFAULT '' CHECK (chat_id = ''),
		name    TEXT NOT NULL,
		version INTEGER NOT NULL,
		updated INTEGER NOT NULL,
		data    BLOB NOT NULL,
		PRIMARY KEY (chat_id, name)
	);`,
}

// SchemaVersion is the version of the schema this build creates and reads.
func SchemaVersion() int { return len(migrations) }

// migrate brings the database's schema to [SchemaVersion], in one
// transaction that holds SQLite's write lock, so that processes opening the
// file at once migrate it once. A database at that version is left alone;
// one from a newer build is refused with an error wrapping
// [store.ErrNewerSchema].
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS agentloop_schema (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var version int
	err = tx.QueryRowContext(ctx, `SELECT version FROM agentloop_schema`).Scan(&version)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, `INSERT INTO agentloop_schema (version) VALUES (0)`)
	}
	if err != nil {
		return err
	}
	switch {
	case version > len(migrations):
		return fmt.Errorf("%w: the database is at schema version %d, this build knows versions up to %d (upgrade agentloop)", store.ErrNewerSchema, version, len(migrations))
	case version == len(migrations):
		return nil // nothing to write
	}
	for v := version; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrating to schema version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE agentloop_schema SET version = ?`, len(migrations)); err != nil {
		return err
	}
	return tx.Commit()
}
