package postgres

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/store"
)

// TestMigrateFromV4ItemsJobs opens a database at schema version 4 (before
// items and jobs): Open migrates it, its threads read back, and items and
// jobs work on it, a thread's jobs going with the thread.
func TestMigrateFromV4ItemsJobs(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	cfg, err := Config(db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	v4, err := openAt(ctx, cfg, 4)
	if err != nil {
		t.Fatalf("open at v4: %v", err)
	}
	if err := v4.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Meta: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	v4.Close()

	s, err := Open(ctx, db.DSN)
	if err != nil {
		t.Fatalf("Open on a v4 database: %v", err)
	}
	defer s.Close()
	if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
		t.Fatalf("version %d (%v), want %d", v, err, SchemaVersion)
	}
	if th, err := s.Thread(ctx, "t"); err != nil || th.Meta["a"] != "b" {
		t.Fatalf("old thread after migration = %+v, %v", th, err)
	}
	if err := s.PutItem(ctx, &store.Item{Namespace: []string{"u", "1"}, Key: "k", Value: json.RawMessage(`{"x":1}`)}); err != nil {
		t.Fatalf("PutItem after migration: %v", err)
	}
	if it, err := s.Item(ctx, []string{"u", "1"}, "k"); err != nil || string(it.Value) != `{"x":1}` {
		t.Errorf("Item after migration = %+v, %v", it, err)
	}
	if err := s.CreateJob(ctx, &store.Job{ID: "j", ThreadID: "t"}); err != nil {
		t.Fatalf("CreateJob on a migrated thread: %v", err)
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Job(ctx, "j"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job of a deleted thread: %v, want ErrNotFound", err)
	}
	for _, ix := range []string{"weft_items_pkey", "weft_jobs_thread", "weft_jobs_pending", "weft_jobs_created", "weft_jobs_running"} {
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE indexname = $1`, ix).Scan(&n); err != nil || n != 1 {
			t.Errorf("index %s: %d (%v), want 1", ix, n, err)
		}
	}
}

// TestCorruptJobStatus stores a job status that is none of
// store.JobStatus's behind the store's back: reading it is a
// *store.CorruptError of Field "status".
func TestCorruptJobStatus(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJob(ctx, &store.Job{ID: "j", ThreadID: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE weft_jobs SET status = 'queued' WHERE id = 'j'`); err != nil {
		t.Fatal(err)
	}
	_, err := s.Job(ctx, "j")
	var ce *store.CorruptError
	if !errors.As(err, &ce) || ce.Field != "status" || ce.ThreadID != "t" || !strings.Contains(ce.Detail, "queued") {
		t.Errorf("Job with a stored status 'queued': %v, want a *store.CorruptError of field status", err)
	}
	if _, err := s.Jobs(ctx, store.JobQuery{ThreadID: "t"}); !errors.As(err, &ce) {
		t.Errorf("Jobs with a stored status 'queued': %v, want a *store.CorruptError", err)
	}
}

// TestItemPrefixPlan checks that a search of a namespace prefix reads the
// primary key's index as a range, with sequential scans off (a small
// table would be scanned anyway): its cost does not grow with the items
// of other namespaces.
func TestItemPrefixPlan(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `RESET enable_seqscan`)
	q, args, _ := searchSQL(store.ItemQuery{Prefix: []string{"a", "b"}, Filter: map[string]json.RawMessage{"x": json.RawMessage(`1`)}})
	rows, err := conn.Query(ctx, `EXPLAIN `+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	rows.Close()
	all := strings.Join(plan, "\n")
	if !strings.Contains(all, "weft_items_pkey") || !strings.Contains(all, "Index Cond") {
		t.Errorf("prefix search plan does not use weft_items_pkey as a range:\n%s", all)
	}
}

// TestMigrateFromV5RunningJobs opens a database at schema version 5
// (before the index of running jobs) holding jobs: Open migrates it, the
// running jobs of every thread are listed, and the plan of that listing
// reads the new index.
func TestMigrateFromV5RunningJobs(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	cfg, err := Config(db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	v5, err := openAt(ctx, cfg, 5)
	if err != nil {
		t.Fatalf("open at v5: %v", err)
	}
	for _, id := range []string{"t1", "t2"} {
		if err := v5.CreateThread(ctx, &store.Thread{ID: id, Workflow: "w"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range []*store.Job{{ID: "a", ThreadID: "t1", Status: store.JobRunning}, {ID: "b", ThreadID: "t1", Status: store.JobSuccess}, {ID: "c", ThreadID: "t2", Status: store.JobRunning}} {
		if err := v5.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	v5.Close()
	s, err := Open(ctx, db.DSN)
	if err != nil {
		t.Fatalf("Open on a v5 database: %v", err)
	}
	defer s.Close()
	if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
		t.Fatalf("version %d (%v), want %d", v, err, SchemaVersion)
	}
	js, err := s.Jobs(ctx, store.JobQuery{Status: []store.JobStatus{store.JobRunning}})
	var ids []string
	for _, j := range js {
		ids = append(ids, j.ID)
	}
	if err != nil || strings.Join(ids, ",") != "c,a" {
		t.Fatalf("running jobs after migration: %v, %v; want c, a", ids, err)
	}
	// The table is small: the plan is asked of a connection that
	// prefers any index to a scan of it.
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	var plan []string
	rows, err := conn.Query(ctx, `EXPLAIN SELECT `+jobCols+` FROM weft_jobs WHERE status = 'running' ORDER BY created DESC, id LIMIT NULL OFFSET 0`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	rows.Close()
	if !strings.Contains(strings.Join(plan, "\n"), "weft_jobs_running") {
		t.Errorf("the running jobs' plan does not read weft_jobs_running: %q", plan)
	}
}
