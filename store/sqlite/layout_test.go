package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// sized is a record of thread id whose data is JSON of exactly n bytes.
func sized(id string, seq int64, kind store.Kind, n int) *store.Record {
	head := fmt.Sprintf(`{"thread":%q,"seq":%d,"pad":"`, id, seq)
	pad := n - len(head) - 2
	data := append([]byte(head), bytes.Repeat([]byte{'a' + byte(seq%26)}, max(pad, 0))...)
	data = append(data, '"', '}')
	return &store.Record{ThreadID: id, RunID: id + "-r", Seq: seq, Step: int(seq), Kind: kind, Data: data}
}

// TestMigrateFromV3 writes a database at schema version 3 (records WITHOUT
// ROWID) with the logs of several threads in it, written interleaved and
// with records from a few bytes to past a page, then opens it: Open copies
// the records into the rowid table of version 4, and every record reads
// back as it was (order, data, checksum, time), the snapshots are found,
// the log goes on exactly once, and deleting a thread still takes its
// records.
func TestMigrateFromV3(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v3.db")
	old, err := openAt(ctx, path, migrations()[:3])
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := version(ctx, old.writer); v != 3 {
		t.Fatalf("old database at version %d", v)
	}
	var ddl string
	if err := old.writer.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = 'records'`).Scan(&ddl); err != nil || !strings.Contains(ddl, "WITHOUT ROWID") {
		t.Fatalf("version 3's records: %s (%v)", ddl, err)
	}
	threads := []string{"b", "a", "c-long-thread-id-0123456789"}
	long := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, id := range threads {
		if err := old.CreateThread(ctx, &store.Thread{ID: id, Workflow: "w", Created: long, Updated: long}); err != nil {
			t.Fatal(err)
		}
		if err := old.PutRun(ctx, &store.Run{ID: id + "-r", ThreadID: id, Number: 1, Status: "waiting"}); err != nil {
			t.Fatal(err)
		}
		if err := old.PutPending(ctx, &store.Pending{ID: "q", ThreadID: id, RunID: id + "-r", Node: "ask", Question: []byte(`"ok?"`)}); err != nil {
			t.Fatal(err)
		}
	}
	sizes := []int{1300, 40, 300, 1100, 5000, 0, 2500}
	const n = 12
	for seq := int64(1); seq <= n; seq++ {
		for i, id := range threads { // interleaved, as concurrent runs write
			kind := store.Step
			if seq%5 == 1 {
				kind = store.Snapshot
			}
			if err := old.Append(ctx, sized(id, seq, kind, sizes[(int(seq)+i)%len(sizes)])); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A batch, as a transaction appends it.
	if err := old.Append(ctx, sized("a", n+1, store.Step, 700), sized("a", n+2, store.Event, 20)); err != nil {
		t.Fatal(err)
	}
	before := map[string][]*store.Record{}
	for _, id := range threads {
		if before[id], err = old.Records(ctx, id, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a v3 database: %v", err)
	}
	defer s.Close()
	if v, _ := version(ctx, s.writer); v != SchemaVersion {
		t.Errorf("after Open, version %d, want %d", v, SchemaVersion)
	}
	checkSchema(t, s)
	for _, id := range threads {
		got, err := s.Records(ctx, id, 1)
		if err != nil {
			t.Fatalf("Records(%s) after migration: %v", id, err)
		}
		want := before[id]
		if len(got) != len(want) {
			t.Fatalf("Records(%s): %d records after migration, %d before", id, len(got), len(want))
		}
		for i, g := range got {
			w := want[i]
			if g.Seq != int64(i+1) || g.Seq != w.Seq || g.RunID != w.RunID || g.Step != w.Step || g.Kind != w.Kind ||
				!bytes.Equal(g.Data, w.Data) || g.Checksum != w.Checksum || g.Checksum != store.Sum(g.Data) || !g.Time.Equal(w.Time) {
				t.Errorf("Records(%s)[%d] after migration = %+v, before %+v", id, i, g, w)
			}
		}
		if rs, err := s.Records(ctx, id, 7); err != nil || len(rs) != len(want)-6 || rs[0].Seq != 7 {
			t.Errorf("Records(%s, 7) after migration: %d records, %v", id, len(rs), err)
		}
		snap, err := s.LastSnapshot(ctx, id)
		if err != nil || snap.Seq != 11 || !bytes.Equal(snap.Data, want[10].Data) {
			t.Errorf("LastSnapshot(%s) after migration: %+v, %v; want seq 11", id, snap, err)
		}
		if ps, err := s.Pending(ctx, id); err != nil || len(ps) != 1 {
			t.Errorf("Pending(%s) after migration: %v, %v", id, ps, err)
		}
	}
	// The trigger is back: a taken and a gapped seq are refused, the next
	// one goes in and moves the thread's Updated.
	for _, seq := range []int64{n + 2, n + 4} {
		err := s.Append(ctx, sized("a", seq, store.Step, 10))
		var ce *store.ConflictError
		if !errors.As(err, &ce) || ce.Got != n+2 {
			t.Errorf("Append at %d after migration: %v, want ConflictError{Got %d}", seq, err, n+2)
		}
	}
	if _, err := s.writer.ExecContext(ctx, `INSERT INTO records (thread_id, seq, run_id, step, kind, data, checksum, time) VALUES ('b', 20, '', 0, 'step', x'', 0, 0)`); err == nil {
		t.Error("the trigger let a gapped seq in after migration")
	}
	if _, err := s.writer.ExecContext(ctx, `DROP TRIGGER records_append`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writer.ExecContext(ctx, `INSERT INTO records (thread_id, seq, run_id, step, kind, data, checksum, time) VALUES ('b', 3, '', 0, 'step', x'', 0, 0)`); code(err) != sqliteConstraint {
		t.Errorf("without the trigger, a taken seq: %v; want the unique index's constraint error", err)
	}
	if _, err := s.writer.ExecContext(ctx, migrations()[3].SQL[len(migrations()[3].SQL)-1]); err != nil {
		t.Fatal(err)
	}
	for _, id := range threads {
		next := int64(len(before[id]) + 1)
		if err := s.Append(ctx, sized(id, next, store.Snapshot, 1300)); err != nil {
			t.Errorf("Append(%s, %d) after migration: %v", id, next, err)
		}
		if snap, err := s.LastSnapshot(ctx, id); err != nil || snap.Seq != next {
			t.Errorf("LastSnapshot(%s) after an append: %+v, %v", id, snap, err)
		}
	}
	if th, err := s.Thread(ctx, "a"); err != nil || !th.Updated.After(long.Add(time.Hour)) {
		t.Errorf("thread after an append: %+v, %v; want Updated moved to the append", th, err)
	}
	// Deleting a thread cascades to its records.
	if err := s.DeleteThread(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := s.writer.QueryRowContext(ctx, `SELECT count(*) FROM records WHERE thread_id = 'b'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d records of a deleted thread are left (%v)", left, err)
	}
	if rs, err := s.Records(ctx, "a", 1); err != nil || len(rs) != n+3 {
		t.Errorf("Records(a) after deleting b: %d, %v", len(rs), err)
	}
	checkSchema(t, s)
}

// TestQueryPlans checks with EXPLAIN QUERY PLAN that every statement the
// store runs on records searches an index rather than scanning: the
// prepared statements, and what the trigger records_append and the cascade
// of a deleted thread run (which EXPLAIN cannot show inside an INSERT or a
// DELETE of threads: they are given here as statements of their own).
func TestQueryPlans(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	w, r := s.statements()
	var queries []string
	for _, st := range append(w, r...) {
		if strings.Contains(st.sql, "records") {
			queries = append(queries, st.sql)
		}
	}
	queries = append(queries,
		// The trigger's check.
		`SELECT 1 WHERE coalesce((SELECT max(seq) FROM records WHERE thread_id = ?), 0) != ? - 1`,
		// The cascade of DeleteThread.
		`DELETE FROM records WHERE thread_id = ?`,
	)
	uses := map[string]bool{}
	for _, q := range queries {
		args := make([]any, strings.Count(q, "?"))
		rows, err := s.writer.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s\n\t%s", strings.Join(strings.Fields(q), " "), strings.Join(plan, "\n\t"))
		for _, d := range plan {
			if strings.Contains(d, "TEMP B-TREE") {
				t.Errorf("%s: %q sorts", q, d)
			}
			if !strings.Contains(d, "records") {
				continue
			}
			if !strings.HasPrefix(d, "SEARCH records USING ") || !strings.Contains(d, "INDEX") {
				t.Errorf("%s: %q is not a search of an index", q, d)
			}
			for _, ix := range []string{"records_key", "records_snapshots"} {
				if strings.Contains(d, ix) {
					uses[ix] = true
				}
			}
		}
		if strings.HasPrefix(q, "INSERT") {
			continue // nothing to search
		}
		if !strings.Contains(strings.Join(plan, "\n"), "SEARCH records") {
			t.Errorf("%s: no search of records in its plan %q", q, plan)
		}
	}
	if !uses["records_key"] || !uses["records_snapshots"] {
		t.Errorf("indexes used: %v; want records_key and records_snapshots", uses)
	}
}

// TestRecordsOnTheirPage checks with dbstat (compiled into
// modernc.org/sqlite) that records up to 3,900 bytes stay on the table's
// leaf pages, with no overflow page, and that a thread's records take
// about their size on disk.
func TestRecordsOnTheirPage(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	var total int
	for i := range 40 {
		id := fmt.Sprintf("thread-%02d", i)
		if err := s.CreateThread(ctx, &store.Thread{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := int64(1); seq <= 3; seq++ {
		for i := range 40 {
			id := fmt.Sprintf("thread-%02d", i)
			n := []int{1300, 1000, 3900}[seq-1]
			if err := s.Append(ctx, sized(id, seq, store.Snapshot, n)); err != nil {
				t.Fatal(err)
			}
			total += n
		}
	}
	var overflow, pages, payload int
	err := s.writer.QueryRowContext(ctx, `SELECT coalesce(sum(pagetype = 'overflow'), 0), count(*), coalesce(sum(payload), 0) FROM dbstat WHERE name = 'records'`).Scan(&overflow, &pages, &payload)
	if err != nil {
		t.Skipf("dbstat: %v", err)
	}
	t.Logf("records: %d pages (%d overflow) for %d bytes of payload, %d of data", pages, overflow, payload, total)
	if overflow != 0 {
		t.Errorf("%d overflow pages for records of at most 3,900 bytes", overflow)
	}
	if disk := pages * 4096; disk > total*3/2 {
		t.Errorf("records take %d bytes of pages for %d bytes of data", disk, total)
	}
}

// TestMigrateWaitsForLock holds the write lock of a version 3 file for
// longer than BusyTimeout, as a process migrating a large file does, while
// another opens it: Open waits for the lock, then migrates.
func TestMigrateWaitsForLock(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a lock for more than BusyTimeout")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v3.db")
	old, err := openAt(ctx, path, migrations()[:3])
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	tx, err := old.writer.BeginTx(ctx, nil) // BEGIN IMMEDIATE: takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		s   *Store
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Open(ctx, path)
		done <- result{s, err}
	}()
	hold := BusyTimeout + 500*time.Millisecond
	select {
	case r := <-done:
		t.Fatalf("Open returned while the lock was held: %v", r.err)
	case <-time.After(hold):
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("Open after the lock was released: %v", r.err)
	}
	defer r.s.Close()
	if v, _ := version(ctx, r.s.writer); v != SchemaVersion {
		t.Errorf("version %d, want %d", v, SchemaVersion)
	}
}
