// Package sqlite is the default store.Store: one SQLite file (through the
// pure-Go modernc.org/sqlite driver) in WAL mode with synchronous=NORMAL and
// foreign keys on, so that several processes may share it.
//
// Writes go through one connection. Writers in one process queue for it in
// Go, where a canceled context lets them go. Appending one record is one
// autocommit INSERT: a trigger in the schema checks that the record's Seq
// continues the thread's log (and moves the thread's Updated), so the check
// and the write are one atomic statement, serialised against other
// processes by SQLite's write lock. Other writes are transactions that
// begin IMMEDIATE. When another process holds the write lock, the store
// waits and retries in Go, for up to BusyTimeout or until the context ends.
// Reads use a pool of their own and run beside a write. The schema is
// versioned (table schema_version) and Open migrates an older database to
// SchemaVersion step by step.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/weftlang/weft/store"
)

// BusyTimeout is how long an operation waits for another process's lock
// before it fails with SQLITE_BUSY.
const BusyTimeout = 5 * time.Second

// How long a writer first waits for another process's write lock before
// trying again, and the most it waits between tries.
const (
	firstBusyWait = 50 * time.Microsecond
	maxBusyWait   = 10 * time.Millisecond
)

// SQLite primary result codes the store tells apart.
const (
	sqlitePerm       = 3
	sqliteBusy       = 5
	sqliteReadOnly   = 8
	sqliteFull       = 13
	sqliteConstraint = 19
)

// Store is a store.Store in one SQLite file.
type Store struct {
	path   string
	schema int           // the schema version opened (SchemaVersion, but for tests)
	writer *sql.DB       // one connection, without a busy timeout
	reader *sql.DB       // a pool; the writer itself for ":memory:"
	wlock  chan struct{} // held while using the writer
	queue  writeQueue    // writes waiting for it, committed together (group.go)
	// grouped counts the writes committed in groups (tests read it).
	grouped atomic.Int64
	w       writeStmts
	r       readStmts
	stmts   []*sql.Stmt // all of the above, to close
	// cache keeps the reader's queries of variable SQL prepared.
	cache *stmtCache
	// selectThreads selects threads (t) with their latest runs (r).
	selectThreads string
	// evWake holds, by job, the channel the waiters of WaitRunEvents in
	// this process wait on, closed by an append of the job's events;
	// closed is closed by Close.
	evMu   sync.Mutex
	evWake map[string]*evWaiters
	closed chan struct{}
}

var _ store.Store = (*Store)(nil)

// writeStmts are prepared on the writer.
type writeStmts struct {
	insertThread, deleteThread, threadExists *sql.Stmt
	updateThread, putSource, sourceExists    *sql.Stmt
	runThread, upsertRun, putRun             *sql.Stmt
	lastSeq, insertRecord                    *sql.Stmt
	upsertPending, deletePending             *sql.Stmt
	pruneRuns, pruneLog, deleteRecordsBefore *sql.Stmt
	deleteRun, deleteRunPending              *sql.Stmt
	setJob, insertJob, deleteJob             *sql.Stmt
	lastEvent, insertEvent, pruneEvents      *sql.Stmt
	claim, release, leaseState, setLease     *sql.Stmt
	putItem, deleteItem                      *sql.Stmt
	begin, commit, rollback                  *sql.Stmt
	savepoint, rollbackTo, releaseSave       *sql.Stmt
}

// readStmts are prepared on the reader.
type readStmts struct {
	thread, threadExists        *sql.Stmt
	source                      *sql.Stmt
	run, runs                   *sql.Stmt
	records, lastSnapshot, head *sql.Stmt
	pending                     *sql.Stmt
	job, jobStatus, item        *sql.Stmt
	runEvents                   *sql.Stmt
}

// dsn builds a modernc.org/sqlite data source name for path: a file: URI
// (so that '?' and '#' in a path are escaped) with the connection pragmas.
func dsn(path string, writer bool) string {
	p := path
	if p != ":memory:" {
		p = "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	}
	q := fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)", BusyTimeout.Milliseconds())
	if writer {
		q += "&_pragma=journal_mode(WAL)&_txlock=immediate"
	}
	return p + q
}

// Open opens (creating it if need be) the SQLite store at path and migrates
// its schema to SchemaVersion. The path ":memory:" gives a private
// in-memory database with one connection.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, migrations())
}

// open opens path, migrating it through steps.
func open(ctx context.Context, path string, steps []migration) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlite store: empty path: %w", store.ErrInvalid)
	}
	writer, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	s := &Store{path: path, schema: steps[len(steps)-1].Version, writer: writer, reader: writer, wlock: make(chan struct{}, 1),
		evWake: map[string]*evWaiters{}, closed: make(chan struct{})}
	if path != ":memory:" {
		s.reader, err = sql.Open("sqlite", dsn(path, false))
		if err != nil {
			writer.Close()
			return nil, fmt.Errorf("sqlite store: open %s: %w", path, err)
		}
		n := max(4, runtime.GOMAXPROCS(0))
		s.reader.SetMaxOpenConns(n)
		s.reader.SetMaxIdleConns(n)
	}
	if err := s.init(ctx, steps); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// init migrates the schema, prepares the statements and hands lock waits
// on the writer to write.
func (s *Store) init(ctx context.Context, steps []migration) error {
	if err := s.writer.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite store: open %s: %w", s.path, err)
	}
	if err := migrate(ctx, s.writer, steps); err != nil {
		return err
	}
	if err := s.prepare(ctx); err != nil {
		return err
	}
	// From here on write waits for the lock, in Go, where a context can
	// end the wait (SQLite's own busy handler sleeps in C and cannot be
	// interrupted).
	if _, err := s.writer.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
		return fmt.Errorf("sqlite store: open %s: %w", s.path, err)
	}
	return nil
}

// A prepared statement: where it goes, and its SQL.
type stmtSQL struct {
	st  **sql.Stmt
	sql string
}

// statements lists the statements prepare prepares on the writer (w) and
// on the reader (r).
func (s *Store) statements() (w, r []stmtSQL) {
	const runCols = `id, thread_id, number, status, error, created, updated`
	recordCols := `seq, run_id, step, kind, data, checksum, time, fence`
	insertRecord := `INSERT INTO records (thread_id, ` + recordCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	lastSeq := `SELECT coalesce((SELECT max(seq) FROM records WHERE thread_id = t.id), 0), lease_owner, lease_fence, lease_expires FROM threads t WHERE t.id = ?`
	insertThread := `INSERT INTO threads (id, workflow, created, updated, meta, source, spec) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
	threadCols := `t.id, t.workflow, t.created, t.updated, t.meta, t.source, t.spec`
	if s.schema < 6 {
		// Before sources and specs (tests only, as below): the two
		// arguments are taken and dropped.
		insertThread = `INSERT INTO threads (id, workflow, created, updated, meta) VALUES (?1, ?2, ?3, ?4, ?5 || substr(coalesce(?6, '') || ?7, 1, 0)) ON CONFLICT (id) DO NOTHING`
		threadCols = `t.id, t.workflow, t.created, t.updated, t.meta, NULL, x''`
	}
	// A thread with its latest run (the last Runs lists), which the
	// index runs_thread finds.
	s.selectThreads = `SELECT ` + threadCols + `, coalesce(r.id, ''), coalesce(r.number, 0), coalesce(r.status, '')
		FROM threads t LEFT JOIN runs r ON r.id = (SELECT id FROM runs WHERE thread_id = t.id ORDER BY number DESC, created DESC, id DESC LIMIT 1)`
	// ifSchema is q, or nothing to prepare at a schema before v.
	ifSchema := func(v int, q string) string {
		if s.schema < v {
			return ""
		}
		return q
	}
	if s.schema < 5 {
		// A database at a version before leases, which only tests open
		// (to write a file as an older weft did): no fences, no leases.
		recordCols = `seq, run_id, step, kind, data, checksum, time, 0`
		insertRecord = `INSERT INTO records (thread_id, seq, run_id, step, kind, data, checksum, time) VALUES (?, ?, ?, ?, ?, ?, ?, ? + 0 * ?)`
		lastSeq = `SELECT coalesce((SELECT max(seq) FROM records WHERE thread_id = t.id), 0), '', 0, 0 FROM threads t WHERE t.id = ?`
	}
	leaseAllows := func(thread, fence, now string) string {
		if s.schema < 5 {
			// Before leases (tests only): the parameters are taken
			// and dropped.
			return `(` + fence + ` + ` + now + `) IS NOT NULL`
		}
		return `EXISTS (SELECT 1 FROM threads WHERE id = ` + thread + ` AND iif(` + fence + ` = 0,
			NOT (lease_owner != '' AND lease_expires > ` + now + `),
			lease_owner != '' AND lease_fence = ` + fence + ` AND lease_expires > ` + now + `))`
	}
	w = []stmtSQL{
		{&s.w.insertThread, insertThread},
		{&s.w.updateThread, ifSchema(6, `UPDATE threads SET workflow = ?2, updated = ?3, meta = ?4, source = ?5, spec = ?6 WHERE id = ?1 RETURNING created`)},
		{&s.w.putSource, ifSchema(6, `INSERT INTO sources (digest, source) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING`)},
		{&s.w.sourceExists, ifSchema(6, `SELECT 1 FROM sources WHERE digest = ?`)},
		{&s.w.deleteThread, `DELETE FROM threads WHERE id = ?`},
		{&s.w.threadExists, `SELECT 1 FROM threads WHERE id = ?`},
		{&s.w.runThread, `SELECT thread_id, created FROM runs WHERE id = ?`},
		// putRun and upsertPending write only if the thread exists and
		// its lease allows the fence (?8 for a run, ?7 for a question) at
		// the time given (the next parameter): the rules of
		// store.CheckFence, as the trigger records_append applies them.
		// Writing nothing, they leave the error to a checked transaction.
		{&s.w.putRun, `INSERT INTO runs (` + runCols + `) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE ` + leaseAllows("?2", "?8", "?9") + `
			ON CONFLICT (id) DO UPDATE SET number = excluded.number, status = excluded.status, error = excluded.error,
			created = excluded.created, updated = excluded.updated WHERE runs.thread_id = excluded.thread_id`},
		{&s.w.upsertRun, `INSERT INTO runs (` + runCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET number = excluded.number, status = excluded.status, error = excluded.error,
			created = excluded.created, updated = excluded.updated`},
		{&s.w.lastSeq, lastSeq},
		{&s.w.insertRecord, insertRecord},
		{&s.w.upsertPending, `INSERT INTO pending (thread_id, id, run_id, node, question, created) SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE ` + leaseAllows("?1", "?7", "?8") + `
			ON CONFLICT (thread_id, id) DO UPDATE SET run_id = excluded.run_id, node = excluded.node,
			question = excluded.question, created = excluded.created`},
		{&s.w.deletePending, `DELETE FROM pending WHERE thread_id = ? AND id = ?`},
		{&s.w.pruneRuns, `SELECT ` + runCols + ` FROM runs WHERE thread_id = ? ORDER BY number, created, id`},
		{&s.w.pruneLog, `SELECT seq, run_id, kind FROM records WHERE thread_id = ? ORDER BY seq`},
		{&s.w.deleteRecordsBefore, `DELETE FROM records WHERE thread_id = ? AND seq < ?`},
		{&s.w.deleteRun, `DELETE FROM runs WHERE id = ?`},
		{&s.w.deleteRunPending, `DELETE FROM pending WHERE thread_id = ? AND run_id = ?`},
		// SetJob's move: from one of up to six statuses (?6..?11, the
		// list padded with its first).
		{&s.w.setJob, ifSchema(7, `UPDATE jobs SET status = ?2, run = iif(?3 = '', run, ?3), error = iif(?4 = '', error, ?4), updated = ?5
			WHERE id = ?1 AND status IN (?6, ?7, ?8, ?9, ?10, ?11) RETURNING `+jobCols)},
		// A job of an existing thread (?2), unless its id is taken.
		{&s.w.insertJob, ifSchema(7, `INSERT INTO jobs (`+jobCols+`) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11
			WHERE EXISTS (SELECT 1 FROM threads WHERE id = ?2) ON CONFLICT (id) DO NOTHING`)},
		{&s.w.deleteJob, ifSchema(7, `DELETE FROM jobs WHERE id = ?`)},
		// AppendRunEvents' check: the job's last event seq (0: none), no
		// row for a missing job.
		{&s.w.lastEvent, ifSchema(9, `SELECT coalesce((SELECT max(seq) FROM run_events WHERE job_id = j.id), 0) FROM jobs j WHERE j.id = ?`)},
		{&s.w.insertEvent, ifSchema(9, `INSERT INTO run_events (job_id, seq, attempt, n, event, data, time) VALUES (?, ?, ?, ?, ?, ?, ?)`)},
		{&s.w.pruneEvents, ifSchema(9, `DELETE FROM run_events WHERE job_id IN
			(SELECT id FROM jobs WHERE status NOT IN ('pending', 'running') AND updated < ?)`)},
		// Claim's and Release's common case, in one statement each: the
		// lease moves only if store.CheckFence (a claim, fence 0) or
		// store.CheckLease (a release) allows it at the time given (?4).
		{&s.w.claim, ifSchema(5, `UPDATE threads SET lease_owner = ?2, lease_fence = lease_fence + 1, lease_expires = ?3
			WHERE id = ?1 AND NOT (lease_owner != '' AND lease_expires > ?4) RETURNING lease_fence`)},
		{&s.w.release, ifSchema(5, `UPDATE threads SET lease_owner = '', lease_expires = 0
			WHERE id = ?1 AND ?3 > 0 AND lease_owner = ?2 AND lease_fence = ?3 AND lease_owner != '' AND lease_expires > ?4`)},
		{&s.w.leaseState, ifSchema(5, `SELECT lease_owner, lease_fence, lease_expires FROM threads WHERE id = ?`)},
		{&s.w.setLease, ifSchema(5, `UPDATE threads SET lease_owner = ?, lease_fence = ?, lease_expires = ? WHERE id = ?`)},
		{&s.w.putItem, ifSchema(7, `INSERT INTO items (ns, key, value, created, updated) VALUES (?1, ?2, ?3, ?4, ?5)
			ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, updated = ?6
			RETURNING created, updated`)},
		{&s.w.deleteItem, ifSchema(7, `DELETE FROM items WHERE ns = ? AND key = ?`)},
		// A transaction of prepared statements (see stmtTx).
		{&s.w.begin, `BEGIN IMMEDIATE`},
		{&s.w.commit, `COMMIT`},
		{&s.w.rollback, `ROLLBACK`},
		{&s.w.savepoint, `SAVEPOINT grouped`},
		{&s.w.rollbackTo, `ROLLBACK TO grouped`},
		{&s.w.releaseSave, `RELEASE grouped`},
	}
	r = []stmtSQL{
		{&s.r.thread, s.selectThreads + ` WHERE t.id = ?`},
		{&s.r.source, ifSchema(6, `SELECT source FROM sources WHERE digest = ?`)},
		{&s.r.threadExists, `SELECT 1 FROM threads WHERE id = ?`},
		{&s.r.run, `SELECT ` + runCols + ` FROM runs WHERE id = ?`},
		{&s.r.runs, `SELECT ` + runCols + ` FROM runs WHERE thread_id = ? ORDER BY number, created, id`},
		// With each record, the first seq of the log (computed once), for
		// store.CheckSeqs to tell a pruned log from a gap, read in the
		// same statement, so from the same state of the log.
		{&s.r.records, `SELECT ` + recordCols + `, (SELECT min(seq) FROM records WHERE thread_id = ?1) FROM records WHERE thread_id = ?1 AND seq >= ?2 ORDER BY seq`},
		{&s.r.lastSnapshot, `SELECT ` + recordCols + ` FROM records WHERE thread_id = ? AND kind = 'snapshot' ORDER BY seq DESC LIMIT 1`},
		{&s.r.head, `SELECT (SELECT seq FROM records WHERE thread_id = t.id ORDER BY seq DESC LIMIT 1),
			(SELECT time FROM records WHERE thread_id = t.id ORDER BY seq DESC LIMIT 1) FROM threads t WHERE t.id = ?`},
		{&s.r.pending, `SELECT id, run_id, node, question, created FROM pending WHERE thread_id = ? ORDER BY created, id`},
		{&s.r.job, ifSchema(7, `SELECT `+jobCols+` FROM jobs WHERE id = ?`)},
		{&s.r.jobStatus, ifSchema(7, `SELECT status FROM jobs WHERE id = ?`)},
		{&s.r.item, ifSchema(7, `SELECT `+itemCols+` FROM items WHERE ns = ? AND key = ?`)},
		{&s.r.runEvents, ifSchema(9, `SELECT seq, attempt, n, event, data, time FROM run_events
			WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ? + 0`)},
	}
	return w, r
}

func (s *Store) prepare(ctx context.Context) error {
	s.cache = newStmtCache(s.reader)
	w, r := s.statements()
	for _, p := range w {
		if p.sql == "" {
			continue // not at this (old) schema
		}
		st, err := s.writer.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("sqlite store: prepare %q: %w", p.sql, err)
		}
		*p.st = st
		s.stmts = append(s.stmts, st)
	}
	for _, p := range r {
		if p.sql == "" {
			continue
		}
		st, err := s.reader.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("sqlite store: prepare %q: %w", p.sql, err)
		}
		*p.st = st
		s.stmts = append(s.stmts, st)
	}
	return nil
}

// Close closes the statements and the database.
func (s *Store) Close() error {
	s.evMu.Lock()
	select {
	case <-s.closed:
	default:
		close(s.closed) // waiters of WaitRunEvents return
	}
	s.evMu.Unlock()
	if s.cache != nil {
		s.cache.close()
	}
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	var errs []error
	if s.reader != s.writer {
		errs = append(errs, s.reader.Close())
	}
	errs = append(errs, s.writer.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite store: close: %w", err)
	}
	return nil
}

// code returns the SQLite primary result code of err, or 0.
func code(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff
	}
	return 0
}

// write runs fn, which executes one of the writer's prepared statements,
// holding the writer: alone, or in a group commit with the writes queued
// meanwhile (group.go); it returns once fn's write is durable or failed.
// While another process holds the database's write lock (SQLITE_BUSY: fn
// did nothing) it waits and runs fn again, until BusyTimeout has passed or
// ctx ends; fn may therefore run more than once, and must write nothing
// when it fails. A full database or disk (SQLITE_FULL) fails at once,
// wrapping store.ErrFull, and a read-only one store.ErrReadOnly.
func (s *Store) write(ctx context.Context, fn func() error) error {
	return s.submit(ctx, single, fn)
}

// Times are stored as Unix nanoseconds, UTC.
func unix(t time.Time) int64 { return t.UnixNano() }

func fromUnix(n int64) time.Time { return time.Unix(0, n).UTC() }

func now() time.Time { return time.Now().UTC().Round(0) }

func notFound(what, id string) error {
	return fmt.Errorf("sqlite store: %s %s: %w", what, id, store.ErrNotFound)
}

// nonNil makes a nil slice empty, for NOT NULL blob columns.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// CreateThread stores a new thread, filling in zero Created and Updated.
func (s *Store) CreateThread(ctx context.Context, t *store.Thread) error {
	if err := store.CheckThread(t); err != nil {
		return fmt.Errorf("sqlite store: create %w", err)
	}
	meta, created, updated, err := threadRow(t, now())
	if err != nil {
		return err
	}
	var res sql.Result
	err = s.write(ctx, func() (err error) {
		res, err = s.w.insertThread.ExecContext(context.WithoutCancel(ctx), t.ID, t.Workflow, unix(created), unix(updated), string(meta), source(t.Source), nonNil(t.Spec))
		return err
	})
	if code(err) == sqliteConstraint && t.Source != "" {
		// The one constraint ON CONFLICT leaves: the source's foreign key.
		return fmt.Errorf("sqlite store: create thread %s: source %s: %w", t.ID, t.Source, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sqlite store: create thread %s: %w", t.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite store: create thread %s: %w", t.ID, err)
	} else if n == 0 {
		return fmt.Errorf("sqlite store: thread %s: %w", t.ID, store.ErrExists)
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

type scanner interface{ Scan(...any) error }

func scanThread(sc scanner, more ...any) (*store.Thread, error) {
	var (
		t                store.Thread
		created, updated int64
		meta             string
		src              sql.NullString
		spec             []byte
	)
	if err := sc.Scan(append([]any{&t.ID, &t.Workflow, &created, &updated, &meta, &src, &spec}, more...)...); err != nil {
		return nil, err
	}
	t.Source = src.String
	if len(spec) > 0 {
		t.Spec = spec
	}
	t.Created, t.Updated = fromUnix(created), fromUnix(updated)
	if err := json.Unmarshal([]byte(meta), &t.Meta); err != nil {
		return nil, &store.CorruptError{ThreadID: t.ID, Field: "meta", Detail: err.Error()}
	}
	return &t, nil
}

// scanListed reads a thread selected by selectThreads, with its latest
// run.
func scanListed(sc scanner) (*store.Thread, error) {
	var run string
	var status store.Status
	var number int
	t, err := scanThread(sc, &run, &number, &status)
	if err != nil {
		return nil, err
	}
	if run != "" {
		if err := store.CheckStatus(t.ID, run, status); err != nil {
			return nil, err
		}
		t.LastRun, t.Status = number, status
	}
	return t, nil
}

// Thread returns a thread, with its latest run.
func (s *Store) Thread(ctx context.Context, id string) (*store.Thread, error) {
	t, err := scanListed(s.r.thread.QueryRowContext(point(ctx), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("thread", id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store: thread %s: %w", id, err)
	}
	return t, nil
}

// UpdateThread replaces a thread's Workflow, Source, Spec and Meta; see
// store.Store.
func (s *Store) UpdateThread(ctx context.Context, t *store.Thread) error {
	if err := store.CheckThread(t); err != nil {
		return fmt.Errorf("sqlite store: update %w", err)
	}
	meta, err := json.Marshal(t.Meta)
	if err != nil {
		return fmt.Errorf("sqlite store: thread %s meta: %w", t.ID, err)
	}
	updated := t.Updated
	if updated.IsZero() {
		updated = now()
	}
	var created int64
	err = s.write(ctx, func() error {
		return s.w.updateThread.QueryRowContext(context.WithoutCancel(ctx), t.ID, t.Workflow, unix(updated), string(meta), source(t.Source), nonNil(t.Spec)).Scan(&created)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFound("thread", t.ID)
	case code(err) == sqliteConstraint && t.Source != "":
		return fmt.Errorf("sqlite store: update thread %s: source %s: %w", t.ID, t.Source, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("sqlite store: update thread %s: %w", t.ID, err)
	}
	t.Created, t.Updated = fromUnix(created), updated
	return nil
}

// PutSource stores a workflow source under its digest; see store.Store.
func (s *Store) PutSource(ctx context.Context, digest string, src []byte) error {
	if err := store.CheckSource(digest, src); err != nil {
		return fmt.Errorf("sqlite store: put source: %w", err)
	}
	err := s.write(ctx, func() error {
		_, err := s.w.putSource.ExecContext(context.WithoutCancel(ctx), digest, nonNil(src))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite store: put source %s: %w", digest, err)
	}
	return nil
}

// Source returns the source stored under digest.
func (s *Store) Source(ctx context.Context, digest string) ([]byte, error) {
	var src []byte
	err := s.r.source.QueryRowContext(point(ctx), digest).Scan(&src)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("source", digest)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store: source %s: %w", digest, err)
	}
	if src == nil {
		src = []byte{}
	}
	return src, nil
}

// Threads lists the threads opts selects, in its order, with their
// latest runs, in one query; see store.Store.
func (s *Store) Threads(ctx context.Context, opts store.ListOptions) ([]*store.Thread, error) {
	if err := opts.Check(); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	var (
		where []string
		args  []any
	)
	if len(opts.Status) > 0 {
		where = append(where, `coalesce(r.status, '') IN (?`+strings.Repeat(", ?", len(opts.Status)-1)+`)`)
		for _, st := range opts.Status {
			args = append(args, string(st))
		}
	}
	if opts.Workflow != "" {
		where, args = append(where, `t.workflow = ?`), append(args, opts.Workflow)
	}
	if opts.Source != "" {
		where, args = append(where, `t.source = ?`), append(args, opts.Source)
	}
	// json_each takes any key as it is, where a json_extract path would
	// need quoting.
	for _, k := range slices.Sorted(maps.Keys(opts.Meta)) {
		where = append(where, `EXISTS (SELECT 1 FROM json_each(t.meta) m WHERE m.key = ? AND m.type = 'text' AND m.value = ?)`)
		args = append(args, k, opts.Meta[k])
	}
	if opts.Search != "" {
		// lower() folds ASCII letters only, as Search does.
		like := store.LikeContains(opts.Search)
		values := `EXISTS (SELECT 1 FROM json_each(t.meta) m WHERE m.type = 'text' AND lower(m.value) LIKE ? ESCAPE '\')`
		if rawSafe(opts.Search) {
			// The meta column's JSON text holds such a term as it is
			// wherever a value does: a LIKE on the text first spares
			// json_each on most rows (which still decides: the text
			// has the keys too).
			values = `lower(t.meta) LIKE ? ESCAPE '\' AND ` + values
		}
		cond := `(lower(t.id) LIKE ? ESCAPE '\' OR ` + values + `)`
		where = append(where, cond)
		for range strings.Count(cond, "?") {
			args = append(args, like) // the same pattern each time
		}
	}
	// OldestFirst is NewestFirst's exact reverse, ties included (the
	// index threads_updated read backwards).
	dir, cmp, idDir, idCmp := "DESC", "<", "", ">"
	if opts.Order == store.OldestFirst {
		dir, cmp, idDir, idCmp = "ASC", ">", " DESC", "<"
	}
	if !opts.After.IsZero() {
		where = append(where, `(t.updated `+cmp+` ? OR t.updated = ? AND t.id `+idCmp+` ?)`)
		u := unix(opts.After.Updated)
		args = append(args, u, u, opts.After.ID)
	}
	q := s.selectThreads
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY t.updated ` + dir + `, t.id` + idDir + ` LIMIT ? + 0 OFFSET ? + 0`
	limit := int64(-1)
	if opts.Limit > 0 {
		limit = int64(opts.Limit)
	}
	args = append(args, limit, opts.Offset)
	rows, err := s.cache.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: list threads: %w", err)
	}
	defer rows.Close()
	var out []*store.Thread
	for rows.Next() {
		t, err := scanListed(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite store: list threads: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: list threads: %w", err)
	}
	return out, nil
}

// rawSafe reports whether term is written as itself in the JSON text
// json.Marshal makes of a value that contains it: printable ASCII but
// for what it escapes (" \ < > &).
func rawSafe(term string) bool {
	for i := range len(term) {
		if c := term[i]; c < 0x20 || c > 0x7e || strings.IndexByte(`"\<>&`, c) >= 0 {
			return false
		}
	}
	return true
}

// DeleteThread removes a thread; its runs, records, questions and jobs
// (with their events) go with it (ON DELETE CASCADE).
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	var res sql.Result
	err := s.write(ctx, func() (err error) {
		res, err = s.w.deleteThread.ExecContext(ctx, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite store: delete thread %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite store: delete thread %s: %w", id, err)
	} else if n == 0 {
		return notFound("thread", id)
	}
	return nil
}

// tx runs fn in a write transaction (BEGIN IMMEDIATE) holding the writer,
// committing if fn returns nil. fn may run more than once (see write).
func (s *Store) tx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.submit(ctx, alone, func() error {
		// The transaction does not watch ctx, which write checked just
		// before: database/sql would watch a cancelable context from a
		// goroutine of its own for the transaction and for each of its
		// statements, which costs more than the short transactions here.
		ctx := context.WithoutCancel(ctx)
		tx, err := s.writer.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(ctx, tx); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

// stmtTx runs fn, which executes the writer's prepared statements (s.w)
// without a context, in one transaction begun and ended by prepared
// statements too: cheaper than tx's database/sql transaction, whose
// BEGIN and COMMIT the driver compiles each time. It relies on the
// writer's one connection, which write holds alone. In a group commit
// (group.go) fn runs inside a savepoint of the group's transaction
// instead. fn must write nothing when it fails (it is rolled back, or
// rolled back to its savepoint); a ROLLBACK that fails
// leaves the connection in the transaction, so that connection is then
// closed (database/sql opens another).
func (s *Store) stmtTx(ctx context.Context, fn func() error) error {
	return s.submit(ctx, multi, fn)
}

// dropWriterConn closes the writer's connection, which a failed ROLLBACK
// left inside a transaction: its next use opens a new one.
func (s *Store) dropWriterConn(cause error) error {
	c, err := s.writer.Conn(context.Background())
	if err != nil {
		return fmt.Errorf("rollback: %w; dropping its connection: %w", cause, err)
	}
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.Close()
	return fmt.Errorf("rollback: %w (its connection was dropped)", cause)
}

// exists reports whether the thread exists, inside tx.
func (s *Store) exists(ctx context.Context, tx *sql.Tx, id string) error {
	var one int
	err := tx.StmtContext(ctx, s.w.threadExists).QueryRowContext(ctx, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("thread", id)
	}
	return err
}

// PutRun creates or updates a run, filling in zero Created and Updated.
// A run cannot move to another thread.
func (s *Store) PutRun(ctx context.Context, r *store.Run) error {
	if err := store.CheckRun(r); err != nil {
		return fmt.Errorf("sqlite store: put %w", err)
	}
	created, updated := r.Created, r.Updated
	if !created.IsZero() && !updated.IsZero() {
		// The common case, in one statement: a run of an existing thread
		// with both times given. Anything else (a missing thread, a run
		// of another thread) takes the checked path below for its error.
		var n int64
		err := s.write(ctx, func() error {
			res, err := s.w.putRun.ExecContext(context.Background(), r.ID, r.ThreadID, r.Number, r.Status, r.Error, unix(created), unix(updated), r.Fence, unix(now()))
			if err == nil {
				n, err = res.RowsAffected()
			}
			return err
		})
		if err == nil && n == 1 {
			return nil
		}
	}
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := s.fenced(ctx, tx, "put run", r.ThreadID, r.Fence, now()); err != nil {
			return err
		}
		var (
			thread string
			old    int64
		)
		err := tx.StmtContext(ctx, s.w.runThread).QueryRowContext(ctx, r.ID).Scan(&thread, &old)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if created.IsZero() {
				created = now()
			}
		case err != nil:
			return err
		case thread != r.ThreadID:
			return fmt.Errorf("run %s belongs to thread %s, not %s: %w", r.ID, thread, r.ThreadID, store.ErrInvalid)
		case created.IsZero():
			created = fromUnix(old)
		}
		if updated.IsZero() {
			updated = now()
		}
		_, err = tx.StmtContext(ctx, s.w.upsertRun).ExecContext(ctx, r.ID, r.ThreadID, r.Number, r.Status, r.Error, unix(created), unix(updated))
		return err
	})
	var le *store.LeaseError
	if errors.As(err, &le) {
		return err
	}
	if err != nil {
		return fmt.Errorf("sqlite store: put run %s: %w", r.ID, err)
	}
	r.Created, r.Updated = created, updated
	return nil
}

// fenced checks, inside tx, that the thread exists and that its lease
// allows a write under fence (store.CheckFence, op naming the write) at
// the time at (which a conditional statement after it must be given too).
func (s *Store) fenced(ctx context.Context, tx *sql.Tx, op, id string, fence int64, at time.Time) error {
	if s.schema < 5 {
		return s.exists(ctx, tx, id)
	}
	st, err := s.leaseState(ctx, tx, id)
	if err != nil {
		return err
	}
	return store.CheckFence(id, op, fence, st, at)
}

func scanRun(sc scanner) (*store.Run, error) {
	var (
		r                store.Run
		created, updated int64
	)
	if err := sc.Scan(&r.ID, &r.ThreadID, &r.Number, &r.Status, &r.Error, &created, &updated); err != nil {
		return nil, err
	}
	if err := store.CheckStatus(r.ThreadID, r.ID, r.Status); err != nil {
		return nil, err
	}
	r.Created, r.Updated = fromUnix(created), fromUnix(updated)
	return &r, nil
}

// Run returns a run.
func (s *Store) Run(ctx context.Context, id string) (*store.Run, error) {
	r, err := scanRun(s.r.run.QueryRowContext(point(ctx), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("run", id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store: run %s: %w", id, err)
	}
	return r, nil
}

// point is the context of a point read: a row by its key, or the few
// rows of one thread an index finds, which ends in microseconds. It is
// ctx without its cancellation, unless ctx is done already (the
// statement then fails at once, as with ctx): a cancellable context costs
// each statement two goroutines (database/sql's and the driver's, which
// wait on ctx.Done to stop it), more than the read itself would gain by
// being stopped. The writes run their statements without cancellation
// too (write checks ctx before each attempt).
func point(ctx context.Context) context.Context {
	if ctx.Err() != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// threadExists reports ErrNotFound for a missing thread, on the reader.
func (s *Store) threadExists(ctx context.Context, id string) error {
	var one int
	err := s.r.threadExists.QueryRowContext(point(ctx), id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("thread", id)
	}
	if err != nil {
		return fmt.Errorf("sqlite store: thread %s: %w", id, err)
	}
	return nil
}

// Runs lists a thread's runs by Number, then Created, then ID.
func (s *Store) Runs(ctx context.Context, threadID string) ([]*store.Run, error) {
	rows, err := s.r.runs.QueryContext(ctx, threadID)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: runs of %s: %w", threadID, err)
	}
	defer rows.Close()
	var out []*store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite store: runs of %s: %w", threadID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: runs of %s: %w", threadID, err)
	}
	if len(out) == 0 {
		if err := s.threadExists(ctx, threadID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Append adds records to a thread; see store.Store. One record is one
// autocommit INSERT, which the schema's trigger records_append refuses
// unless its Seq continues the log; a refused record, and a batch, go
// through appendTx.
func (s *Store) Append(ctx context.Context, recs ...*store.Record) error {
	if len(recs) == 0 {
		return ctx.Err()
	}
	if err := store.CheckAppend(recs); err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	id := recs[0].ThreadID
	var (
		t   time.Time
		err error
	)
	if len(recs) == 1 {
		r := recs[0]
		err = s.write(ctx, func() error {
			// The record's time is also the time the trigger checks
			// the thread's lease at: read when the writer is ours.
			t = now()
			// No context for the statement: the driver would watch a
			// cancelable one from a goroutine of its own, which costs
			// more than the insert. write checked ctx just before.
			_, err := s.w.insertRecord.ExecContext(context.Background(), id, r.Seq, r.RunID, r.Step, string(r.Kind), nonNil(r.Data), int64(store.Sum(r.Data)), unix(t), r.Fence)
			return err
		})
		if code(err) == sqliteConstraint {
			// The trigger refused the seq or the fence, or the thread
			// is missing: find out which, reading and writing in one
			// transaction.
			t, err = s.appendTx(ctx, recs)
		}
	} else {
		t, err = s.appendTx(ctx, recs)
	}
	if err != nil {
		var (
			ce *store.ConflictError
			le *store.LeaseError
		)
		if errors.As(err, &ce) || errors.As(err, &le) || errors.Is(err, store.ErrNotFound) {
			return err
		}
		return fmt.Errorf("sqlite store: append to %s at %d: %w", id, recs[0].Seq, err)
	}
	for _, r := range recs {
		r.Checksum = store.Sum(r.Data)
		r.Time = t
	}
	return nil
}

// appendTx appends recs in one transaction that reads the thread's last
// Seq and lease first, so that a refusal says exactly why. It returns the
// records' time.
func (s *Store) appendTx(ctx context.Context, recs []*store.Record) (t time.Time, err error) {
	err = s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		t = now()
		return s.appendIn(ctx, tx, recs, t)
	})
	return t, err
}

// appendIn appends recs inside tx at time t, reading the thread's last
// Seq and lease first so that a refusal says exactly why: the lease
// (store.CheckFence), then the Seq.
func (s *Store) appendIn(ctx context.Context, tx *sql.Tx, recs []*store.Record, t time.Time) error {
	return s.appendWith(ctx, func(st *sql.Stmt) *sql.Stmt { return tx.StmtContext(ctx, st) }, recs, t)
}

// appendWith is appendIn with the writer's statements as stmt gives
// them: of a database/sql transaction (appendIn), or as they are inside
// stmtTx (EndRun, with ctx context.Background()).
func (s *Store) appendWith(ctx context.Context, stmt func(*sql.Stmt) *sql.Stmt, recs []*store.Record, t time.Time) error {
	id := recs[0].ThreadID
	{
		var (
			last    int64
			lease   store.LeaseState
			expires int64
		)
		err := stmt(s.w.lastSeq).QueryRowContext(ctx, id).Scan(&last, &lease.Owner, &lease.Fence, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("thread", id)
		}
		if err != nil {
			return err
		}
		lease.Expires = fromUnix(expires)
		if err := store.CheckFence(id, "append", recs[0].Fence, lease, t); err != nil {
			return err
		}
		if recs[0].Seq != last+1 {
			return &store.ConflictError{ThreadID: id, Want: recs[0].Seq, Got: last}
		}
		ins := stmt(s.w.insertRecord)
		for _, r := range recs {
			if _, err := ins.ExecContext(ctx, id, r.Seq, r.RunID, r.Step, string(r.Kind), nonNil(r.Data), int64(store.Sum(r.Data)), unix(t), r.Fence); err != nil {
				return err
			}
		}
		return nil
	}
}

// threadRow returns what a thread's row holds beyond its ID and workflow:
// its metadata as JSON, and its times with zero ones filled in (created
// from now, updated from created).
func threadRow(t *store.Thread, now time.Time) (meta []byte, created, updated time.Time, err error) {
	if meta, err = json.Marshal(t.Meta); err != nil {
		return nil, created, updated, fmt.Errorf("sqlite store: thread %s meta: %w", t.ID, err)
	}
	created, updated = t.Created, t.Updated
	if created.IsZero() {
		created = now
	}
	if updated.IsZero() {
		updated = created
	}
	return meta, created, updated, nil
}

// WriteBatch implements store.BatchWriter: the thread (unless it
// exists), the records and the run, in one transaction.
func (s *Store) WriteBatch(ctx context.Context, b *store.Batch) error {
	if b.Run != nil {
		if err := store.CheckRun(b.Run); err != nil {
			return fmt.Errorf("sqlite store: batch: %w", err)
		}
	}
	if b.Thread != nil {
		if err := store.CheckThread(b.Thread); err != nil {
			return fmt.Errorf("sqlite store: batch: %w", err)
		}
	}
	if len(b.Records) > 0 {
		if err := store.CheckAppend(b.Records); err != nil {
			return fmt.Errorf("sqlite store: %w", err)
		}
	}
	t := now()
	var (
		meta             []byte
		created, updated time.Time
	)
	if th := b.Thread; th != nil {
		var err error
		if meta, created, updated, err = threadRow(th, t); err != nil {
			return err
		}
	}
	run := b.Run
	var runCreated, runUpdated time.Time
	if run != nil {
		runCreated, runUpdated = run.Created, run.Updated
		if runCreated.IsZero() {
			runCreated = t
		}
		if runUpdated.IsZero() {
			runUpdated = t
		}
	}
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if th := b.Thread; th != nil {
			if _, err := tx.StmtContext(ctx, s.w.insertThread).ExecContext(ctx, th.ID, th.Workflow, unix(created), unix(updated), string(meta), source(th.Source), nonNil(th.Spec)); err != nil {
				if code(err) == sqliteConstraint && th.Source != "" {
					return fmt.Errorf("thread %s: source %s: %w", th.ID, th.Source, store.ErrNotFound)
				}
				return err
			}
		}
		if len(b.Records) > 0 {
			if err := s.appendIn(ctx, tx, b.Records, t); err != nil {
				return err
			}
		}
		if run != nil {
			// The statement itself judges the lease; only when it
			// writes nothing is the lease read, to say why.
			at := now()
			res, err := tx.StmtContext(ctx, s.w.putRun).ExecContext(ctx, run.ID, run.ThreadID, run.Number, run.Status, run.Error, unix(runCreated), unix(runUpdated), run.Fence, unix(at))
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				if err := s.fenced(ctx, tx, "put run", run.ThreadID, run.Fence, at); err != nil {
					return err
				}
				return fmt.Errorf("run %s belongs to another thread than %s: %w", run.ID, run.ThreadID, store.ErrInvalid)
			}
		}
		return nil
	})
	if err != nil {
		var (
			ce *store.ConflictError
			le *store.LeaseError
		)
		if errors.As(err, &ce) || errors.As(err, &le) || errors.Is(err, store.ErrNotFound) {
			return err
		}
		return fmt.Errorf("sqlite store: write batch: %w", err)
	}
	if th := b.Thread; th != nil && th.Created.IsZero() {
		th.Created, th.Updated = created, updated
	}
	for _, r := range b.Records {
		r.Checksum, r.Time = store.Sum(r.Data), t
	}
	if run != nil {
		run.Created, run.Updated = runCreated, runUpdated
	}
	return nil
}

// scanRecord reads a record and checks it; more are where the columns
// after the record's go.
func scanRecord(threadID string, sc scanner, more ...any) (*store.Record, error) {
	var (
		r        = store.Record{ThreadID: threadID}
		kind     string
		checksum int64
		t        int64
	)
	if err := sc.Scan(append([]any{&r.Seq, &r.RunID, &r.Step, &kind, &r.Data, &checksum, &t, &r.Fence}, more...)...); err != nil {
		return nil, err
	}
	r.Kind, r.Time = store.Kind(kind), fromUnix(t)
	if checksum < 0 || checksum > 0xffffffff {
		return nil, &store.CorruptError{ThreadID: threadID, Seq: r.Seq, Step: r.Step, Field: "checksum", Detail: fmt.Sprintf("%d is not a CRC-32C", checksum)}
	}
	r.Checksum = uint32(checksum)
	if !r.Kind.Valid() {
		return nil, &store.CorruptError{ThreadID: threadID, Seq: r.Seq, Step: r.Step, Field: "kind", Detail: fmt.Sprintf("unknown kind %q", kind)}
	}
	if sum := store.Sum(r.Data); sum != r.Checksum {
		return nil, &store.CorruptError{ThreadID: threadID, Seq: r.Seq, Step: r.Step, Field: "data",
			Detail: fmt.Sprintf("CRC-32C of the data is %08x, the stored checksum %08x", sum, r.Checksum)}
	}
	return &r, nil
}

// Records returns a thread's records from Seq from, in order, verified.
func (s *Store) Records(ctx context.Context, threadID string, from int64) ([]*store.Record, error) {
	rows, err := s.r.records.QueryContext(ctx, threadID, from)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: records of %s: %w", threadID, err)
	}
	defer rows.Close()
	var (
		out   []*store.Record
		first int64
	)
	for rows.Next() {
		r, err := scanRecord(threadID, rows, &first)
		if err != nil {
			return nil, fmt.Errorf("sqlite store: records of %s: %w", threadID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: records of %s: %w", threadID, err)
	}
	if len(out) == 0 {
		if err := s.threadExists(ctx, threadID); err != nil {
			return nil, err
		}
		return []*store.Record{}, nil
	}
	// The thread's last seq is not kept apart from its records: a log
	// cut short at its end reads as a shorter log.
	if err := store.CheckSeqs(threadID, from, out, first, -1); err != nil {
		return nil, fmt.Errorf("sqlite store: records of %s: %w", threadID, err)
	}
	return out, nil
}

// LastSnapshot returns the thread's latest snapshot, verified.
func (s *Store) LastSnapshot(ctx context.Context, threadID string) (*store.Record, error) {
	r, err := scanRecord(threadID, s.r.lastSnapshot.QueryRowContext(point(ctx), threadID))
	if errors.Is(err, sql.ErrNoRows) {
		if err := s.threadExists(ctx, threadID); err != nil {
			return nil, err
		}
		return nil, notFound("snapshot of thread", threadID)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store: last snapshot of %s: %w", threadID, err)
	}
	return r, nil
}

// Head returns the seq and time of the thread's last record (see
// store.HeadReader); 0 for a thread with none.
func (s *Store) Head(ctx context.Context, threadID string) (int64, time.Time, error) {
	var seq, t sql.NullInt64
	err := s.r.head.QueryRowContext(point(ctx), threadID).Scan(&seq, &t)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, time.Time{}, notFound("thread", threadID)
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("sqlite store: head of %s: %w", threadID, err)
	}
	if !seq.Valid {
		return 0, time.Time{}, nil
	}
	return seq.Int64, fromUnix(t.Int64), nil
}

// PutPending records or replaces a question, filling in a zero Created.
func (s *Store) PutPending(ctx context.Context, p *store.Pending) error {
	if p == nil || p.ID == "" {
		return fmt.Errorf("sqlite store: put pending without an ID: %w", store.ErrInvalid)
	}
	created := p.Created
	if created.IsZero() {
		created = now()
	}
	// The common case is one autocommit statement. It writes nothing
	// for a missing thread or a fence the lease refuses, which the
	// checked transaction below tells apart.
	var n int64
	err := s.write(ctx, func() error {
		// No context for the statement (see Append); write checked ctx.
		res, err := s.w.upsertPending.ExecContext(context.Background(), p.ThreadID, p.ID, p.RunID, p.Node, nonNil(p.Question), unix(created), p.Fence, unix(now()))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err == nil && n == 1 {
		p.Created = created
		return nil
	}
	if err != nil && code(err) != sqliteConstraint {
		return fmt.Errorf("sqlite store: put pending %s of %s: %w", p.ID, p.ThreadID, err)
	}
	err = s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		at := now()
		if err := s.fenced(ctx, tx, "put pending", p.ThreadID, p.Fence, at); err != nil {
			return err
		}
		_, err := tx.StmtContext(ctx, s.w.upsertPending).ExecContext(ctx, p.ThreadID, p.ID, p.RunID, p.Node, nonNil(p.Question), unix(created), p.Fence, unix(at))
		return err
	})
	var le *store.LeaseError
	if errors.As(err, &le) {
		return err
	}
	if err != nil {
		return fmt.Errorf("sqlite store: put pending %s of %s: %w", p.ID, p.ThreadID, err)
	}
	p.Created = created
	return nil
}

// Pending lists a thread's questions by Created, then ID.
func (s *Store) Pending(ctx context.Context, threadID string) ([]*store.Pending, error) {
	rows, err := s.r.pending.QueryContext(point(ctx), threadID)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: pending of %s: %w", threadID, err)
	}
	defer rows.Close()
	var out []*store.Pending
	for rows.Next() {
		p := store.Pending{ThreadID: threadID}
		var created int64
		if err := rows.Scan(&p.ID, &p.RunID, &p.Node, &p.Question, &created); err != nil {
			return nil, fmt.Errorf("sqlite store: pending of %s: %w", threadID, err)
		}
		p.Created = fromUnix(created)
		out = append(out, &p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: pending of %s: %w", threadID, err)
	}
	if len(out) == 0 {
		if err := s.threadExists(ctx, threadID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DeletePending removes a question.
func (s *Store) DeletePending(ctx context.Context, threadID, id string) error {
	var res sql.Result
	err := s.write(ctx, func() (err error) {
		res, err = s.w.deletePending.ExecContext(context.WithoutCancel(ctx), threadID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite store: delete pending %s of %s: %w", id, threadID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite store: delete pending %s of %s: %w", id, threadID, err)
	} else if n == 0 {
		return notFound("pending question of thread "+threadID+":", id)
	}
	return nil
}

// EndRun implements store.RunEnder: the records, the questions, the
// run, the job's change and the lease's release in one transaction of
// prepared statements (stmtTx). The records are appended as appendTx
// appends them (the thread's last Seq and lease read first); the other
// writes judge the lease themselves as PutPending's, PutRun's and
// Release's do, and only a statement that writes nothing reads the lease,
// to say why, and then nothing is written. The job changes with SetJob's
// statement: when it changes nothing (no such job, or not in From), the
// rest is still written.
func (s *Store) EndRun(ctx context.Context, e *store.RunEnd) error {
	if err := store.CheckRunEnd(e); err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	if len(e.Records) > 0 {
		if err := store.CheckAppend(e.Records); err != nil {
			return fmt.Errorf("sqlite store: %w", err)
		}
	}
	if err := s.leases(); err != nil {
		return err
	}
	t := now()
	var jobArgs []any
	if j := e.Job; j != nil {
		if s.schema < 7 {
			return fmt.Errorf("sqlite store: end run of thread %s: job %s: jobs need schema version 7, the database has %d: %w", e.Thread, j.ID, s.schema, store.ErrInvalid)
		}
		var err error
		if jobArgs, err = setJobArgs(j.ID, j.From, j.To, j.Run, j.Error, t); err != nil {
			return fmt.Errorf("sqlite store: end run of thread %s: %w", e.Thread, err)
		}
	}
	run := e.Run
	var runCreated, runUpdated time.Time
	if run != nil {
		runCreated, runUpdated = run.Created, run.Updated
		if runCreated.IsZero() || runUpdated.IsZero() {
			// PutRun's checked path keeps a stored Created; EndRun is
			// given both times (the engine always gives them).
			return fmt.Errorf("sqlite store: end run %s without its Created and Updated: %w", run.ID, store.ErrInvalid)
		}
	}
	created := make([]time.Time, len(e.Pending))
	for i, p := range e.Pending {
		created[i] = p.Created
		if created[i].IsZero() {
			created[i] = t
		}
	}
	bg := context.Background() // stmtTx's statements take none
	// written runs a statement that writes one row unless the lease
	// refuses it; when it writes none, judge says why.
	written := func(st *sql.Stmt, judge func() error, args ...any) error {
		res, err := st.ExecContext(bg, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		return judge()
	}
	jobDone := false
	err := s.stmtTx(ctx, func() error {
		jobDone = false
		if len(e.Records) == 0 && e.Run == nil && len(e.Pending) == 0 && e.Release == nil {
			// No statement below would find a missing thread.
			if _, err := s.lease(e.Thread); err != nil {
				return err
			}
		}
		if len(e.Records) > 0 {
			if err := s.appendWith(bg, func(st *sql.Stmt) *sql.Stmt { return st }, e.Records, t); err != nil {
				return err
			}
		}
		for _, id := range e.Answered {
			if _, err := s.w.deletePending.ExecContext(bg, e.Thread, id); err != nil {
				return err
			}
		}
		for i, p := range e.Pending {
			if err := written(s.w.upsertPending, func() error {
				return s.judge("put pending", e.Thread, p.Fence, t, fmt.Errorf("question %s of thread %s not written", p.ID, e.Thread))
			}, p.ThreadID, p.ID, p.RunID, p.Node, nonNil(p.Question), unix(created[i]), p.Fence, unix(t)); err != nil {
				return err
			}
		}
		if run != nil {
			if err := written(s.w.putRun, func() error {
				return s.judge("put run", e.Thread, run.Fence, t, fmt.Errorf("run %s belongs to another thread than %s: %w", run.ID, run.ThreadID, store.ErrInvalid))
			}, run.ID, run.ThreadID, run.Number, run.Status, run.Error, unix(runCreated), unix(runUpdated), run.Fence, unix(t)); err != nil {
				return err
			}
		}
		if jobArgs != nil {
			// No row: no such job, or one not in From; left as it is.
			_, err := scanJob(s.w.setJob.QueryRowContext(bg, jobArgs...))
			switch {
			case err == nil:
				jobDone = true
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("job %s: %w", e.Job.ID, err)
			}
		}
		if l := e.Release; l != nil {
			if err := written(s.w.release, func() error {
				st, err := s.lease(l.Thread)
				if err != nil {
					return err
				}
				if err := store.CheckLease("release", *l, st, t); err != nil {
					return err
				}
				return fmt.Errorf("lease of thread %s not released", l.Thread)
			}, l.Thread, l.Owner, l.Fence, unix(t)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		var (
			le *store.LeaseError
			ce *store.ConflictError
		)
		if errors.As(err, &le) || errors.As(err, &ce) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
			return err
		}
		return fmt.Errorf("sqlite store: end run of thread %s: %w", e.Thread, err)
	}
	// Committed: only now are the parts told what was written.
	for _, r := range e.Records {
		r.Checksum, r.Time = store.Sum(r.Data), t
	}
	if e.Job != nil {
		e.Job.Done = jobDone
	}
	for i, p := range e.Pending {
		p.Created = created[i]
	}
	if run != nil {
		run.Created, run.Updated = runCreated, runUpdated
	}
	return nil
}

// lease reads a thread's lease with the writer's statement, inside
// stmtTx; a missing thread is store.ErrNotFound.
func (s *Store) lease(id string) (store.LeaseState, error) {
	var (
		st      store.LeaseState
		expires int64
	)
	err := s.w.leaseState.QueryRowContext(context.Background(), id).Scan(&st.Owner, &st.Fence, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return st, notFound("thread", id)
	}
	st.Expires = fromUnix(expires)
	return st, err
}

// judge says why a fenced write (op) under fence wrote nothing at time
// at, inside stmtTx: the lease refused it (store.CheckFence), the thread
// is missing, or else otherwise.
func (s *Store) judge(op, id string, fence int64, at time.Time, otherwise error) error {
	st, err := s.lease(id)
	if err != nil {
		return err
	}
	if err := store.CheckFence(id, op, fence, st, at); err != nil {
		return err
	}
	return otherwise
}

// Prune removes the runs of a thread that opts selects, their questions,
// and the records before the snapshot the kept runs fold from, in one
// transaction; see store.Store.
func (s *Store) Prune(ctx context.Context, threadID string, opts store.PruneOptions) (int, error) {
	if opts.KeepRuns < 0 {
		return 0, fmt.Errorf("sqlite store: prune keeping %d runs: %w", opts.KeepRuns, store.ErrInvalid)
	}
	removed := 0
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		removed = 0
		if err := s.exists(ctx, tx, threadID); err != nil {
			return err
		}
		rows, err := tx.StmtContext(ctx, s.w.pruneRuns).QueryContext(ctx, threadID)
		if err != nil {
			return err
		}
		var runs []*store.Run
		for rows.Next() {
			r, err := scanRun(rows)
			if err != nil {
				rows.Close()
				return err
			}
			runs = append(runs, r)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		drop, keep := opts.Select(runs)
		if len(drop) == 0 {
			return nil
		}
		kept := map[string]bool{}
		for _, r := range keep {
			kept[r.ID] = true
		}
		// Find the first record of a kept run and the last snapshot at
		// or before it (or the last snapshot, when no kept run has a
		// record yet).
		rows, err = tx.StmtContext(ctx, s.w.pruneLog).QueryContext(ctx, threadID)
		if err != nil {
			return err
		}
		var cut int64
		for rows.Next() {
			var (
				seq       int64
				run, kind string
			)
			if err := rows.Scan(&seq, &run, &kind); err != nil {
				rows.Close()
				return err
			}
			if store.Kind(kind) == store.Snapshot {
				cut = seq
			}
			if kept[run] {
				break
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if cut > 0 {
			res, err := tx.StmtContext(ctx, s.w.deleteRecordsBefore).ExecContext(ctx, threadID, cut)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			removed = int(n)
		}
		for _, r := range drop {
			if _, err := tx.StmtContext(ctx, s.w.deleteRunPending).ExecContext(ctx, threadID, r.ID); err != nil {
				return err
			}
			if _, err := tx.StmtContext(ctx, s.w.deleteRun).ExecContext(ctx, r.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite store: prune %s: %w", threadID, err)
	}
	return removed, nil
}
