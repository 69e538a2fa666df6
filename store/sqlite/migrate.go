package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

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
		{Version: 1, Name: "threads, runs, records, pending", SQL: []string{
			`CREATE TABLE threads (
				id       TEXT PRIMARY KEY,
				workflow TEXT NOT NULL,
				created  INTEGER NOT NULL,
				updated  INTEGER NOT NULL,
				meta     TEXT NOT NULL
			) STRICT`,
			`CREATE TABLE runs (
				id        TEXT PRIMARY KEY,
				thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
				number    INTEGER NOT NULL,
				status    TEXT NOT NULL,
				error     TEXT NOT NULL,
				created   INTEGER NOT NULL,
				updated   INTEGER NOT NULL
			) STRICT`,
			`CREATE TABLE records (
				thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
				seq       INTEGER NOT NULL,
				run_id    TEXT NOT NULL,
				step      INTEGER NOT NULL,
				kind      TEXT NOT NULL,
				data      BLOB NOT NULL,
				checksum  INTEGER NOT NULL,
				time      INTEGER NOT NULL,
				PRIMARY KEY (thread_id, seq)
			) STRICT, WITHOUT ROWID`,
			`CREATE TABLE pending (
				thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
				id        TEXT NOT NULL,
				run_id    TEXT NOT NULL,
				node      TEXT NOT NULL,
				question  BLOB NOT NULL,
				created   INTEGER NOT NULL,
				PRIMARY KEY (thread_id, id)
			) STRICT`,
		}},
		{Version: 2, Name: "listing indexes", SQL: []string{
			`CREATE INDEX threads_updated ON threads (updated DESC, id)`,
			`CREATE INDEX runs_thread ON runs (thread_id, number, created, id)`,
			`CREATE INDEX records_snapshots ON records (thread_id, seq) WHERE kind = 'snapshot'`,
		}},
		// Append of one record is one autocommit INSERT: this trigger
		// refuses a record whose seq does not continue the thread's log,
		// and moves the thread's updated when it is more than updateGrain
		// (one second) behind the record's time, which spares rewriting
		// the thread's row on most appends. Both run inside the INSERT's
		// statement, so they are atomic with it.
		{Version: 3, Name: "append trigger", SQL: []string{
			`CREATE TRIGGER records_append BEFORE INSERT ON records BEGIN
				SELECT RAISE(ABORT, 'weft: append out of order')
				WHERE coalesce((SELECT max(seq) FROM records WHERE thread_id = NEW.thread_id), 0) != NEW.seq - 1;
				UPDATE threads SET updated = NEW.time WHERE id = NEW.thread_id AND updated < NEW.time - 1000000000;
			END`,
		}},
		// records becomes a rowid table. A WITHOUT ROWID table is a
		// b-tree of index pages, which keep at most 1,002 bytes of a row
		// on the page (with 4 KiB pages): a row of 1,003 to about 4,500
		// bytes kept 489 of them there and the rest on an overflow page
		// of its own, a whole 4 KiB page for what may be a few hundred
		// bytes. A rowid table keeps rows of up to 4,061 bytes on its
		// leaf pages, and as rows come in rowid order its pages fill up.
		// (thread_id, seq) moves to a unique index of small entries,
		// which the trigger's max(seq), Records, Prune and the cascade
		// of DeleteThread search. The rows are copied in (thread_id, seq)
		// order, so a thread's records start out together. Dropping the
		// old table drops its index and trigger, which are made again
		// for the new one.
		{Version: 4, Name: "records as a rowid table", SQL: []string{
			`CREATE TABLE records_new (
				thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
				seq       INTEGER NOT NULL,
				run_id    TEXT NOT NULL,
				step      INTEGER NOT NULL,
				kind      TEXT NOT NULL,
				data      BLOB NOT NULL,
				checksum  INTEGER NOT NULL,
				time      INTEGER NOT NULL
			) STRICT`,
			`INSERT INTO records_new (thread_id, seq, run_id, step, kind, data, checksum, time)
				SELECT thread_id, seq, run_id, step, kind, data, checksum, time FROM records ORDER BY thread_id, seq`,
			`DROP TABLE records`,
			`ALTER TABLE records_new RENAME TO records`,
			`CREATE UNIQUE INDEX records_key ON records (thread_id, seq)`,
			`CREATE INDEX records_snapshots ON records (thread_id, seq) WHERE kind = 'snapshot'`,
			`CREATE TRIGGER records_append BEFORE INSERT ON records BEGIN
				SELECT RAISE(ABORT, 'weft: append out of order')
				WHERE coalesce((SELECT max(seq) FROM records WHERE thread_id = NEW.thread_id), 0) != NEW.seq - 1;
				UPDATE threads SET updated = NEW.time WHERE id = NEW.thread_id AND updated < NEW.time - 1000000000;
			END`,
		}},
		// Leases (store.Leaser): the thread's lease in its row (owner ''
		// when none is held; lease_fence the last fence granted, which
		// only grows; lease_expires in Unix nanoseconds), and the fence
		// each record was written under (0: none). The trigger now also
		// refuses a record whose fence the thread's lease does not allow,
		// in the same statement as the insert: a fence that is not the
		// current, unexpired lease's, or no fence while a lease is held.
		// One SELECT checks both (a missing thread is left to the
		// foreign key); Append's transaction then says which refused.
		// NEW.time is the store's clock (the machine's, which every
		// process sharing the file shares).
		{Version: 5, Name: "leases", SQL: []string{
			`ALTER TABLE threads ADD COLUMN lease_owner TEXT NOT NULL DEFAULT ''`,
			`ALTER TABLE threads ADD COLUMN lease_fence INTEGER NOT NULL DEFAULT 0`,
			`ALTER TABLE threads ADD COLUMN lease_expires INTEGER NOT NULL DEFAULT 0`,
			`ALTER TABLE records ADD COLUMN fence INTEGER NOT NULL DEFAULT 0`,
			`DROP TRIGGER records_append`,
			`CREATE TRIGGER records_append BEFORE INSERT ON records BEGIN
				SELECT RAISE(ABORT, 'weft: append out of order or lease refused')
				FROM threads WHERE id = NEW.thread_id AND (
					coalesce((SELECT max(seq) FROM records WHERE thread_id = NEW.thread_id), 0) != NEW.seq - 1
					OR iif(NEW.fence = 0,
						lease_owner != '' AND lease_expires > NEW.time,
						lease_owner = '' OR lease_fence != NEW.fence OR lease_expires <= NEW.time));
				UPDATE threads SET updated = NEW.time WHERE id = NEW.thread_id AND updated < NEW.time - 1000000000;
			END`,
		}},
		// Workflow sources, content-addressed (store.Store.PutSource),
		// and what a thread names of them: the digest of its source
		// (NULL: none; a foreign key, so a thread cannot name a source
		// the store does not hold, and a source a thread names cannot
		// go) and its run spec (opaque JSON, '' when none). The index
		// lists threads by source.
		{Version: 6, Name: "sources and run specs", SQL: []string{
			`CREATE TABLE sources (
				digest TEXT PRIMARY KEY,
				source BLOB NOT NULL
			) STRICT`,
			`ALTER TABLE threads ADD COLUMN source TEXT REFERENCES sources(digest)`,
			`ALTER TABLE threads ADD COLUMN spec BLOB NOT NULL DEFAULT x''`,
			`CREATE INDEX threads_source ON threads (source, updated DESC, id) WHERE source IS NOT NULL`,
		}},
		// The key-value store (store.Items) and the runs of the LangGraph
		// Server API (store.Jobs). An item's namespace is its labels
		// joined by '.', so that the unique index on (ns, key) selects a
		// namespace prefix as a range (see store.PrefixRange); a rowid
		// table keeps values of up to about 4 KB on its leaf pages. A
		// job belongs to its thread (deleted with it); jobs_thread
		// serves the cascade, a thread's listing and PendingJobs' checks
		// of a thread's running and older pending jobs, jobs_pending the
		// pending jobs oldest first, jobs_created the listing of all.
		{Version: 7, Name: "items and jobs", SQL: []string{
			`CREATE TABLE items (
				ns      TEXT NOT NULL,
				key     TEXT NOT NULL,
				value   BLOB NOT NULL,
				created INTEGER NOT NULL,
				updated INTEGER NOT NULL
			) STRICT`,
			`CREATE UNIQUE INDEX items_key ON items (ns, key)`,
			`CREATE TABLE jobs (
				id        TEXT PRIMARY KEY,
				thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
				assistant TEXT NOT NULL,
				status    TEXT NOT NULL,
				run       TEXT NOT NULL,
				strategy  TEXT NOT NULL,
				request   BLOB NOT NULL,
				meta      BLOB NOT NULL,
				error     TEXT NOT NULL,
				created   INTEGER NOT NULL,
				updated   INTEGER NOT NULL
			) STRICT`,
			`CREATE INDEX jobs_thread ON jobs (thread_id, status, created, id)`,
			`CREATE INDEX jobs_pending ON jobs (created, id) WHERE status = 'pending'`,
			`CREATE INDEX jobs_created ON jobs (created DESC, id)`,
		}},
		// The running jobs of every thread (a server's busy threads,
		// the jobs a killed process left running) are listed from
		// an index of theirs, not by a scan of all jobs.
		{Version: 8, Name: "running jobs index", SQL: []string{
			`CREATE INDEX jobs_running ON jobs (created DESC, id) WHERE status = 'running'`,
		}},
		// The event streams of jobs (store.RunEvents), deleted with
		// their job (and so with its thread) by the foreign key's
		// cascade. A rowid table, as records is since version 4 (an
		// event's data is often a few KB: a values event carries the
		// whole state); the unique index run_events_key serves reads
		// after a seq, the append's max(seq) and the cascade.
		{Version: 9, Name: "run events", SQL: []string{
			`CREATE TABLE run_events (
				job_id  TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
				seq     INTEGER NOT NULL,
				attempt TEXT NOT NULL,
				n       INTEGER NOT NULL,
				event   TEXT NOT NULL,
				data    BLOB NOT NULL,
				time    INTEGER NOT NULL
			) STRICT`,
			`CREATE UNIQUE INDEX run_events_key ON run_events (job_id, seq)`,
		}},
	}
}

// updateGrain is how far a thread's Updated may lag its last Append (the
// trigger records_append compares nanoseconds with 1000000000).
const updateGrain = time.Second

// SchemaVersion is the version of the schema this package writes.
const SchemaVersion = 9

// ErrNewerSchema is returned by Open for a database written by a newer
// weft than this one.
var ErrNewerSchema = errors.New("sqlite store: database schema is newer than this program")

// MigrationError is a schema migration step that failed; the database
// stays at the version before it.
type MigrationError struct {
	Version int    // the version the step migrates to
	Name    string // what the step does
	Err     error
}

// Error says which step failed.
func (e *MigrationError) Error() string {
	return fmt.Sprintf("sqlite store: migration to schema version %d (%s): %v", e.Version, e.Name, e.Err)
}

// Unwrap returns the cause.
func (e *MigrationError) Unwrap() error { return e.Err }

// migrate brings db up to the last of steps, one transaction per step. db
// must be the writer pool (its transactions begin IMMEDIATE), so two
// processes opening one file at once migrate it once.
func migrate(ctx context.Context, db *sql.DB, steps []migration) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("sqlite store: create schema_version: %w", err)
	}
	for _, m := range steps {
		if err := step(ctx, db, m, steps[len(steps)-1].Version); err != nil {
			return err
		}
	}
	// A database newer than every step is refused.
	v, err := version(ctx, db)
	if err != nil {
		return err
	}
	if last := steps[len(steps)-1].Version; v > last {
		return fmt.Errorf("sqlite store: schema version %d, this program knows up to %d: %w", v, last, ErrNewerSchema)
	}
	return nil
}

// migrateWait is how long a migration step waits for the write lock. It
// is longer than BusyTimeout, which each try waits (the connection's
// busy_timeout): another process may be running a step that copies a
// large table (version 4 copies records: about 7 s for a 1 GB file).
const migrateWait = 2 * time.Minute

// begin begins a migration step's transaction, waiting up to migrateWait
// for another process's write lock.
func begin(ctx context.Context, db *sql.DB) (*sql.Tx, error) {
	deadline := time.Now().Add(migrateWait)
	for {
		tx, err := db.BeginTx(ctx, nil)
		if code(err) != sqliteBusy || time.Now().After(deadline) {
			return tx, err
		}
		t := time.NewTimer(maxBusyWait) // in case the try did not wait
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// step applies m if the database is at the version before it.
func step(ctx context.Context, db *sql.DB, m migration, last int) (err error) {
	tx, err := begin(ctx, db)
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
	if v > last {
		return fmt.Errorf("sqlite store: schema version %d, this program knows up to %d: %w", v, last, ErrNewerSchema)
	}
	if v != m.Version-1 {
		return tx.Rollback() // already applied
	}
	for _, q := range m.SQL {
		if _, err := tx.ExecContext(ctx, q); err != nil {
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

// version reads the schema version (0 for a new database).
func version(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite store: read schema version: %w", err)
	}
	return v, nil
}
