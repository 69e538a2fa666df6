package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/storetest"
)

// CorruptRecord flips a byte of a record's data column with SQL, behind
// the store's back, for storetest.Corrupter.
func (s *Store) CorruptRecord(ctx context.Context, threadID string, seq int64) error {
	var data []byte
	if err := s.writer.QueryRowContext(ctx, `SELECT data FROM records WHERE thread_id = ? AND seq = ?`, threadID, seq).Scan(&data); err != nil {
		return err
	}
	if len(data) == 0 {
		return fmt.Errorf("thread %s, record %d has no data", threadID, seq)
	}
	data[len(data)/2] ^= 0x20
	_, err := s.writer.ExecContext(ctx, `UPDATE records SET data = ? WHERE thread_id = ? AND seq = ?`, data, threadID, seq)
	return err
}

var _ storetest.Corrupter = (*Store)(nil)

// DeleteRecord deletes a record with SQL, behind the store's back, for
// storetest.Deleter.
func (s *Store) DeleteRecord(ctx context.Context, threadID string, seq int64) error {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM records WHERE thread_id = ? AND seq = ?`, threadID, seq)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("thread %s, record %d: deleted %d rows (%v)", threadID, seq, n, err)
	}
	return nil
}

var _ storetest.Deleter = (*Store)(nil)

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weft.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, _ := openTemp(t)
		return s
	})
}

func TestConformanceInMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(t.Context(), ":memory:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestPragmas(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	for _, db := range []struct {
		name string
		db   *sql.DB
		busy int // the writer waits for locks in Go
	}{{"writer", s.writer, 0}, {"reader", s.reader, int(BusyTimeout.Milliseconds())}} {
		var mode string
		var sync, fk, busy int
		conn := db.db
		if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || sync != 1 || fk != 1 || busy != db.busy {
			t.Errorf("%s: journal_mode %s, synchronous %d, foreign_keys %d, busy_timeout %d", db.name, mode, sync, fk, busy)
		}
	}
}

func TestReopen(t *testing.T) {
	ctx := t.Context()
	s, path := openTemp(t)
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Meta: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRun(ctx, &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: "waiting"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", RunID: "r", Seq: 1, Step: 1, Kind: store.Snapshot, Data: []byte(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPending(ctx, &store.Pending{ID: "q", ThreadID: "t", RunID: "r", Node: "ask", Question: []byte(`"why?"`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	th, err := s2.Thread(ctx, "t")
	if err != nil || th.Meta["a"] != "b" {
		t.Fatalf("thread after reopen: %+v, %v", th, err)
	}
	if r, err := s2.Run(ctx, "r"); err != nil || r.Status != "waiting" {
		t.Errorf("run after reopen: %+v, %v", r, err)
	}
	recs, err := s2.Records(ctx, "t", 1)
	if err != nil || len(recs) != 1 || string(recs[0].Data) != `{"x":1}` {
		t.Errorf("records after reopen: %v, %v", recs, err)
	}
	ps, err := s2.Pending(ctx, "t")
	if err != nil || len(ps) != 1 || string(ps[0].Question) != `"why?"` {
		t.Errorf("pending after reopen: %v, %v", ps, err)
	}
	// The log goes on.
	err = s2.Append(ctx, &store.Record{ThreadID: "t", Seq: 1, Kind: store.Step})
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Got != 1 {
		t.Errorf("append at a taken seq after reopen: %v", err)
	}
}

// TestMigrateFromEmpty checks a new file ends at SchemaVersion with every
// index of the last step.
func TestMigrateFromEmpty(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if v, err := version(ctx, s.writer); err != nil || v != SchemaVersion {
		t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion)
	}
	if got := migrations(); got[len(got)-1].Version != SchemaVersion {
		t.Errorf("last migration is %d, SchemaVersion %d", got[len(got)-1].Version, SchemaVersion)
	}
	for i, m := range migrations() {
		if m.Version != i+1 {
			t.Errorf("migration %d has version %d", i, m.Version)
		}
	}
	checkSchema(t, s)
}

// checkSchema checks the indexes and the trigger of the last step are in
// place.
func checkSchema(t *testing.T, s *Store) {
	t.Helper()
	for _, obj := range []struct{ typ, name string }{
		{"index", "threads_updated"}, {"index", "runs_thread"}, {"index", "records_snapshots"},
		{"index", "records_key"}, {"trigger", "records_append"}, {"index", "threads_source"}, {"table", "sources"},
		{"table", "items"}, {"index", "items_key"}, {"table", "jobs"}, {"index", "jobs_thread"}, {"index", "jobs_pending"}, {"index", "jobs_created"},
		{"index", "jobs_running"}, {"table", "run_events"}, {"index", "run_events_key"},
	} {
		var n int
		if err := s.writer.QueryRowContext(t.Context(), `SELECT count(*) FROM sqlite_schema WHERE type = ? AND name = ?`, obj.typ, obj.name).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s %s: %d (%v)", obj.typ, obj.name, n, err)
		}
	}
	// records is a rowid table (version 4), and nothing of the table it
	// was copied from is left.
	var ddl string
	if err := s.writer.QueryRowContext(t.Context(), `SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'records'`).Scan(&ddl); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToUpper(ddl), "WITHOUT ROWID") {
		t.Errorf("records is still WITHOUT ROWID: %s", ddl)
	}
	var left int
	if err := s.writer.QueryRowContext(t.Context(), `SELECT count(*) FROM sqlite_schema WHERE name LIKE '%records_new%' OR sql LIKE '%records_new%'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d schema objects still name records_new (%v)", left, err)
	}
	var ok string
	if err := s.writer.QueryRowContext(t.Context(), `PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check: %s (%v)", ok, err)
	}
	var bad int
	if err := s.writer.QueryRowContext(t.Context(), `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&bad); err != nil || bad != 0 {
		t.Errorf("foreign_key_check: %d rows (%v)", bad, err)
	}
}

// TestMigrateFromV1 writes a database at schema version 1 with data in it,
// then opens it: Open migrates to the current version and the data reads.
func TestMigrateFromV1(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v1.db")
	old, err := openAt(ctx, path, migrations()[:1])
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := version(ctx, old.writer); v != 1 {
		t.Fatalf("old database at version %d", v)
	}
	if err := old.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := old.PutRun(ctx, &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		if err := old.Append(ctx, &store.Record{ThreadID: "t", RunID: "r", Seq: i, Step: int(i), Kind: store.Snapshot, Data: fmt.Appendf(nil, `{"i":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a v1 database: %v", err)
	}
	defer s.Close()
	if v, _ := version(ctx, s.writer); v != SchemaVersion {
		t.Errorf("after Open, version %d, want %d", v, SchemaVersion)
	}
	snap, err := s.LastSnapshot(ctx, "t")
	if err != nil || snap.Seq != 3 {
		t.Fatalf("LastSnapshot after migration: %+v, %v", snap, err)
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", RunID: "r", Seq: 4, Kind: store.Step}); err != nil {
		t.Errorf("Append after migration: %v", err)
	}
	checkSchema(t, s)
}

// TestMigrateFromV2 writes a database at schema version 2 (before the
// append trigger) with data in it, then opens it: Open adds the trigger,
// and the log goes on exactly once, moving the thread's Updated.
func TestMigrateFromV2(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v2.db")
	old, err := openAt(ctx, path, migrations()[:2])
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := version(ctx, old.writer); v != 2 {
		t.Fatalf("old database at version %d", v)
	}
	long := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := old.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Created: long, Updated: long}); err != nil {
		t.Fatal(err)
	}
	if err := old.PutRun(ctx, &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	// Version 2 has no trigger: write the records as version 2's Append
	// did, a transaction of plain INSERTs.
	for i := int64(1); i <= 3; i++ {
		data := fmt.Appendf(nil, `{"i":%d}`, i)
		if _, err := old.writer.ExecContext(ctx, `INSERT INTO records (thread_id, seq, run_id, step, kind, data, checksum, time) VALUES ('t', ?, 'r', ?, ?, ?, ?, ?)`,
			i, i, string(store.Snapshot), data, int64(store.Sum(data)), unix(long)); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a v2 database: %v", err)
	}
	defer s.Close()
	if v, _ := version(ctx, s.writer); v != SchemaVersion {
		t.Errorf("after Open, version %d, want %d", v, SchemaVersion)
	}
	checkSchema(t, s)
	rs, err := s.Records(ctx, "t", 1)
	if err != nil || len(rs) != 3 || string(rs[2].Data) != `{"i":3}` {
		t.Fatalf("records after migration: %v, %v", rs, err)
	}
	for _, seq := range []int64{3, 5} {
		err := s.Append(ctx, &store.Record{ThreadID: "t", RunID: "r", Seq: seq, Kind: store.Step})
		var ce *store.ConflictError
		if !errors.As(err, &ce) || ce.Got != 3 {
			t.Errorf("Append at %d after migration: %v, want ConflictError{Got 3}", seq, err)
		}
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", RunID: "r", Seq: 4, Kind: store.Step}); err != nil {
		t.Errorf("Append after migration: %v", err)
	}
	th, err := s.Thread(ctx, "t")
	if err != nil || !th.Updated.After(long.Add(time.Hour)) {
		t.Errorf("thread after an append: %+v, %v; want Updated moved to the append", th, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	s, path := openTemp(t)
	if _, err := s.writer.ExecContext(t.Context(), `UPDATE schema_version SET version = ?`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(t.Context(), path); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("Open of a newer database: %v, want ErrNewerSchema", err)
	}
}

func TestFailedMigrationRollsBack(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bad.db")
	bad := append(migrations(), migration{Version: SchemaVersion + 1, Name: "broken", SQL: []string{`CREATE TABLE extra (x)`, `NOT SQL`}})
	_, err := openAt(ctx, path, bad)
	var me *MigrationError
	if !errors.As(err, &me) || me.Version != SchemaVersion+1 {
		t.Fatalf("broken migration: %v, want *MigrationError", err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.writer.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'extra'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("half a migration was kept: %d (%v)", n, err)
	}
}

// TestCorruptByte flips a byte of the data column with SQL and checks the
// error names thread, seq and field.
func TestCorruptByte(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("a"), 64)
	if err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: 1, Step: 4, Kind: store.Step, Data: data}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writer.ExecContext(ctx, `UPDATE records SET data = ? WHERE thread_id = ? AND seq = ?`, append(bytes.Repeat([]byte("a"), 63), 'b'), "t", 1); err != nil {
		t.Fatal(err)
	}
	_, err := s.Records(ctx, "t", 1)
	var ce *store.CorruptError
	if !errors.As(err, &ce) || ce.ThreadID != "t" || ce.Seq != 1 || ce.Step != 4 || ce.Field != "data" {
		t.Fatalf("Records of a flipped byte: %v", err)
	}
	t.Log(err)
}

// TestCorruptColumns damages the checksum and kind columns of stored
// records with SQL and checks that reading them is a *store.CorruptError
// naming the thread, the seq, the step and the field.
func TestCorruptColumns(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	const n = 6
	for i := int64(1); i <= n; i++ {
		if err := s.Append(ctx, &store.Record{ThreadID: "t", RunID: "r", Seq: i, Step: int(10 * i), Kind: store.Step, Data: fmt.Appendf(nil, `{"n":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		seq    int64
		update string
		field  string
	}{
		// A flipped bit of the checksum: data and checksum disagree,
		// which is reported as field data (either may be the damaged one).
		{1, `UPDATE records SET checksum = (checksum | 1) - (checksum & 1) WHERE thread_id = 't' AND seq = 1`, "data"},
		{2, `UPDATE records SET checksum = -5 WHERE thread_id = 't' AND seq = 2`, "checksum"},
		{3, `UPDATE records SET checksum = 1 << 32 WHERE thread_id = 't' AND seq = 3`, "checksum"},
		{4, `UPDATE records SET kind = 'bogus' WHERE thread_id = 't' AND seq = 4`, "kind"},
		{5, `UPDATE records SET kind = '' WHERE thread_id = 't' AND seq = 5`, "kind"},
		{6, `UPDATE records SET kind = 'Step' WHERE thread_id = 't' AND seq = 6`, "kind"},
	}
	for _, c := range cases {
		if _, err := s.writer.ExecContext(ctx, c.update); err != nil {
			t.Fatalf("%s: %v", c.update, err)
		}
		for _, from := range []int64{1, c.seq} {
			rs, err := s.Records(ctx, "t", from)
			var ce *store.CorruptError
			if !errors.As(err, &ce) || ce.ThreadID != "t" || ce.Seq != c.seq || ce.Step != int(10*c.seq) || ce.Field != c.field {
				t.Errorf("after %s, Records(t, %d) = %v; want a CorruptError for t/%d (step %d), field %s", c.update, from, err, c.seq, 10*c.seq, c.field)
			}
			if rs != nil {
				t.Errorf("Records returned %d records with the error", len(rs))
			}
			if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("thread t, record %d", c.seq)) {
				t.Errorf("error %q does not name the thread and the record", err)
			}
		}
		// Undo, so that the next case reads past this record.
		if _, err := s.writer.ExecContext(ctx, `DELETE FROM records WHERE thread_id = 't' AND seq = ?`, c.seq); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCorruptSnapshot damages the latest snapshot: LastSnapshot reports it.
func TestCorruptSnapshot(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: 1, Step: 3, Kind: store.Snapshot, Data: []byte(`{"s":1}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writer.ExecContext(ctx, `UPDATE records SET checksum = (checksum | 256) - (checksum & 256)`); err != nil {
		t.Fatal(err)
	}
	_, err := s.LastSnapshot(ctx, "t")
	var ce *store.CorruptError
	if !errors.As(err, &ce) || ce.ThreadID != "t" || ce.Seq != 1 || ce.Step != 3 || ce.Field != "data" {
		t.Errorf("LastSnapshot of a record with a flipped checksum: %v", err)
	}
}

// openAt opens path migrating only through steps (for tests of older
// schemas).
func openAt(ctx context.Context, path string, steps []migration) (*Store, error) {
	return open(ctx, path, steps)
}

// TestFullAndReadOnlyFailFast: a database that cannot grow (SQLITE_FULL,
// here from max_page_count) or is read-only fails a write at once, with
// an error wrapping store.ErrFull or store.ErrReadOnly, not after waiting
// as for a lock; what was written before reads back.
func TestFullAndReadOnlyFailFast(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t)
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	var pages int64
	if err := s.writer.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writer.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages+4)); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 3000)
	var err error
	seq := int64(1)
	for ; seq < 100; seq++ {
		start := time.Now()
		err = s.Append(ctx, &store.Record{ThreadID: "t", Seq: seq, Kind: store.Step, Data: data})
		if err != nil {
			if d := time.Since(start); d > time.Second {
				t.Errorf("the full database took %v to fail", d)
			}
			break
		}
	}
	if !errors.Is(err, store.ErrFull) {
		t.Fatalf("append to a full database: %v, want store.ErrFull", err)
	}
	if !strings.Contains(err.Error(), "full") {
		t.Errorf("error %q does not say the store is full", err)
	}
	if recs, err := s.Records(ctx, "t", 1); err != nil || int64(len(recs)) != seq-1 {
		t.Errorf("after the full append: %d records, %v; want %d", len(recs), err, seq-1)
	}

	if _, err := s.writer.ExecContext(ctx, `PRAGMA max_page_count = 1000000`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writer.ExecContext(ctx, `PRAGMA query_only = 1`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.PutRun(ctx, &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: "running"})
	if !errors.Is(err, store.ErrReadOnly) || time.Since(start) > time.Second {
		t.Errorf("write to a read-only database: %v after %v, want store.ErrReadOnly at once", err, time.Since(start))
	}
}
