package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentloop/agentloop/store"
)

// migrations are the schema's versions: migrations[i] takes a database
// from version i to version i+1. They are only ever appended to.
var migrations = []string{
	// 1: chats, their documents, their streams and the streams' chunks.
	// Ids compare bytewise (COLLATE "C"), as in every backend. Versions
	// come from agentloop_versions.
	`CREATE SEQUENCE agentloop_versions;

	CREATE TABLE agentloop_chats (
		id      text COLLATE "C" PRIMARY KEY,
		owner   text COLLATE "C" NOT NULL,
		title   text NOT NULL,
		version bigint NOT NULL,
		created timestamptz NOT NULL,
		updated timestamptz NOT NULL,
		history bytea NOT NULL
	);
	CREATE INDEX agentloop_chats_list ON agentloop_chats (owner, updated DESC, id DESC);

	CREATE TABLE agentloop_docs (
		chat_id text COLLATE "C" NOT NULL REFERENCES agentloop_chats (id) ON DELETE CASCADE,
		name    text COLLATE "C" NOT NULL,
		version bigint NOT NULL,
		updated timestamptz NOT NULL,
		data    bytea NOT NULL,
		PRIMARY KEY (chat_id, name)
	);

	CREATE TABLE agentloop_streams (
		id             text COLLATE "C" PRIMARY KEY,
		chat_id        text COLLATE "C" NOT NULL REFERENCES agentloop_chats (id) ON DELETE CASCADE,
		token          text NOT NULL,
		state          text NOT NULL,
		started        timestamptz NOT NULL,
		lease_expires  timestamptz NOT NULL,
		ended          timestamptz,
		next_seq       bigint NOT NULL DEFAULT 0,
		stop_requested boolean NOT NULL DEFAULT false
	);
	CREATE INDEX agentloop_streams_chat ON agentloop_streams (chat_id);
	CREATE UNIQUE INDEX agentloop_streams_one_active ON agentloop_streams (chat_id) WHERE state = 'active';

	CREATE TABLE agentloop_chunks (
		stream_id text COLLATE "C" NOT NULL REFERENCES agentloop_streams (id) ON DELETE CASCADE,
		seq       bigint NOT NULL,
		data      bytea NOT NULL,
		PRIMARY KEY (stream_id, seq)
	);`,
	// 2: documents of no chat (store.Doc with an empty ChatID), in a table
	// of their own with the same columns, so that every query of a
	// document reads the same and the chats' foreign key stays as it is.
	`CREATE TABLE agentloop_chatless_docs (
		chat_id text COLLATE "C" NOT NULL DEFAULT '' CHECK (chat_id = ''),
		name    text COLLATE "C" NOT NULL,
		version bigint NOT NULL,
		updated timestamptz NOT NULL,
		data    bytea NOT NULL,
		PRIMARY KEY (chat_id, name)
	);`,
}

// SchemaVersion is the version of the schema this build creates and reads.
func SchemaVersion() int { return len(migrations) }

// migrate creates the schema (the PostgreSQL namespace) if it is named and
// missing, and brings the tables to [SchemaVersion], in one transaction
// that holds an advisory lock for the schema, so that replicas starting at
// once make it and migrate it once. A database at that version is left
// alone; one from a newer build is refused with an error wrapping
// [store.ErrNewerSchema].
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('agentloop_schema:' || coalesce(nullif($1, ''), current_schema(), '')))`, schema); err != nil {
			return err
		}
		if schema != "" {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
				return fmt.Errorf("creating schema %q: %w", schema, err)
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS agentloop_schema (version integer NOT NULL)`); err != nil {
			return err
		}
		var version int
		err := tx.QueryRow(ctx, `SELECT version FROM agentloop_schema`).Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = tx.Exec(ctx, `INSERT INTO agentloop_schema (version) VALUES (0)`)
		}
		if err != nil {
			return err
		}
		if version > len(migrations) {
			return fmt.Errorf("%w: the database is at schema version %d, this build knows versions up to %d (upgrade agentloop)", store.ErrNewerSchema, version, len(migrations))
		}
		for v := version; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrating to schema version %d: %w", v+1, err)
			}
		}
		if version < len(migrations) {
			_, err = tx.Exec(ctx, `UPDATE agentloop_schema SET version = $1`, len(migrations))
		}
		return err
	})
}
