package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's steps: migrations[i] takes the schema from
// version i to version i+1. A step is never edited once released; changes
// go in a new step.
var migrations = [...]string{
	// v1: threads with the last seq of their log, runs, records, pending
	// questions.
	`
CREATE TABLE weft_threads (
	id       text PRIMARY KEY,
	workflow text NOT NULL,
	created  timestamptz NOT NULL,
	updated  timestamptz NOT NULL,
	meta     jsonb NOT NULL DEFAULT '{}',
	last_seq bigint NOT NULL DEFAULT 0
);
CREATE TABLE weft_runs (
	id        text PRIMARY KEY,
	thread_id text NOT NULL REFERENCES weft_threads (id) ON DELETE CASCADE,
	number    integer NOT NULL,
	status    text NOT NULL,
	error     text NOT NULL DEFAULT '',
	created   timestamptz NOT NULL,
	updated   timestamptz NOT NULL
);
CREATE TABLE weft_records (
	thread_id text NOT NULL REFERENCES weft_threads (id) ON DELETE CASCADE,
	seq       bigint NOT NULL,
	run_id    text NOT NULL,
	step      integer NOT NULL,
	kind      text NOT NULL,
	data      bytea NOT NULL,
	checksum  bigint NOT NULL,
	time      timestamptz NOT NULL,
	CONSTRAINT weft_records_thread_seq UNIQUE (thread_id, seq)
);
CREATE TABLE weft_pending (
	thread_id text NOT NULL REFERENCES weft_threads (id) ON DELETE CASCADE,
	id        text NOT NULL,
	run_id    text NOT NULL,
	node      text NOT NULL,
	question  bytea NOT NULL,
	created   timestamptz NOT NULL,
	PRIMARY KEY (thread_id, id)
);
`,
	// v2: indexes for listing threads, a thread's runs and its latest
	// snapshot.
	`
CREATE INDEX weft_threads_updated ON weft_threads (updated DESC, id);
CREATE INDEX weft_runs_thread ON weft_runs (thread_id, number);
CREATE INDEX weft_records_snapshots ON weft_records (thread_id, seq DESC) WHERE kind = 'snapshot';
`,
	// v3: leases (store.Leaser). The thread's lease in its row: owner ''
	// when none is held, the last fence granted (it only grows), and when
	// the lease expires (NULL: never claimed or released), by the
	// server's clock. Each record keeps the fence it was written under
	// (0: none). Columns with constant defaults: no table is rewritten.
	`
ALTER TABLE weft_threads ADD COLUMN lease_owner text NOT NULL DEFAULT '';
ALTER TABLE weft_threads ADD COLUMN lease_fence bigint NOT NULL DEFAULT 0;
ALTER TABLE weft_threads ADD COLUMN lease_expires timestamptz;
ALTER TABLE weft_records ADD COLUMN fence bigint NOT NULL DEFAULT 0;
`,
	// v4: workflow sources, content-addressed (store.Store.PutSource),
	// and what a thread names of them: the digest of its source (NULL:
	// none; a foreign key, so that a thread cannot name a source the
	// store does not hold, and a source a thread names cannot go) and
	// its run spec (opaque JSON, empty when none). The index lists
	// threads by source.
	`
CREATE TABLE weft_sources (
	digest text PRIMARY KEY,
	source bytea NOT NULL
);
ALTER TABLE weft_threads ADD COLUMN source text REFERENCES weft_sources (digest);
ALTER TABLE weft_threads ADD COLUMN spec bytea NOT NULL DEFAULT '';
CREATE INDEX weft_threads_source ON weft_threads (source, updated DESC, id) WHERE source IS NOT NULL;
`,
	// v5: the key-value store (store.Items) and the runs of the LangGraph
	// Server API (store.Jobs). An item's namespace is its labels joined
	// by '.', in the "C" collation (bytewise), so that the primary key's
	// index selects a namespace prefix as a range (store.PrefixRange). A
	// job belongs to its thread (deleted with it); weft_jobs_thread
	// serves the cascade, a thread's listing and PendingJobs' checks of a
	// thread's running and older pending jobs, weft_jobs_pending the
	// pending jobs oldest first, weft_jobs_created the listing of all.
	`
CREATE TABLE weft_items (
	ns      text COLLATE "C" NOT NULL,
	key     text COLLATE "C" NOT NULL,
	value   bytea NOT NULL,
	created timestamptz NOT NULL,
	updated timestamptz NOT NULL,
	PRIMARY KEY (ns, key)
);
CREATE TABLE weft_jobs (
	id        text COLLATE "C" PRIMARY KEY,
	thread_id text NOT NULL REFERENCES weft_threads (id) ON DELETE CASCADE,
	assistant text NOT NULL,
	status    text NOT NULL,
	run       text NOT NULL,
	strategy  text NOT NULL,
	request   bytea NOT NULL,
	meta      bytea NOT NULL,
	error     text NOT NULL,
	created   timestamptz NOT NULL,
	updated   timestamptz NOT NULL
);
CREATE INDEX weft_jobs_thread ON weft_jobs (thread_id, status, created, id);
CREATE INDEX weft_jobs_pending ON weft_jobs (created, id) WHERE status = 'pending';
CREATE INDEX weft_jobs_created ON weft_jobs (created DESC, id);
`,
	// v6: the running jobs of every thread (a server's busy threads, the
	// jobs a killed process left running) are listed from an index of
	// theirs, not by a scan of all jobs.
	`
CREATE INDEX weft_jobs_running ON weft_jobs (created DESC, id) WHERE status = 'running';
`,
	// v7: the event streams of jobs (store.RunEvents), deleted with
	// their job (and so with its thread) by the foreign key's cascade.
	// The primary key serves reads after a seq, the append's max(seq)
	// and the cascade, and refuses a second writer of one seq.
	`
CREATE TABLE weft_run_events (
	job_id  text COLLATE "C" NOT NULL REFERENCES weft_jobs (id) ON DELETE CASCADE,
	seq     bigint NOT NULL,
	attempt text NOT NULL,
	n       bigint NOT NULL,
	event   text NOT NULL,
	data    bytea NOT NULL,
	time    timestamptz NOT NULL,
	PRIMARY KEY (job_id, seq)
);
`,
}

// SchemaVersion is the schema version this package writes.
const SchemaVersion = len(migrations)

// migrationLock is the key of the transaction-scoped advisory lock taken
// while migrating ("weft" in ASCII), so that concurrent openers apply each
// step once. A transaction-scoped lock is released at commit and needs no
// session state, so it works behind a transaction pooler.
const migrationLock = 0x77656674

// migrate brings the schema to version target (at most SchemaVersion), in
// one transaction under the advisory lock: PostgreSQL's DDL is
// transactional, so a failed step leaves the previous version intact.
func migrate(ctx context.Context, pool *pgxpool.Pool, target int) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1::bigint)", int64(migrationLock)); err != nil {
			return &Error{Op: "migrate", Err: err}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS weft_schema_version (
	version integer NOT NULL,
	applied timestamptz NOT NULL DEFAULT now()
)`); err != nil {
			return &Error{Op: "migrate", Err: err}
		}
		var version int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM weft_schema_version").Scan(&version); err != nil {
			return &Error{Op: "migrate", Err: err}
		}
		if version > SchemaVersion {
			return &Error{Op: "migrate", Err: fmt.Errorf("%w: the database is at version %d, this weft knows up to %d", ErrSchemaTooNew, version, SchemaVersion)}
		}
		for v := version; v < target; v++ {
			// One statement per Exec: the extended protocol takes no more.
			for _, stmt := range strings.Split(migrations[v], ";\n") {
				if strings.TrimSpace(stmt) == "" {
					continue
				}
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return &Error{Op: fmt.Sprintf("migrate to version %d", v+1), Err: err}
				}
			}
			if _, err := tx.Exec(ctx, "INSERT INTO weft_schema_version (version) VALUES ($1::integer)", v+1); err != nil {
				return &Error{Op: "migrate", Err: err}
			}
		}
		return nil
	})
}

// Version returns the schema version of the database, 0 for an empty one.
func (s *Store) Version(ctx context.Context) (int, error) {
	var exists bool
	if err := s.pool.QueryRow(ctx, "SELECT to_regclass('weft_schema_version') IS NOT NULL").Scan(&exists); err != nil {
		return 0, &Error{Op: "version", Err: err}
	}
	if !exists {
		return 0, nil
	}
	var version int
	if err := s.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM weft_schema_version").Scan(&version); err != nil {
		return 0, &Error{Op: "version", Err: err}
	}
	return version, nil
}
