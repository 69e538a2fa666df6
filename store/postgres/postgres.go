// Package postgres is a store.Store in PostgreSQL, for several processes
// sharing threads. It uses a pgx/v5 connection pool.
//
// # Production behaviour
//
// Transaction poolers (PgBouncer in transaction mode and the like): the
// store keeps no session state (no SET, no session advisory locks, no
// temporary tables) and prepares no named statements: Open sets pgx's
// default_query_exec_mode to "exec" (unnamed statements, one round trip)
// unless the DSN asks for "simple_protocol", and turns pgx's statement and
// description caches off. The equivalent DSN setting is
// default_query_exec_mode=exec.
//
// Transactions: Append is one short transaction (lock the thread's row,
// insert the records, move the thread's last seq) sent as a single
// statement, so no transaction stays open across round trips; checksums
// and encoding are done before it is sent.
// Leases (store.Leaser) live in the thread's row; Claim, Heartbeat and
// Release lock it for one short transaction, and Append checks the
// records' fence in its one statement. Every expiry is judged by the
// server's clock (clock_timestamp()), so processes on several machines
// never compare their own.
// Schema migrations run under a transaction-scoped advisory lock.
//
// Server restarts and dropped connections: pgxpool checks connections idle
// for more than a second before handing them out; on top of that, an
// operation that fails because its connection is gone resets the pool and is
// retried a few times with a short backoff. Retrying an Append is safe: it
// is exactly-once by the unique (thread_id, seq) constraint, and an Append
// whose commit was lost in flight is recognized on retry by comparing the
// stored records with the ones being written.
package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftlang/weft/store"
)

// Error is a failure of the database or of the connection to it.
type Error struct {
	Op  string // what the store was doing
	Err error  // the driver's error
}

// Error names the operation and the cause.
func (e *Error) Error() string { return "store/postgres: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the driver's error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches store.ErrFull for a server out of disk space (SQLSTATE
// 53100), store.ErrReadOnly for a read-only transaction or a role
// without the privilege (25006, 42501), and store.ErrUnavailable for a
// connection refused or lost.
func (e *Error) Is(target error) bool {
	if target == store.ErrUnavailable {
		return connLost(context.Background(), e.Err)
	}
	switch pgCode(e.Err) {
	case "53100":
		return target == store.ErrFull
	case "25006", "42501":
		return target == store.ErrReadOnly
	}
	return false
}

// ErrSchemaTooNew is returned by Open for a database migrated by a newer
// weft.
var ErrSchemaTooNew = errors.New("schema newer than this weft")

// Store is a store.Store in PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	schema int // the schema version opened (SchemaVersion, but for tests)
	// listener is the LISTEN connection of WaitRunEvents, started by
	// the first waiter.
	listener *listener
	// closed is set by Close: a call failing after it (on the closed
	// pool) fails with store.ErrClosed.
	closed atomic.Bool
}

var _ store.Store = (*Store)(nil)

// Config parses a DSN (a postgres:// URL or key=value settings, as pgx
// takes them) into a pool configuration with the settings described in the
// package documentation.
func Config(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, &Error{Op: "parse DSN", Err: err}
	}
	cc := cfg.ConnConfig
	if cc.DefaultQueryExecMode != pgx.QueryExecModeSimpleProtocol {
		cc.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	cc.StatementCacheCapacity = 0
	cc.DescriptionCacheCapacity = 0
	return cfg, nil
}

// Open connects to the database at dsn and brings its schema to the
// current version.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := Config(dsn)
	if err != nil {
		return nil, err
	}
	return OpenConfig(ctx, cfg)
}

// OpenConfig is Open with a pool configuration, from Config or built by
// the caller.
func OpenConfig(ctx context.Context, cfg *pgxpool.Config) (*Store, error) {
	return openAt(ctx, cfg, SchemaVersion)
}

func openAt(ctx context.Context, cfg *pgxpool.Config, version int) (*Store, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	s := &Store{pool: pool, schema: version, listener: newListener(pool)}
	if err := s.retry(ctx, func() error { return migrate(ctx, pool, version) }); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the listener of WaitRunEvents, waiting for it, and closes
// the pool.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.listener.close()
	s.pool.Close()
	return nil
}

// Pool returns the store's pool, for callers that share it (a job queue on
// the same database).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Retries after a lost connection: how many, and the first wait (doubled
// each time).
const (
	maxRetries   = 5
	firstBackoff = 20 * time.Millisecond
)

// retry runs fn, and again after resetting the pool when it fails because
// its connection is gone.
func (s *Store) retry(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	wait := firstBackoff
	for attempt := 0; ; attempt++ {
		err := fn()
		if err != nil && s.closed.Load() {
			return fmt.Errorf("%w: %w", store.ErrClosed, err)
		}
		if err == nil || attempt == maxRetries || !connLost(ctx, err) {
			return err
		}
		s.pool.Reset()
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// connLost reports whether err says the connection failed (rather than the
// statement): the server shut down or restarted, the network dropped it.
func connLost(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return pgconn.SafeToRetry(err) || errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) ||
		strings.Contains(err.Error(), "conn closed")
}

func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// CreateThread stores a new thread; Created and Updated are set when zero.
func (s *Store) CreateThread(ctx context.Context, t *store.Thread) error {
	if err := store.CheckThread(t); err != nil {
		return fmt.Errorf("store/postgres: create %w", err)
	}
	n := now()
	created, updated := t.Created, t.Updated
	if created.IsZero() {
		created = n
	}
	if updated.IsZero() {
		updated = created
	}
	meta, err := json.Marshal(t.Meta)
	if err != nil {
		return fmt.Errorf("store/postgres: thread %s meta: %v: %w", t.ID, err, store.ErrInvalid)
	}
	if t.Meta == nil {
		meta = []byte("{}")
	}
	lost := false
	err = s.retry(ctx, func() error {
		q := `INSERT INTO weft_threads (id, workflow, created, updated, meta, source, spec)
VALUES ($1, $2, $3, $4, $5::text::jsonb, $6::text, $7::bytea)`
		if s.schema < 4 {
			// Before sources (tests only, writing as an older weft did).
			q = `INSERT INTO weft_threads (id, workflow, created, updated, meta)
SELECT $1, $2, $3, $4, $5::text::jsonb WHERE $6::text IS NULL OR $7::bytea IS NOT NULL`
		}
		_, err := s.pool.Exec(ctx, q, t.ID, t.Workflow, created, updated, string(meta), source(t.Source), nonNil(t.Spec))
		if pgCode(err) == foreignKeyViolation {
			return fmt.Errorf("store/postgres: thread %s: source %s: %w", t.ID, t.Source, store.ErrNotFound)
		}
		if pgCode(err) == uniqueViolation {
			if lost {
				// The previous try's commit may have been lost in flight:
				// if the row is ours, it succeeded.
				if got, gerr := s.Thread(ctx, t.ID); gerr == nil && got.Workflow == t.Workflow && got.Created.Equal(created) {
					return nil
				}
			}
			return fmt.Errorf("store/postgres: thread %s: %w", t.ID, store.ErrExists)
		}
		if err != nil {
			lost = true
			return &Error{Op: "create thread " + t.ID, Err: err}
		}
		return nil
	})
	if err != nil {
		return err
	}
	t.Created, t.Updated = created, updated
	return nil
}

// source is a thread's source column: NULL for none.
func source(digest string) any {
	if digest == "" {
		return nil
	}
	return digest
}

// nonNil makes a nil slice empty, for NOT NULL bytea columns.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// selectThreads selects threads (t) with their latest runs (r): the last
// that Runs lists.
const selectThreads = `SELECT t.id, t.workflow, t.created, t.updated, t.meta::text, coalesce(t.source, ''), t.spec,
	coalesce(r.id, ''), coalesce(r.number, 0), coalesce(r.status, '')
FROM weft_threads t LEFT JOIN LATERAL (
	SELECT id, number, status FROM weft_runs WHERE thread_id = t.id ORDER BY number DESC, created DESC, id DESC LIMIT 1
) r ON true`

// scanListed reads a thread selected by selectThreads, with its latest
// run.
func scanListed(row pgx.Row) (*store.Thread, error) {
	var run string
	var status store.Status
	var number int32
	t, err := scanThread(row, &run, &number, &status)
	if err != nil {
		return nil, err
	}
	if run != "" {
		if err := store.CheckStatus(t.ID, run, status); err != nil {
			return nil, err
		}
		t.LastRun, t.Status = int(number), status
	}
	return t, nil
}

func scanThread(row pgx.Row, more ...any) (*store.Thread, error) {
	var t store.Thread
	var meta string
	var spec []byte
	if err := row.Scan(append([]any{&t.ID, &t.Workflow, &t.Created, &t.Updated, &meta, &t.Source, &spec}, more...)...); err != nil {
		return nil, err
	}
	if len(spec) > 0 {
		t.Spec = spec
	}
	t.Created, t.Updated = t.Created.UTC(), t.Updated.UTC()
	if meta != "{}" {
		if err := json.Unmarshal([]byte(meta), &t.Meta); err != nil {
			return nil, &store.CorruptError{ThreadID: t.ID, Field: "meta", Detail: err.Error()}
		}
	}
	return &t, nil
}

// Thread returns a thread, or store.ErrNotFound.
func (s *Store) Thread(ctx context.Context, id string) (*store.Thread, error) {
	var t *store.Thread
	err := s.retry(ctx, func() error {
		var err error
		t, err = scanListed(s.pool.QueryRow(ctx, selectThreads+" WHERE t.id = $1", id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store/postgres: thread %s: %w", id, store.ErrNotFound)
	}
	var ce *store.CorruptError
	if errors.As(err, &ce) {
		return nil, err
	}
	if err != nil {
		return nil, &Error{Op: "thread " + id, Err: err}
	}
	return t, nil
}

// UpdateThread replaces a thread's Workflow, Source, Spec and Meta; see
// store.Store.
func (s *Store) UpdateThread(ctx context.Context, t *store.Thread) error {
	if err := store.CheckThread(t); err != nil {
		return fmt.Errorf("store/postgres: update %w", err)
	}
	meta, err := json.Marshal(t.Meta)
	if err != nil {
		return fmt.Errorf("store/postgres: thread %s meta: %v: %w", t.ID, err, store.ErrInvalid)
	}
	if t.Meta == nil {
		meta = []byte("{}")
	}
	updated := t.Updated
	if updated.IsZero() {
		updated = now()
	}
	var created time.Time
	err = s.retry(ctx, func() error {
		return s.pool.QueryRow(ctx, `UPDATE weft_threads SET workflow = $2, updated = $3, meta = $4::text::jsonb, source = $5::text, spec = $6::bytea
WHERE id = $1 RETURNING created`, t.ID, t.Workflow, updated, string(meta), source(t.Source), nonNil(t.Spec)).Scan(&created)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("store/postgres: thread %s: %w", t.ID, store.ErrNotFound)
	case pgCode(err) == foreignKeyViolation:
		return fmt.Errorf("store/postgres: thread %s: source %s: %w", t.ID, t.Source, store.ErrNotFound)
	case err != nil:
		return &Error{Op: "update thread " + t.ID, Err: err}
	}
	t.Created, t.Updated = created.UTC(), updated
	return nil
}

// PutSource stores a workflow source under its digest; see store.Store.
func (s *Store) PutSource(ctx context.Context, digest string, src []byte) error {
	if err := store.CheckSource(digest, src); err != nil {
		return fmt.Errorf("store/postgres: put source: %w", err)
	}
	err := s.retry(ctx, func() error {
		_, err := s.pool.Exec(ctx, `INSERT INTO weft_sources (digest, source) VALUES ($1, $2::bytea) ON CONFLICT (digest) DO NOTHING`, digest, nonNil(src))
		return err
	})
	if err != nil {
		return &Error{Op: "put source " + digest, Err: err}
	}
	return nil
}

// Source returns the source stored under digest, or store.ErrNotFound.
func (s *Store) Source(ctx context.Context, digest string) ([]byte, error) {
	var src []byte
	err := s.retry(ctx, func() error {
		return s.pool.QueryRow(ctx, `SELECT source FROM weft_sources WHERE digest = $1`, digest).Scan(&src)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store/postgres: source %s: %w", digest, store.ErrNotFound)
	}
	if err != nil {
		return nil, &Error{Op: "source " + digest, Err: err}
	}
	if src == nil {
		src = []byte{}
	}
	return src, nil
}

// Threads lists the threads opts selects, in its order, with their
// latest runs, in one query; see store.Store. IDs compare bytewise
// (COLLATE "C"), as in the other stores, whatever the database's
// collation.
func (s *Store) Threads(ctx context.Context, opts store.ListOptions) ([]*store.Thread, error) {
	if err := opts.Check(); err != nil {
		return nil, fmt.Errorf("store/postgres: %w", err)
	}
	var (
		where []string
		args  []any
	)
	arg := func(v any, cast string) string {
		args = append(args, v)
		return fmt.Sprintf("$%d::%s", len(args), cast)
	}
	if len(opts.Status) > 0 {
		sts := make([]string, len(opts.Status))
		for i, st := range opts.Status {
			sts[i] = string(st)
		}
		where = append(where, "coalesce(r.status, '') = ANY("+arg(sts, "text[]")+")")
	}
	if opts.Workflow != "" {
		where = append(where, "t.workflow = "+arg(opts.Workflow, "text"))
	}
	if opts.Source != "" {
		where = append(where, "t.source = "+arg(opts.Source, "text"))
	}
	if len(opts.Meta) > 0 {
		meta, err := json.Marshal(opts.Meta)
		if err != nil {
			return nil, fmt.Errorf("store/postgres: list threads by meta: %v: %w", err, store.ErrInvalid)
		}
		where = append(where, "t.meta @> "+arg(string(meta), "text")+"::jsonb")
	}
	if opts.Search != "" {
		// translate folds ASCII letters only, as Search does (lower()
		// and ILIKE fold others too, by the database's locale).
		const fold = `'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'`
		like := arg(store.LikeContains(opts.Search), "text")
		where = append(where, "(translate(t.id, "+fold+") LIKE "+like+` ESCAPE '\' OR EXISTS (SELECT 1 FROM jsonb_each_text(t.meta) m WHERE translate(m.value, `+fold+") LIKE "+like+` ESCAPE '\'))`)
	}
	// OldestFirst is NewestFirst's exact reverse, ties included.
	dir, cmp, idDir, idCmp := "DESC", "<", "", ">"
	if opts.Order == store.OldestFirst {
		dir, cmp, idDir, idCmp = "ASC", ">", " DESC", "<"
	}
	if !opts.After.IsZero() {
		u := arg(opts.After.Updated, "timestamptz")
		where = append(where, "(t.updated "+cmp+" "+u+" OR t.updated = "+u+` AND t.id COLLATE "C" `+idCmp+" "+arg(opts.After.ID, "text")+")")
	}
	q := selectThreads
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	var limit any // NULL: no limit
	if opts.Limit > 0 {
		limit = int64(opts.Limit)
	}
	q += " ORDER BY t.updated " + dir + `, t.id COLLATE "C"` + idDir + ` LIMIT ` + arg(limit, "bigint") + " OFFSET " + arg(int64(opts.Offset), "bigint")
	var out []*store.Thread
	err := s.retry(ctx, func() error {
		out = nil
		rows, err := s.pool.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanListed(rows)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	var ce *store.CorruptError
	if errors.As(err, &ce) {
		return nil, err
	}
	if err != nil {
		return nil, &Error{Op: "threads", Err: err}
	}
	return out, nil
}

// DeleteThread removes a thread with its runs, records and pending
// questions (by cascade); a missing thread is store.ErrNotFound.
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	var n int64
	err := s.retry(ctx, func() error {
		tag, err := s.pool.Exec(ctx, "DELETE FROM weft_threads WHERE id = $1", id)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return &Error{Op: "delete thread " + id, Err: err}
	}
	if n == 0 {
		return fmt.Errorf("store/postgres: thread %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// PutRun creates or updates a run of an existing thread (else
// store.ErrNotFound); a run does not move to another thread
// (store.ErrInvalid). Zero Created and Updated are set to now; an update
// keeps the stored Created.
func (s *Store) PutRun(ctx context.Context, r *store.Run) error {
	if err := store.CheckRun(r); err != nil {
		return fmt.Errorf("store/postgres: put %w", err)
	}
	n := now()
	created, updated := r.Created, r.Updated
	if created.IsZero() {
		created = n
	}
	if updated.IsZero() {
		updated = n
	}
	// One statement: with the thread's row locked against a Claim, put
	// the run only if the lease allows its fence (see Append); it returns
	// the run's Created (null: not put) and, when refused, the row it
	// judged (no row: no thread).
	var (
		stored *time.Time
		row    string
	)
	err := s.retry(ctx, func() error {
		return s.pool.QueryRow(ctx, `WITH th AS (
	SELECT last_seq, lease_owner, lease_fence, lease_expires, clock_timestamp() AS now, $8::bigint AS fence
	FROM weft_threads WHERE id = $2 FOR SHARE
), ok AS (
	SELECT `+leaseAllows+` AS go FROM th
), up AS (
	INSERT INTO weft_runs (id, thread_id, number, status, error, created, updated)
	SELECT $1::text, $2::text, $3::integer, $4::text, $5::text, $6::timestamptz, $7::timestamptz WHERE (SELECT go FROM ok)
	ON CONFLICT (id) DO UPDATE SET number = excluded.number, status = excluded.status,
		error = excluded.error, updated = excluded.updated
		WHERE weft_runs.thread_id = excluded.thread_id
	RETURNING created
)
SELECT (SELECT created FROM up), CASE WHEN ok.go THEN '' ELSE `+judgedJSON+` END FROM ok, th`,
			r.ID, r.ThreadID, int32(r.Number), r.Status, r.Error, created, updated, r.Fence).Scan(&stored, &row)
	})
	switch {
	case pgCode(err) == foreignKeyViolation, errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("store/postgres: run %s: thread %s: %w", r.ID, r.ThreadID, store.ErrNotFound)
	case err != nil:
		return &Error{Op: "put run " + r.ID, Err: err}
	case row != "":
		return refused(r.ThreadID, "put run", r.Fence, row, nil)
	case stored == nil:
		return fmt.Errorf("store/postgres: run %s belongs to another thread than %s: %w", r.ID, r.ThreadID, store.ErrInvalid)
	}
	created = *stored
	r.Created, r.Updated = created.UTC(), updated
	return nil
}

const runCols = "id, thread_id, number, status, error, created, updated"

func scanRun(row pgx.Row) (*store.Run, error) {
	var r store.Run
	var number int32
	if err := row.Scan(&r.ID, &r.ThreadID, &number, &r.Status, &r.Error, &r.Created, &r.Updated); err != nil {
		return nil, err
	}
	r.Number = int(number)
	r.Created, r.Updated = r.Created.UTC(), r.Updated.UTC()
	if err := store.CheckStatus(r.ThreadID, r.ID, r.Status); err != nil {
		return nil, err
	}
	return &r, nil
}

// Run returns a run, or store.ErrNotFound.
func (s *Store) Run(ctx context.Context, id string) (*store.Run, error) {
	var r *store.Run
	err := s.retry(ctx, func() error {
		var err error
		r, err = scanRun(s.pool.QueryRow(ctx, "SELECT "+runCols+" FROM weft_runs WHERE id = $1", id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store/postgres: run %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, &Error{Op: "run " + id, Err: err}
	}
	return r, nil
}

// Runs lists the runs of a thread, oldest first.
func (s *Store) Runs(ctx context.Context, threadID string) ([]*store.Run, error) {
	var out []*store.Run
	err := s.retry(ctx, func() error {
		out = nil
		rows, err := s.pool.Query(ctx, "SELECT "+runCols+" FROM weft_runs WHERE thread_id = $1 ORDER BY number, created, id", threadID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanRun(rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil || len(out) > 0 {
			return err
		}
		return s.threadExists(ctx, threadID)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if err != nil {
		return nil, &Error{Op: "runs of " + threadID, Err: err}
	}
	return out, nil
}

// PutPending records a question a waiting run asks; putting the same ID
// again replaces it (a re-run step asks again).
func (s *Store) PutPending(ctx context.Context, p *store.Pending) error {
	if p.ID == "" {
		return fmt.Errorf("store/postgres: pending question without an ID: %w", store.ErrInvalid)
	}
	created := p.Created
	if created.IsZero() {
		created = now()
	}
	q := p.Question
	if q == nil {
		q = []byte{}
	}
	// One statement, as PutRun's: it returns, when refused, the row it
	// judged (no row: no thread).
	var row string
	err := s.retry(ctx, func() error {
		return s.pool.QueryRow(ctx, `WITH th AS (
	SELECT last_seq, lease_owner, lease_fence, lease_expires, clock_timestamp() AS now, $7::bigint AS fence
	FROM weft_threads WHERE id = $1 FOR SHARE
), ok AS (
	SELECT `+leaseAllows+` AS go FROM th
), ins AS (
	INSERT INTO weft_pending (thread_id, id, run_id, node, question, created)
	SELECT $1::text, $2::text, $3::text, $4::text, $5::bytea, $6::timestamptz WHERE (SELECT go FROM ok)
	ON CONFLICT (thread_id, id) DO UPDATE SET run_id = excluded.run_id, node = excluded.node, question = excluded.question
)
SELECT CASE WHEN ok.go THEN '' ELSE `+judgedJSON+` END FROM ok, th`,
			p.ThreadID, p.ID, p.RunID, p.Node, q, created, p.Fence).Scan(&row)
	})
	switch {
	case pgCode(err) == foreignKeyViolation, errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("store/postgres: pending %s: thread %s: %w", p.ID, p.ThreadID, store.ErrNotFound)
	case err != nil:
		return &Error{Op: "put pending " + p.ID, Err: err}
	case row != "":
		return refused(p.ThreadID, "put pending", p.Fence, row, nil)
	}
	p.Created = created
	return nil
}

// Pending lists the unanswered questions of a thread, oldest first.
func (s *Store) Pending(ctx context.Context, threadID string) ([]*store.Pending, error) {
	var out []*store.Pending
	err := s.retry(ctx, func() error {
		out = nil
		rows, err := s.pool.Query(ctx, `SELECT id, thread_id, run_id, node, question, created FROM weft_pending
WHERE thread_id = $1 ORDER BY created, id`, threadID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p store.Pending
			if err := rows.Scan(&p.ID, &p.ThreadID, &p.RunID, &p.Node, &p.Question, &p.Created); err != nil {
				return err
			}
			p.Created = p.Created.UTC()
			out = append(out, &p)
		}
		if err := rows.Err(); err != nil || len(out) > 0 {
			return err
		}
		return s.threadExists(ctx, threadID)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if err != nil {
		return nil, &Error{Op: "pending of " + threadID, Err: err}
	}
	return out, nil
}

// DeletePending removes an answered question; a missing one is
// store.ErrNotFound.
func (s *Store) DeletePending(ctx context.Context, threadID, id string) error {
	var n int64
	err := s.retry(ctx, func() error {
		tag, err := s.pool.Exec(ctx, "DELETE FROM weft_pending WHERE thread_id = $1 AND id = $2", threadID, id)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return &Error{Op: "delete pending " + id, Err: err}
	}
	if n == 0 {
		return fmt.Errorf("store/postgres: thread %s, pending %s: %w", threadID, id, store.ErrNotFound)
	}
	return nil
}
