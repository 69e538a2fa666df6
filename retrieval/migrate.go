package retrieval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SchemaVersion is the version of the index's schema that this package
// writes; Open migrates an older index to it.
const SchemaVersion = 2

// A migration takes the schema from version Version-1 to Version.
type migration struct {
	Version int
	Name    string
	SQL     []string
}

// migrations is the schema's history, oldest first. Never edit a shipped
// step: append a new one.
func migrations() []migration {
	return []migration{
		// docs holds the documents as given; fts indexes their
		// normalized title and text under the same rowid (docs.seq);
		// meta holds one row per metadata pair, for filters. Deleting a
		// document deletes its index and metadata rows (the trigger).
		{Version: 1, Name: "documents, full-text index, metadata", SQL: []string{
			`CREATE TABLE docs (
				seq   INTEGER PRIMARY KEY,
				id    TEXT NOT NULL UNIQUE,
				title TEXT NOT NULL,
				text  TEXT NOT NULL,
				meta  TEXT NOT NULL
			) STRICT`,
			`CREATE TABLE meta (
				key   TEXT NOT NULL,
				value TEXT NOT NULL,
				doc   INTEGER NOT NULL,
				PRIMARY KEY (key, value, doc)
			) STRICT, WITHOUT ROWID`,
			`CREATE INDEX meta_doc ON meta (doc)`,
			`CREATE VIRTUAL TABLE fts USING fts5(title, text, tokenize = 'unicode61 remove_diacritics 2')`,
			`CREATE TRIGGER docs_delete AFTER DELETE ON docs BEGIN
				DELETE FROM fts WHERE rowid = OLD.seq;
				DELETE FROM meta WHERE doc = OLD.seq;
			END`,
		}},
		// Embeddings: a little-endian float32 vector per document, NULL
		// when the index had no Embedder when the document was added.
		{Version: 2, Name: "vectors", SQL: []string{
			`ALTER TABLE docs ADD COLUMN vec BLOB`,
		}},
	}
}

// migrate brings db's schema up to the last of steps, one transaction per
// step, and refuses a database newer than every step.
func migrate(ctx context.Context, db *sql.DB, steps []migration) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("retrieval: create schema_version: %w", err)
	}
	last := steps[len(steps)-1].Version
	for _, m := range steps {
		if err := step(ctx, db, m); err != nil {
			return err
		}
	}
	var v int
	if err := db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil {
		return fmt.Errorf("retrieval: read schema version: %w", err)
	}
	if v > last {
		return &SchemaError{Version: v, Known: last}
	}
	return nil
}

// step applies m if the database is at the version before it.
func step(ctx context.Context, db *sql.DB, m migration) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return &MigrationError{Version: m.Version, Name: m.Name, Err: err}
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var v int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return &MigrationError{Version: m.Version, Name: m.Name, Err: err}
		}
	case err != nil:
		return &MigrationError{Version: m.Version, Name: m.Name, Err: err}
	}
	if v != m.Version-1 {
		return tx.Rollback()
	}
	for _, s := range m.SQL {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return &MigrationError{Version: m.Version, Name: m.Name, Err: err}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, m.Version); err != nil {
		return &MigrationError{Version: m.Version, Name: m.Name, Err: err}
	}
	if err := tx.Commit(); err != nil {
		return &MigrationError{Version: m.Version, Name: m.Name, Err: err}
	}
	return nil
}
