package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// CorruptRecord flips a bit of a stored record's data behind the store's
// back: it makes the store a storetest.Corrupter.
func (s *Store) CorruptRecord(ctx context.Context, threadID string, seq int64) error {
	tag, err := s.pool.Exec(ctx, `UPDATE weft_records SET data = set_byte(data, 0, get_byte(data, 0) # 1)
WHERE thread_id = $1 AND seq = $2::bigint`, threadID, seq)
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("no record %s/%d", threadID, seq)
	}
	return err
}

var _ storetest.Corrupter = (*Store)(nil)

// DeleteRecord deletes a record with SQL, behind the store's back, for
// storetest.Deleter.
func (s *Store) DeleteRecord(ctx context.Context, threadID string, seq int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM weft_records WHERE thread_id = $1 AND seq = $2::bigint`, threadID, seq)
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("no record %s/%d", threadID, seq)
	}
	return err
}

var _ storetest.Deleter = (*Store)(nil)

// open opens a store on a fresh database and closes it when the test ends.
func open(t testing.TB) *Store {
	t.Helper()
	db := pgtest.New(t)
	s, err := Open(context.Background(), db.DSN)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

func TestMigrateFromEmpty(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	for i := range 2 { // the second Open finds the schema current
		s, err := Open(ctx, db.DSN)
		if err != nil {
			t.Fatalf("Open #%d: %v", i+1, err)
		}
		v, err := s.Version(ctx)
		s.Close()
		if err != nil || v != SchemaVersion {
			t.Fatalf("Open #%d: version %d (%v), want %d", i+1, v, err, SchemaVersion)
		}
	}
}

func TestMigrateFromV1(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	cfg, err := Config(db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := openAt(ctx, cfg, 1)
	if err != nil {
		t.Fatalf("open at v1: %v", err)
	}
	if v, err := v1.Version(ctx); err != nil || v != 1 {
		t.Fatalf("version %d (%v), want 1", v, err)
	}
	// Data written under v1.
	if err := v1.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Meta: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	// The run and the records as v1's PutRun and Append wrote them
	// (today's need the lease columns of v3).
	if _, err := v1.pool.Exec(ctx, `INSERT INTO weft_runs (id, thread_id, number, status, error, created, updated)
VALUES ('r', 't', 1, 'running', '', now(), now())`); err != nil {
		t.Fatal(err)
	}
	writeV1Records(t, v1, "t", "r", `{"x":1}`, `{"x":2}`)
	v1.Close()

	s, err := Open(ctx, db.DSN)
	if err != nil {
		t.Fatalf("Open on a v1 database: %v", err)
	}
	defer s.Close()
	if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
		t.Fatalf("version %d (%v), want %d", v, err, SchemaVersion)
	}
	var idx int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE indexname IN
('weft_threads_updated', 'weft_runs_thread', 'weft_records_snapshots')`).Scan(&idx); err != nil || idx != 3 {
		t.Fatalf("v2 indexes: %d (%v), want 3", idx, err)
	}
	th, err := s.Thread(ctx, "t")
	if err != nil || th.Meta["a"] != "b" {
		t.Fatalf("thread after migration: %+v, %v", th, err)
	}
	snap, err := s.LastSnapshot(ctx, "t")
	if err != nil || snap.Seq != 1 {
		t.Fatalf("snapshot after migration: %+v, %v", snap, err)
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", RunID: "r", Seq: 3, Kind: store.Step, Data: []byte(`{"x":3}`)}); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Records(ctx, "t", 1)
	if err != nil || len(rs) != 3 {
		t.Fatalf("records after migration: %d, %v", len(rs), err)
	}
}

// writeV1Records appends records to a thread of a database at schema
// version 1 or 2 as the Append of those versions did: a snapshot, then
// steps, of the given data.
func writeV1Records(t *testing.T, s *Store, thread, run string, data ...string) {
	t.Helper()
	for i, d := range data {
		kind := store.Step
		if i == 0 {
			kind = store.Snapshot
		}
		if _, err := s.pool.Exec(t.Context(), `WITH ins AS (
	INSERT INTO weft_records (thread_id, seq, run_id, step, kind, data, checksum, time)
	VALUES ($1, $2::bigint, $3, $2::integer, $4, $5::bytea, $6::bigint, now())
)
UPDATE weft_threads SET last_seq = $2::bigint WHERE id = $1`, thread, int64(i+1), run, string(kind), []byte(d), int64(store.Sum([]byte(d)))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrateFromV2Leases writes a database at schema version 2 (before
// leases) with a thread and its log, then opens it: Open migrates to
// version 3, the old records read back with fence 0, and the old thread
// takes a lease that refuses unfenced and stale appends.
func TestMigrateFromV2Leases(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	cfg, err := Config(db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := openAt(ctx, cfg, 2)
	if err != nil {
		t.Fatalf("open at v2: %v", err)
	}
	if err := v2.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	writeV1Records(t, v2, "t", "r", `{"x":1}`, `{"x":2}`, `{"x":3}`)
	v2.Close()

	s, err := Open(ctx, db.DSN)
	if err != nil {
		t.Fatalf("Open on a v2 database: %v", err)
	}
	defer s.Close()
	if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
		t.Fatalf("version %d (%v), want %d", v, err, SchemaVersion)
	}
	rs, err := s.Records(ctx, "t", 1)
	if err != nil || len(rs) != 3 {
		t.Fatalf("records after migration: %d, %v", len(rs), err)
	}
	for i, r := range rs {
		if r.Seq != int64(i+1) || r.Fence != 0 || string(r.Data) != fmt.Sprintf(`{"x":%d}`, i+1) {
			t.Errorf("record %d after migration: %+v", i+1, r)
		}
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: 4, Kind: store.Step}); err != nil {
		t.Fatalf("unfenced Append after migration: %v", err)
	}
	l, err := s.Claim(ctx, "t", "A", time.Minute)
	if err != nil || l.Fence != 1 {
		t.Fatalf("Claim after migration: %+v, %v; want fence 1", l, err)
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: 5, Kind: store.Step}); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("unfenced Append while leased: %v, want ErrLeaseHeld", err)
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: 5, Kind: store.Step, Fence: 2}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("Append with a fence not granted: %v, want ErrLeaseLost", err)
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: 5, Kind: store.Step, Fence: l.Fence}); err != nil {
		t.Errorf("fenced Append: %v", err)
	}
	if rs, err := s.Records(ctx, "t", 4); err != nil || len(rs) != 2 || rs[0].Fence != 0 || rs[1].Fence != l.Fence {
		t.Errorf("records 4 and 5: %+v, %v; want fences 0 and %d", rs, err, l.Fence)
	}
}

// TestMigrateFromV3Sources writes a database at schema version 3 (before
// sources and run specs) with a thread, a run and its log, then opens
// it: Open migrates to version 4, the old thread reads back with no
// source and no spec and its log unchanged, it can be given a source and
// a spec, and the foreign key refuses a source not stored.
func TestMigrateFromV3Sources(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	cfg, err := Config(db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	v3, err := openAt(ctx, cfg, 3)
	if err != nil {
		t.Fatalf("open at v3: %v", err)
	}
	if err := v3.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Meta: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	if err := v3.PutRun(ctx, &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: "waiting"}); err != nil {
		t.Fatal(err)
	}
	if err := v3.Append(ctx, &store.Record{ThreadID: "t", RunID: "r", Seq: 1, Kind: store.Snapshot, Data: []byte(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	v3.Close()

	s, err := Open(ctx, db.DSN)
	if err != nil {
		t.Fatalf("Open on a v3 database: %v", err)
	}
	defer s.Close()
	if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
		t.Fatalf("version %d (%v), want %d", v, err, SchemaVersion)
	}
	th, err := s.Thread(ctx, "t")
	if err != nil || th.Workflow != "w" || th.Meta["a"] != "b" || th.Source != "" || th.Spec != nil {
		t.Fatalf("old thread after migration = %+v, %v; want workflow w, meta a=b, no source, no spec", th, err)
	}
	if rs, err := s.Records(ctx, "t", 1); err != nil || len(rs) != 1 || string(rs[0].Data) != `{"x":1}` {
		t.Fatalf("records after migration: %+v, %v", rs, err)
	}
	src := []byte("workflow w {}")
	d := store.Digest(src)
	if err := s.UpdateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Source: d}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateThread to a source not stored: %v, want ErrNotFound", err)
	}
	if err := s.PutSource(ctx, d, src); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Source: d, Spec: []byte(`{"x":1}`), Meta: th.Meta}); err != nil {
		t.Fatalf("UpdateThread after migration: %v", err)
	}
	if th, err := s.Thread(ctx, "t"); err != nil || th.Source != d || string(th.Spec) != `{"x":1}` || th.Meta["a"] != "b" {
		t.Errorf("thread given a source = %+v, %v", th, err)
	}
	var idx int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE indexname = 'weft_threads_source'`).Scan(&idx); err != nil || idx != 1 {
		t.Errorf("index weft_threads_source: %d (%v), want 1", idx, err)
	}
}

// TestUnknownRunStatus stores a run status that is none of
// store.Status's behind the store's back: Run and Runs refuse it with a
// *store.CorruptError of Field "status" naming the thread and the run,
// never map it to another status.
func TestUnknownRunStatus(t *testing.T) {
	ctx := t.Context()
	s := open(t)
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRun(ctx, &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: store.Completed}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE weft_runs SET status = 'done' WHERE id = 'r'`); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		var ce *store.CorruptError
		if !errors.As(err, &ce) || ce.Field != "status" || ce.ThreadID != "t" || ce.Detail != `run r has status "done", not a run status` {
			t.Errorf("%s of a run with status done: %v, want a *CorruptError of field status", what, err)
		}
	}
	_, err := s.Run(ctx, "r")
	check("Run", err)
	_, err = s.Runs(ctx, "t")
	check("Runs", err)
}

func TestConcurrentOpen(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := Open(ctx, db.DSN)
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Open: %v", err)
		}
	}
	conn, err := pgx.Connect(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var steps, distinct int
	if err := conn.QueryRow(ctx, "SELECT count(*), count(DISTINCT version) FROM weft_schema_version").Scan(&steps, &distinct); err != nil {
		t.Fatal(err)
	}
	if steps != SchemaVersion || distinct != SchemaVersion {
		t.Errorf("schema_version has %d rows (%d distinct), want each of %d steps once", steps, distinct, SchemaVersion)
	}
}

func TestSchemaTooNew(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	s, err := Open(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.pool.Exec(ctx, "INSERT INTO weft_schema_version (version) VALUES (99)"); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, db.DSN)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open on a newer schema: got %v, want ErrSchemaTooNew", err)
	}
	var pe *Error
	if !errors.As(err, &pe) {
		t.Errorf("error %T is not a *postgres.Error", err)
	}
}

func TestCorruptColumns(t *testing.T) {
	ctx := t.Context()
	s := open(t)
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		if err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: i, Step: int(10 * i), Kind: store.Snapshot, Data: fmt.Appendf(nil, `{"n":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		seq    int64
		update string
		field  string
	}{
		{1, `UPDATE weft_records SET data = '{"n":7}'::bytea WHERE seq = 1`, "data"},
		{2, `UPDATE weft_records SET checksum = -5 WHERE seq = 2`, "checksum"},
		{3, `UPDATE weft_records SET kind = 'bogus' WHERE seq = 3`, "kind"},
	}
	for _, c := range cases {
		if _, err := s.pool.Exec(ctx, c.update); err != nil {
			t.Fatal(err)
		}
		_, err := s.Records(ctx, "t", c.seq)
		var ce *store.CorruptError
		if !errors.As(err, &ce) || ce.ThreadID != "t" || ce.Seq != c.seq || ce.Step != int(10*c.seq) || ce.Field != c.field {
			t.Errorf("after %s: got %v, want a CorruptError for t/%d field %s", c.update, err, c.seq, c.field)
		}
	}
}

func TestNoPreparedStatements(t *testing.T) {
	ctx := t.Context()
	s := open(t)
	if mode := s.pool.Config().ConnConfig.DefaultQueryExecMode; mode != pgx.QueryExecModeExec {
		t.Errorf("query exec mode %v, want exec", mode)
	}
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 20; i++ {
		if err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: i, Kind: store.Step, Data: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Records(ctx, "t", 1); err != nil {
			t.Fatal(err)
		}
	}
	conns := s.pool.AcquireAllIdle(ctx)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for _, c := range conns {
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_statements").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("a pooled connection holds %d named prepared statements", n)
		}
	}
}

// TestRestart restarts the server while a writer appends, and checks that
// the calls after the restart succeed and the log has no gap or duplicate.
func TestRestart(t *testing.T) {
	ctx := t.Context()
	c := pgtest.Start(t)
	db, err := c.CreateDB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	// Fill the pool with connections that the restart will break.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { _, _ = s.Records(ctx, "t", 1) })
	}
	wg.Wait()

	stop := make(chan struct{})
	done := make(chan int64)
	go func() {
		seq := int64(1)
		for {
			select {
			case <-stop:
				done <- seq - 1
				return
			default:
			}
			err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: seq, Kind: store.Step, Data: fmt.Appendf(nil, `{"seq":%d}`, seq)})
			var ce *store.ConflictError
			switch {
			case err == nil:
				seq++
			case errors.As(err, &ce) && ce.Got == seq:
				seq++ // an append whose answer was lost went through
			default:
				time.Sleep(10 * time.Millisecond) // the server is down: try the same seq again
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	// The next calls succeed, on a pool full of broken connections.
	if _, err := s.Thread(ctx, "t"); err != nil {
		t.Errorf("Thread right after the restart: %v", err)
	}
	if _, err := s.Records(ctx, "t", 1); err != nil {
		t.Errorf("Records right after the restart: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
	last := <-done
	rs, err := s.Records(ctx, "t", 1)
	if err != nil {
		t.Fatalf("Records: %v", err)
	}
	if int64(len(rs)) != last {
		t.Fatalf("log has %d records, writer wrote %d", len(rs), last)
	}
	for i, r := range rs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
	}
	t.Logf("%d appends across the restart", last)
}

// TestRestartIdle restarts the server while the store is idle: the first
// call of each kind afterwards succeeds.
func TestRestartIdle(t *testing.T) {
	ctx := t.Context()
	c := pgtest.Start(t)
	db, err := c.CreateDB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Config(db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MinConns = 3
	s, err := OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: 1, Kind: store.Step, Data: []byte("{}")}); err != nil {
		t.Fatalf("Append after restart: %v", err)
	}
	if err := s.PutRun(ctx, &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: "running"}); err != nil {
		t.Fatalf("PutRun after restart: %v", err)
	}
	if rs, err := s.Records(ctx, "t", 1); err != nil || len(rs) != 1 {
		t.Fatalf("Records after restart: %d, %v", len(rs), err)
	}
}

// BenchmarkAppend appends one record at a time: unfenced (no lease, as
// engine.Threads without a LeaseTTL writes) and fenced (under a held
// lease, as a leased driver writes).
func BenchmarkAppend(b *testing.B) {
	for _, fenced := range []bool{false, true} {
		name := "unfenced"
		if fenced {
			name = "fenced"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			s := open(b)
			if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
				b.Fatal(err)
			}
			data := make([]byte, 300)
			for i := range data {
				data[i] = 'a' + byte(i%26)
			}
			rec := &store.Record{ThreadID: "t", RunID: "r", Kind: store.Step, Data: data}
			if fenced {
				l, err := s.Claim(ctx, "t", "A", time.Hour)
				if err != nil {
					b.Fatal(err)
				}
				rec.Fence = l.Fence
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			seq := int64(0)
			for b.Loop() {
				seq++
				rec.Seq, rec.Step = seq, int(seq)
				if err := s.Append(ctx, rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestErrorKinds: the server's disk_full is store.ErrFull, a read-only
// transaction or a missing privilege store.ErrReadOnly, a lost connection
// (08xxx, an admin shutdown) store.ErrUnavailable, and other errors none
// (the engine retries those as transient).
func TestErrorKinds(t *testing.T) {
	for _, c := range []struct {
		code                        string
		full, readOnly, unavailable bool
	}{
		{"53100", true, false, false},
		{"25006", false, true, false},
		{"42501", false, true, false},
		{"40001", false, false, false},
		{"08006", false, false, true},
		{"57P01", false, false, true},
	} {
		err := fmt.Errorf("wrapped: %w", &Error{Op: "append to t", Err: &pgconn.PgError{Code: c.code, Message: "m"}})
		if got := errors.Is(err, store.ErrFull); got != c.full {
			t.Errorf("SQLSTATE %s: errors.Is(ErrFull) = %v", c.code, got)
		}
		if got := errors.Is(err, store.ErrReadOnly); got != c.readOnly {
			t.Errorf("SQLSTATE %s: errors.Is(ErrReadOnly) = %v", c.code, got)
		}
		if got := errors.Is(err, store.ErrUnavailable); got != c.unavailable {
			t.Errorf("SQLSTATE %s: errors.Is(ErrUnavailable) = %v", c.code, got)
		}
	}
	// A connection refused (the server down) is unavailable too.
	down := &Error{Op: "read", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	if !errors.Is(down, store.ErrUnavailable) {
		t.Errorf("a refused connection: not store.ErrUnavailable")
	}
}

// TestRefusal: a refused append's error comes from the row the statement
// judged; a row that store.CheckFence and the log would allow, or one that
// does not read back, is an *Error saying so, never nil.
func TestRefusal(t *testing.T) {
	exp := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	now := exp.Add(-time.Second)
	row := fmt.Sprintf(`{"last": 4, "owner": "A", "fence": 7, "expires": %d, "now": %d}`, exp.UnixMicro(), now.UnixMicro())
	var le *store.LeaseError
	if err := refusal("t", 6, 5, row); !errors.As(err, &le) || !errors.Is(err, store.ErrLeaseLost) ||
		le.Holder != "A" || le.HolderFence != 7 || le.Fence != 6 || !le.Expires.Equal(exp) || le.Op != "append" {
		t.Errorf("stale fence: got %v (%+v)", err, le)
	}
	var ce *store.ConflictError
	if err := refusal("t", 7, 9, row); !errors.As(err, &ce) || ce.Want != 9 || ce.Got != 4 {
		t.Errorf("seq after a gap: got %v", err)
	}
	var pe *Error
	for _, bad := range []string{row, "not json"} {
		if err := refusal("t", 7, 5, bad); !errors.As(err, &pe) {
			t.Errorf("refusal(%s) = %v, want an *Error", bad, err)
		}
	}
}
