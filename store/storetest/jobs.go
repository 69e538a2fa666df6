package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// The Job subtests check a store.Jobs (skipped for a store that is not
// one).

func jobsOf(t *testing.T, s store.Store) store.Jobs {
	t.Helper()
	js, ok := s.(store.Jobs)
	if !ok {
		t.Skip("the store is not a store.Jobs")
	}
	return js
}

// mustJob creates a pending job of thread created at base() plus m
// minutes.
func mustJob(t *testing.T, js store.Jobs, id, thread string, m int) *store.Job {
	t.Helper()
	at := base().Add(time.Duration(m) * time.Minute)
	j := &store.Job{ID: id, ThreadID: thread, Assistant: "IntentQA", Strategy: "enqueue", Created: at, Updated: at}
	if err := js.CreateJob(t.Context(), j); err != nil {
		t.Fatalf("CreateJob(%s): %v", id, err)
	}
	return j
}

func jobIDs(jobs []*store.Job) []string {
	out := []string{}
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

// wantJobConflict checks that err is a *JobConflictError for id whose
// current status is status.
func wantJobConflict(t *testing.T, what string, err error, id string, status store.JobStatus) {
	t.Helper()
	var ce *store.JobConflictError
	if !errors.Is(err, store.ErrConflict) || !errors.As(err, &ce) {
		t.Errorf("%s: got %v, want a *store.JobConflictError (store.ErrConflict)", what, err)
		return
	}
	if ce.ID != id || ce.Status != status {
		t.Errorf("%s: %+v, want job %s, current status %s", what, ce, id, status)
	}
}

// testJobCRUD: create (defaults, duplicate, missing thread), get, list,
// delete, opaque request and metadata read back as written.
func testJobCRUD(t *testing.T, s store.Store) {
	js := jobsOf(t, s)
	ctx := t.Context()
	mustThread(t, s, "t1", base())
	mustThread(t, s, "t2", base())
	before := time.Now()
	j := &store.Job{ID: "j1", ThreadID: "t1", Assistant: "IntentQA", Strategy: "reject",
		Request: json.RawMessage(`{"input": {"q": 1.50}}`), Meta: json.RawMessage(`{"user":"u"}`)}
	if err := js.CreateJob(ctx, j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if j.Status != store.JobPending || j.Created.IsZero() || !j.Created.Equal(j.Updated) ||
		j.Created.Before(before.Add(-clockSlack)) || j.Created.After(time.Now().Add(clockSlack)) {
		t.Errorf("CreateJob set %+v; want status pending, Created = Updated = now", j)
	}
	got, err := js.Job(ctx, "j1")
	if err != nil {
		t.Fatalf("Job: %v", err)
	}
	if got.ID != "j1" || got.ThreadID != "t1" || got.Assistant != "IntentQA" || got.Status != store.JobPending || got.Run != "" ||
		got.Strategy != "reject" || string(got.Request) != `{"input": {"q": 1.50}}` || string(got.Meta) != `{"user":"u"}` ||
		got.Error != "" || !sameTime(got.Created, j.Created) || !sameTime(got.Updated, j.Updated) {
		t.Errorf("Job = %+v (request %s, meta %s), want %+v", got, got.Request, got.Meta, j)
	}
	got.Request[0] = 'X'
	if again, _ := js.Job(ctx, "j1"); string(again.Request) != `{"input": {"q": 1.50}}` {
		t.Errorf("Job after changing a returned copy: request %s", again.Request)
	}
	// No request, no meta: read back empty.
	mustJob(t, js, "j2", "t1", 2)
	if got, err := js.Job(ctx, "j2"); err != nil || len(got.Request) != 0 || len(got.Meta) != 0 || got.Strategy != "enqueue" {
		t.Errorf("Job(j2) = %+v, %v; want no request, no meta", got, err)
	}

	err = js.CreateJob(ctx, &store.Job{ID: "j1", ThreadID: "t2"})
	if !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateJob with an existing ID: %v, want ErrExists", err)
	}
	err = js.CreateJob(ctx, &store.Job{ID: "j9", ThreadID: "nope"})
	wantNotFound(t, "CreateJob on a missing thread", err)
	_, err = js.Job(ctx, "j9")
	wantNotFound(t, "Job never created", err)

	// Listing: newest first, by thread and status, paged.
	mustJob(t, js, "j3", "t2", 3)
	mustJob(t, js, "j4", "t1", 1)
	mustJob(t, js, "j5", "t1", 2) // ties j2 by Created: by ID
	if _, err := js.SetJob(ctx, "j4", []store.JobStatus{store.JobPending}, store.JobRunning, "", ""); err != nil {
		t.Fatal(err)
	}
	list := func(q store.JobQuery, want ...string) {
		t.Helper()
		got, err := js.Jobs(ctx, q)
		if err != nil {
			t.Fatalf("Jobs(%+v): %v", q, err)
		}
		if ids := jobIDs(got); !slices.Equal(ids, append([]string{}, want...)) {
			t.Errorf("Jobs(%+v) = %v, want %v", q, ids, want)
		}
	}
	list(store.JobQuery{}, "j1", "j3", "j2", "j5", "j4")
	list(store.JobQuery{ThreadID: "t1"}, "j1", "j2", "j5", "j4")
	list(store.JobQuery{ThreadID: "t2"}, "j3")
	list(store.JobQuery{Status: []store.JobStatus{store.JobRunning}}, "j4")
	list(store.JobQuery{ThreadID: "t1", Status: []store.JobStatus{store.JobPending, store.JobRunning}, Limit: 2, Offset: 1}, "j2", "j5")
	list(store.JobQuery{ThreadID: "t2", Status: []store.JobStatus{store.JobSuccess}})
	_, err = js.Jobs(ctx, store.JobQuery{ThreadID: "nope"})
	wantNotFound(t, "Jobs of a missing thread", err)

	// Delete.
	if err := js.DeleteJob(ctx, "j2"); err != nil {
		t.Fatalf("DeleteJob: %v", err)
	}
	_, err = js.Job(ctx, "j2")
	wantNotFound(t, "Job after DeleteJob", err)
	wantNotFound(t, "DeleteJob again", js.DeleteJob(ctx, "j2"))
	list(store.JobQuery{ThreadID: "t1"}, "j1", "j5", "j4")
}

// testJobInvalid: every validation error wraps ErrInvalid and names its
// field; nothing is written.
func testJobInvalid(t *testing.T, s store.Store) {
	js := jobsOf(t, s)
	ctx := t.Context()
	mustThread(t, s, "t", base())
	for _, tc := range []struct {
		what  string
		job   *store.Job
		field string
	}{
		{"nil", nil, "id"},
		{"no ID", &store.Job{ThreadID: "t"}, "id"},
		{"no thread", &store.Job{ID: "j"}, "thread_id"},
		{"unknown status", &store.Job{ID: "j", ThreadID: "t", Status: "done"}, "status"},
		{"request not JSON", &store.Job{ID: "j", ThreadID: "t", Request: json.RawMessage(`{`)}, "request"},
		{"meta not JSON", &store.Job{ID: "j", ThreadID: "t", Meta: json.RawMessage(`x`)}, "meta"},
	} {
		wantInvalid(t, "CreateJob with "+tc.what, js.CreateJob(ctx, tc.job), tc.field)
	}
	if got, err := js.Jobs(ctx, store.JobQuery{}); err != nil || len(got) != 0 {
		t.Errorf("Jobs after refused creates = %v, %v", jobIDs(got), err)
	}
	mustJob(t, js, "j", "t", 1)
	_, err := js.SetJob(ctx, "j", nil, store.JobRunning, "", "")
	wantInvalid(t, "SetJob from no status", err, "from")
	_, err = js.SetJob(ctx, "j", []store.JobStatus{store.JobPending}, "done", "", "")
	wantInvalid(t, "SetJob to an unknown status", err, "status")
	_, err = js.SetJob(ctx, "j", []store.JobStatus{"queued"}, store.JobRunning, "", "")
	wantInvalid(t, "SetJob from an unknown status", err, "status")
	_, err = js.Jobs(ctx, store.JobQuery{Status: []store.JobStatus{"queued"}})
	wantInvalid(t, "Jobs with an unknown status", err, "status")
	_, err = js.Jobs(ctx, store.JobQuery{Limit: -1})
	wantInvalid(t, "Jobs with a negative limit", err, "limit")
	_, err = js.PendingJobs(ctx, -1)
	wantInvalid(t, "PendingJobs with a negative limit", err, "limit")
	if got, err := js.Job(ctx, "j"); err != nil || got.Status != store.JobPending {
		t.Errorf("job after refused SetJobs = %+v, %v; want pending", got, err)
	}
}

// testJobSet: the compare-and-set moves status, run and error, and
// refuses a move from a status not listed, with the current status.
func testJobSet(t *testing.T, s store.Store) {
	js := jobsOf(t, s)
	ctx := t.Context()
	mustThread(t, s, "t", base())
	j := mustJob(t, js, "j", "t", 1)
	got, err := js.SetJob(ctx, "j", []store.JobStatus{store.JobPending}, store.JobRunning, "run-1", "")
	if err != nil {
		t.Fatalf("SetJob pending -> running: %v", err)
	}
	if got.Status != store.JobRunning || got.Run != "run-1" || got.Error != "" || !sameTime(got.Created, j.Created) || !got.Updated.After(j.Updated) {
		t.Errorf("SetJob returned %+v; want running, run run-1, Created kept, Updated moved", got)
	}
	if read, err := js.Job(ctx, "j"); err != nil || read.Status != store.JobRunning || read.Run != "run-1" || !sameTime(read.Updated, got.Updated) {
		t.Errorf("Job after SetJob = %+v, %v", read, err)
	}
	// From a status it is not in: refused, nothing changes.
	_, err = js.SetJob(ctx, "j", []store.JobStatus{store.JobPending}, store.JobRunning, "run-2", "x")
	wantJobConflict(t, "second claim", err, "j", store.JobRunning)
	// Empty run and error leave them; a given error is kept.
	got, err = js.SetJob(ctx, "j", []store.JobStatus{store.JobPending, store.JobRunning}, store.JobError, "", "model down")
	if err != nil || got.Status != store.JobError || got.Run != "run-1" || got.Error != "model down" {
		t.Errorf("SetJob running -> error = %+v, %v; want error, run-1 kept, error set", got, err)
	}
	_, err = js.SetJob(ctx, "missing", []store.JobStatus{store.JobPending}, store.JobRunning, "", "")
	wantNotFound(t, "SetJob of a missing job", err)
	// Every status is stored and read back.
	statuses := []store.JobStatus{store.JobPending, store.JobRunning, store.JobSuccess, store.JobError, store.JobInterrupted, store.JobTimeout}
	for i, st := range statuses {
		prev := statuses[(i+len(statuses)-1)%len(statuses)]
		if i == 0 {
			prev = store.JobError
		}
		if got, err := js.SetJob(ctx, "j", []store.JobStatus{prev}, st, "", ""); err != nil || got.Status != st {
			t.Errorf("SetJob %s -> %s = %+v, %v", prev, st, got, err)
		}
		if got, err := js.Job(ctx, "j"); err != nil || got.Status != st {
			t.Errorf("Job after SetJob to %s = %+v, %v", st, got, err)
		}
	}
}

// testJobClaimRace: N goroutines race to claim one pending job; exactly
// one wins, the others get the conflict with the current status.
func testJobClaimRace(t *testing.T, s store.Store) {
	js := jobsOf(t, s)
	mustThread(t, s, "t", base())
	const n = 16
	for round := range 3 {
		id := fmt.Sprintf("j%d", round)
		mustJob(t, js, id, "t", round)
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			got   = make([]*store.Job, n)
			errs  = make([]error, n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				got[i], errs[i] = js.SetJob(t.Context(), id, []store.JobStatus{store.JobPending}, store.JobRunning, fmt.Sprintf("run-%d", i), "")
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			if err == nil {
				if winner >= 0 {
					t.Errorf("%s: both worker %d and worker %d claimed it", id, winner, i)
				}
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("%s: no claim won: %v", id, errs)
		}
		for i, err := range errs {
			if i != winner {
				wantJobConflict(t, fmt.Sprintf("%s: claim by worker %d", id, i), err, id, store.JobRunning)
			}
		}
		want := fmt.Sprintf("run-%d", winner)
		if got[winner].Run != want {
			t.Errorf("%s: winner's job %+v, want run %s", id, got[winner], want)
		}
		if j, err := js.Job(t.Context(), id); err != nil || j.Status != store.JobRunning || j.Run != want {
			t.Errorf("%s after the race = %+v, %v; want running with run %s", id, j, err, want)
		}
		if _, err := js.SetJob(t.Context(), id, []store.JobStatus{store.JobRunning}, store.JobSuccess, "", ""); err != nil {
			t.Fatal(err)
		}
	}
}

// testPendingJobs: of each thread without a running job, its oldest
// pending job; oldest first; limited.
func testPendingJobs(t *testing.T, s store.Store) {
	js := jobsOf(t, s)
	ctx := t.Context()
	pending := func(limit int, want ...string) {
		t.Helper()
		got, err := js.PendingJobs(ctx, limit)
		if err != nil {
			t.Fatalf("PendingJobs(%d): %v", limit, err)
		}
		if ids := jobIDs(got); !slices.Equal(ids, append([]string{}, want...)) {
			t.Errorf("PendingJobs(%d) = %v, want %v", limit, ids, want)
		}
		for _, j := range got {
			if j.Status != store.JobPending {
				t.Errorf("PendingJobs listed %+v", j)
			}
		}
	}
	pending(0)
	for _, th := range []string{"a", "b", "c", "d"} {
		mustThread(t, s, th, base())
	}
	mustJob(t, js, "a2", "a", 20)
	mustJob(t, js, "a1", "a", 10)
	mustJob(t, js, "b1", "b", 5)
	mustJob(t, js, "b2", "b", 6)
	mustJob(t, js, "c1", "c", 1)
	mustJob(t, js, "c2", "c", 30)
	mustJob(t, js, "d1", "d", 15)
	mustJob(t, js, "d0", "d", 15) // ties d1: by ID
	pending(0, "c1", "b1", "a1", "d0")
	pending(2, "c1", "b1")
	// c runs: its next job waits.
	if _, err := js.SetJob(ctx, "c1", []store.JobStatus{store.JobPending}, store.JobRunning, "", ""); err != nil {
		t.Fatal(err)
	}
	pending(0, "b1", "a1", "d0")
	// b's first ends: its second is next. c's first ends: c2 is next.
	for _, id := range []string{"b1", "c1"} {
		if _, err := js.SetJob(ctx, id, []store.JobStatus{store.JobPending, store.JobRunning}, store.JobSuccess, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	pending(0, "b2", "a1", "d0", "c2")
	// An ended job does not hold its thread; a deleted thread's jobs go.
	if err := s.DeleteThread(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	pending(0, "b2", "d0", "c2")
	for _, id := range []string{"a1", "a2"} {
		_, err := js.Job(ctx, id)
		wantNotFound(t, "Job of a deleted thread", err)
	}
	// A thread made again with the same ID has no jobs.
	mustThread(t, s, "a", base())
	if got, err := js.Jobs(ctx, store.JobQuery{ThreadID: "a"}); err != nil || len(got) != 0 {
		t.Errorf("Jobs of a re-created thread = %v, %v", jobIDs(got), err)
	}
	if got, err := js.Jobs(ctx, store.JobQuery{}); err != nil || !slices.Equal(jobIDs(got), []string{"c2", "d0", "d1", "b2", "b1", "c1"}) {
		t.Errorf("Jobs after deleting thread a = %v, %v", jobIDs(got), err)
	}
}
