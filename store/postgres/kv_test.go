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
	if v, err := s.Version(ctx); err != nil || v != 5 || SchemaVersion != 5 {
		t.Fatalf("version %d (%v), SchemaVersion %d, want 5", v, err, SchemaVersion)
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
	for _, ix := range []string{"weft_items_pkey", "weft_jobs_thread", "weft_jobs_pending", "weft_jobs_created"} {
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
