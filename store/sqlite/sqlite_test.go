package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

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
	}{{"writer", s.writer}, {"reader", s.reader}} {
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
		if mode != "wal" || sync != 1 || fk != 1 || busy != int(BusyTimeout.Milliseconds()) {
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
	for _, idx := range []string{"threads_updated", "runs_thread", "records_snapshots"} {
		var n int
		if err := s.writer.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = ?`, idx).Scan(&n); err != nil || n != 1 {
			t.Errorf("index %s: %d (%v)", idx, n, err)
		}
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

// openAt opens path migrating only through steps (for tests of older
// schemas).
func openAt(ctx context.Context, path string, steps []migration) (*Store, error) {
	return open(ctx, path, steps)
}
