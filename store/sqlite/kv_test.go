package sqlite

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/store"
)

// TestMigrateFromV6ItemsJobs opens a database written at schema version
// 6 (before items and jobs): Open migrates it, its threads read back, and
// items and jobs work on it, a thread's jobs going with the thread.
func TestMigrateFromV6ItemsJobs(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v6.db")
	old, err := openAt(ctx, path, migrations()[:6])
	if err != nil {
		t.Fatal(err)
	}
	if err := old.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Meta: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	if err := old.Append(ctx, sized("t", 1, store.Snapshot, 300)); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a v6 database: %v", err)
	}
	defer s.Close()
	if v, _ := version(ctx, s.writer); v != 7 || SchemaVersion != 7 {
		t.Fatalf("after Open, version %d (SchemaVersion %d), want 7", v, SchemaVersion)
	}
	checkSchema(t, s)
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
}

// TestCorruptJobStatus stores a job status that is none of
// store.JobStatus's behind the store's back: reading it is a
// *store.CorruptError of Field "status".
func TestCorruptJobStatus(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJob(ctx, &store.Job{ID: "j", ThreadID: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writer.ExecContext(ctx, `UPDATE jobs SET status = 'queued' WHERE id = 'j'`); err != nil {
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

// TestItemJobPlans checks that a search of a namespace prefix, a listing
// of namespaces and PendingJobs search indexes: their cost does not grow
// with the items of other namespaces or the jobs of other statuses.
func TestItemJobPlans(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	search, _, _ := searchSQL(store.ItemQuery{Prefix: []string{"a", "b"}})
	filtered, _, _ := searchSQL(store.ItemQuery{Prefix: []string{"a"}, Filter: map[string]json.RawMessage{"x": json.RawMessage(`1`)}})
	ns, _ := prefixWhere([]string{"a"})
	for _, tc := range []struct {
		q    string
		want []string // each must appear in the plan
	}{
		{search, []string{"SEARCH items USING INDEX items_key"}},
		{filtered, []string{"SEARCH items USING INDEX items_key"}},
		{`SELECT DISTINCT ns FROM items` + ns, []string{"SEARCH items USING COVERING INDEX items_key"}},
		{pendingJobsSQL, []string{"SCAN j USING INDEX jobs_pending", "SEARCH r USING COVERING INDEX jobs_thread", "SEARCH o USING COVERING INDEX jobs_thread"}},
	} {
		rows, err := s.reader.QueryContext(ctx, `EXPLAIN QUERY PLAN `+tc.q, make([]any, strings.Count(tc.q, "?"))...)
		if err != nil {
			t.Fatalf("%s: %v", tc.q, err)
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
		rows.Close()
		all := strings.Join(plan, "\n")
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s:\nplan %q, want %q in it", strings.Join(strings.Fields(tc.q), " "), plan, w)
			}
		}
		for _, d := range plan {
			// A scan of the partial index of pending jobs reads only
			// those; any other scan reads a whole table.
			if strings.HasPrefix(d, "SCAN") && d != "SCAN j USING INDEX jobs_pending" {
				t.Errorf("%s: %q scans a table", strings.Join(strings.Fields(tc.q), " "), d)
			}
		}
	}
}
