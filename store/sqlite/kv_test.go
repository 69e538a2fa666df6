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
	if v, _ := version(ctx, s.writer); v != SchemaVersion {
		t.Fatalf("after Open, version %d, want %d", v, SchemaVersion)
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
// of namespaces, PendingJobs and the listing of running jobs search
// indexes: their cost does not grow with the items of other namespaces or
// the jobs of other statuses.
func TestItemJobPlans(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	search, _, _ := searchSQL(store.ItemQuery{Prefix: []string{"a", "b"}})
	filtered, _, _ := searchSQL(store.ItemQuery{Prefix: []string{"a"}, Filter: map[string]json.RawMessage{"x": json.RawMessage(`1`)}})
	ns, _ := prefixWhere([]string{"a"})
	// Jobs' statements for the running and pending jobs of every thread,
	// and for the in-flight jobs of one.
	running, _ := s.jobsQuery(store.JobQuery{Status: []store.JobStatus{store.JobRunning}})
	pending, _ := s.jobsQuery(store.JobQuery{Status: []store.JobStatus{store.JobPending}})
	ofThread, _ := s.jobsQuery(store.JobQuery{ThreadID: "t", Status: []store.JobStatus{store.JobPending, store.JobRunning}})
	for _, tc := range []struct {
		q    string
		want []string // each must appear in the plan
	}{
		{search, []string{"SEARCH items USING INDEX items_key"}},
		{filtered, []string{"SEARCH items USING INDEX items_key"}},
		{`SELECT DISTINCT ns FROM items` + ns, []string{"SEARCH items USING COVERING INDEX items_key"}},
		{pendingJobsSQL, []string{"SCAN j USING INDEX jobs_pending", "SEARCH r USING COVERING INDEX jobs_thread", "SEARCH o USING COVERING INDEX jobs_thread"}},
		// Jobs of one status of every thread: the running ones.
		{running, []string{"SCAN jobs USING INDEX jobs_running"}},
		{pending, []string{"SCAN jobs USING INDEX jobs_pending"}},
		{ofThread, []string{"SEARCH jobs USING INDEX jobs_thread"}},
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
			// A scan of the partial index of pending (running) jobs
			// reads only those; any other scan reads a whole table.
			if strings.HasPrefix(d, "SCAN") && d != "SCAN j USING INDEX jobs_pending" && d != "SCAN jobs USING INDEX jobs_running" && d != "SCAN jobs USING INDEX jobs_pending" {
				t.Errorf("%s: %q scans a table", strings.Join(strings.Fields(tc.q), " "), d)
			}
		}
	}
}

// TestMigrateFromV7RunningJobs opens a database written at schema version
// 7 (before the index of running jobs) holding jobs: Open migrates it,
// and the running jobs of every thread are listed, from the new index.
func TestMigrateFromV7RunningJobs(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v7.db")
	old, err := openAt(ctx, path, migrations()[:7])
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t1", "t2"} {
		if err := old.CreateThread(ctx, &store.Thread{ID: id, Workflow: "w"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range []*store.Job{{ID: "a", ThreadID: "t1", Status: store.JobRunning}, {ID: "b", ThreadID: "t1", Status: store.JobSuccess}, {ID: "c", ThreadID: "t2", Status: store.JobRunning}, {ID: "d", ThreadID: "t2"}} {
		if err := old.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a v7 database: %v", err)
	}
	defer s.Close()
	if v, _ := version(ctx, s.writer); v != SchemaVersion {
		t.Fatalf("after Open, version %d, want %d", v, SchemaVersion)
	}
	checkSchema(t, s)
	js, err := s.Jobs(ctx, store.JobQuery{Status: []store.JobStatus{store.JobRunning}})
	var ids []string
	for _, j := range js {
		ids = append(ids, j.ID)
	}
	if err != nil || strings.Join(ids, ",") != "c,a" {
		t.Fatalf("running jobs after migration: %v, %v; want c, a", ids, err)
	}
	if _, err := s.SetJob(ctx, "d", []store.JobStatus{store.JobPending}, store.JobRunning, "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetJob(ctx, "a", []store.JobStatus{store.JobRunning}, store.JobSuccess, "", ""); err != nil {
		t.Fatal(err)
	}
	js, err = s.Jobs(ctx, store.JobQuery{Status: []store.JobStatus{store.JobRunning}})
	ids = ids[:0]
	for _, j := range js {
		ids = append(ids, j.ID)
	}
	if err != nil || strings.Join(ids, ",") != "d,c" {
		t.Fatalf("running jobs after two moves: %v, %v; want d, c", ids, err)
	}
	var plan, detail string
	var id, parent, unused int
	if err := s.reader.QueryRowContext(ctx, `EXPLAIN QUERY PLAN SELECT `+jobCols+` FROM jobs WHERE status = 'running' ORDER BY created DESC, id LIMIT -1 + 0 OFFSET 0 + 0`).Scan(&id, &parent, &unused, &detail); err != nil {
		t.Fatal(err)
	}
	if plan = detail; plan != "SCAN jobs USING INDEX jobs_running" {
		t.Errorf("running jobs' plan after migration: %q", plan)
	}
}

// TestJobsThreadKnown: a listing of a thread's jobs that the caller says
// names a thread skips checking it is there: an unknown thread lists
// none, where a listing that does not say so is ErrNotFound.
func TestJobsThreadKnown(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if _, err := s.Jobs(ctx, store.JobQuery{ThreadID: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("jobs of an unknown thread: %v, want ErrNotFound", err)
	}
	jobs, err := s.Jobs(ctx, store.JobQuery{ThreadID: "nope", ThreadKnown: true, Status: []store.JobStatus{store.JobPending, store.JobRunning}})
	if err != nil || len(jobs) != 0 {
		t.Errorf("jobs of a thread said known: %v, %v; want none", jobs, err)
	}
}
