// Package storetest is the conformance suite every store.Store runs, in the
// spirit of testing/slogtest: an implementation's tests call Run with a
// function that opens a fresh, empty store.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "weft.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// A store whose tests can damage a stored record behind its back implements
// Corrupter (usually with a method declared in a _test.go file), and the
// suite then checks that reading the damaged record is a *store.CorruptError.
//
// The Lease subtests check a store.Leaser (skipped for a store that is not
// one). They sleep past leases of 50 ms, so the store must use a real
// clock.
//
// The Item and Job subtests check a store.Items and a store.Jobs (each
// skipped for a store that is not one), and the RunEvents subtests a
// store.RunEvents; RunEventsAcross checks two stores on one database.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// Corrupter is implemented by a store under test that can flip one byte of
// the Data of a stored record directly in its storage, bypassing Append.
// The suite type-asserts the store returned by open; without it, the
// corruption subtest is skipped.
type Corrupter interface {
	CorruptRecord(ctx context.Context, threadID string, seq int64) error
}

// Deleter is implemented by a store under test that can delete a stored
// record directly in its storage, bypassing Prune. The suite then checks
// that reading a log with a gap is a *store.CorruptError naming the
// missing record; without it, the gap subtest is skipped.
type Deleter interface {
	DeleteRecord(ctx context.Context, threadID string, seq int64) error
}

// Run runs the conformance suite, one subtest per behaviour. open must
// return a new, empty store for each call and arrange its Close with
// t.Cleanup (the suite closes nothing itself).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"ThreadCRUD", testThreadCRUD},
		{"ThreadListing", testThreadListing},
		{"ThreadFilters", testThreadFilters},
		{"ThreadSearch", testThreadSearch},
		{"ThreadUpdatedByAppend", testThreadUpdatedByAppend},
		{"Runs", testRuns},
		{"RunStatus", testRunStatus},
		{"AppendExactlyOnce", testAppendExactlyOnce},
		{"AppendBatch", testAppendBatch},
		{"AppendInvalid", testAppendInvalid},
		{"AppendConcurrent", testAppendConcurrent},
		{"Records", testRecords},
		{"RecordsNoAlias", testRecordsNoAlias},
		{"LastSnapshot", testLastSnapshot},
		{"Head", testHead},
		{"Pending", testPending},
		{"Prune", testPrune},
		{"DeleteThread", testDeleteThread},
		{"MissingThread", testMissingThread},
		{"ContextCanceled", testContextCanceled},
		{"Corruption", testCorruption},
		{"Gap", testGap},
		{"WriteBatch", testWriteBatch},
		{"EndRun", testEndRun},
		{"EndRunRecords", testEndRunRecords},
		{"EndRunJob", testEndRunJob},
		{"Sources", testSources},
		{"ThreadSource", testThreadSource},
		{"LeaseLifecycle", testLeaseLifecycle},
		{"LeaseSecondOwner", testLeaseSecondOwner},
		{"LeaseStalled", testLeaseStalled},
		{"LeaseConcurrentClaims", testLeaseConcurrentClaims},
		{"LeaseInvalid", testLeaseInvalid},
		{"ItemCRUD", testItemCRUD},
		{"ItemInvalid", testItemInvalid},
		{"ItemSearch", testItemSearch},
		{"Namespaces", testNamespaces},
		{"JobCRUD", testJobCRUD},
		{"JobInvalid", testJobInvalid},
		{"JobSet", testJobSet},
		{"JobClaimRace", testJobClaimRace},
		{"PendingJobs", testPendingJobs},
		{"LeaseRunsAndPending", testLeaseRunsAndPending},
		{"RunEventsAppend", testRunEventsAppend},
		{"RunEventsRefused", testRunEventsRefused},
		{"RunEventsConcurrent", testRunEventsConcurrent},
		{"RunEventsWait", testRunEventsWait},
		{"RunEventsPrune", testRunEventsPrune},
		{"RunEventsDelete", testRunEventsDelete},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

// timeSlack is how far a time read back may be from the one written:
// stores keep microseconds (PostgreSQL) or nanoseconds.
const timeSlack = time.Millisecond

func sameTime(a, b time.Time) bool {
	d := a.Sub(b)
	return d < timeSlack && d > -timeSlack
}

// base is a fixed time in the past, so that times the suite chooses never
// collide with the time a store fills in.
func base() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

func mustThread(t *testing.T, s store.Store, id string, updated time.Time) *store.Thread {
	t.Helper()
	th := &store.Thread{ID: id, Workflow: "wf-" + id, Created: updated, Updated: updated, Meta: map[string]string{"k": id}}
	if err := s.CreateThread(t.Context(), th); err != nil {
		t.Fatalf("CreateThread(%s): %v", id, err)
	}
	return th
}

func mustRun(t *testing.T, s store.Store, thread, id string, n int) *store.Run {
	t.Helper()
	at := base().Add(time.Duration(n) * time.Minute)
	r := &store.Run{ID: id, ThreadID: thread, Number: n, Status: "completed", Created: at, Updated: at}
	if err := s.PutRun(t.Context(), r); err != nil {
		t.Fatalf("PutRun(%s): %v", id, err)
	}
	return r
}

func rec(thread, run string, seq int64, step int, kind store.Kind) *store.Record {
	return &store.Record{
		ThreadID: thread, RunID: run, Seq: seq, Step: step, Kind: kind,
		Data: fmt.Appendf(nil, `{"thread":%q,"seq":%d,"step":%d}`, thread, seq, step),
	}
}

func mustAppend(t *testing.T, s store.Store, recs ...*store.Record) {
	t.Helper()
	if err := s.Append(t.Context(), recs...); err != nil {
		t.Fatalf("Append(seq %d..): %v", recs[0].Seq, err)
	}
}

func mustRecords(t *testing.T, s store.Store, thread string, from int64) []*store.Record {
	t.Helper()
	rs, err := s.Records(t.Context(), thread, from)
	if err != nil {
		t.Fatalf("Records(%s, %d): %v", thread, from, err)
	}
	return rs
}

func seqs(rs []*store.Record) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.Seq
	}
	return out
}

func equalSeqs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func span(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("%s: got %v, want ErrNotFound", what, err)
	}
}

func testThreadCRUD(t *testing.T, s store.Store) {
	ctx := t.Context()
	th := mustThread(t, s, "t1", base())
	if err := s.CreateThread(ctx, &store.Thread{ID: "t1", Workflow: "other"}); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateThread twice: got %v, want ErrExists", err)
	}
	if err := s.CreateThread(ctx, &store.Thread{Workflow: "x"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("CreateThread with empty ID: got %v, want ErrInvalid", err)
	}
	got, err := s.Thread(ctx, "t1")
	if err != nil {
		t.Fatalf("Thread: %v", err)
	}
	if got.ID != th.ID || got.Workflow != th.Workflow || !sameTime(got.Created, th.Created) || !sameTime(got.Updated, th.Updated) || got.Meta["k"] != "t1" || len(got.Meta) != 1 {
		t.Errorf("Thread = %+v, want %+v", got, th)
	}
	// The returned thread is a copy.
	got.Meta["k"] = "changed"
	th.Meta["k"] = "changed"
	again, err := s.Thread(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if again.Meta["k"] != "t1" {
		t.Errorf("Meta changed through an alias: %v", again.Meta)
	}
	// Zero times are filled in.
	before := time.Now()
	z := &store.Thread{ID: "t2", Workflow: "w"}
	if err := s.CreateThread(ctx, z); err != nil {
		t.Fatal(err)
	}
	z2, err := s.Thread(ctx, "t2")
	if err != nil {
		t.Fatal(err)
	}
	if z2.Created.Before(before.Add(-timeSlack)) || z2.Updated.Before(before.Add(-timeSlack)) {
		t.Errorf("zero times not filled in: %+v", z2)
	}
	_, err = s.Thread(ctx, "nope")
	wantNotFound(t, "Thread(nope)", err)
	if err := s.DeleteThread(ctx, "t2"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	_, err = s.Thread(ctx, "t2")
	wantNotFound(t, "Thread after delete", err)
	wantNotFound(t, "DeleteThread(nope)", s.DeleteThread(ctx, "nope"))
}

func testThreadListing(t *testing.T, s store.Store) {
	ctx := t.Context()
	all, err := s.Threads(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 0 {
		t.Fatalf("new store lists %d threads", len(all))
	}
	// Created in an order unrelated to Updated.
	for _, n := range []int{3, 1, 4, 0, 2} {
		mustThread(t, s, fmt.Sprintf("t%d", n), base().Add(time.Duration(n)*time.Hour))
	}
	ids := func(ts []*store.Thread) []string {
		var out []string
		for _, th := range ts {
			out = append(out, th.ID)
		}
		return out
	}
	check := func(opts store.ListOptions, want ...string) {
		t.Helper()
		got, err := s.Threads(ctx, opts)
		if err != nil {
			t.Fatalf("Threads(%+v): %v", opts, err)
		}
		if fmt.Sprint(ids(got)) != fmt.Sprint(want) {
			t.Errorf("Threads(%+v) = %v, want %v", opts, ids(got), want)
		}
	}
	check(store.ListOptions{}, "t4", "t3", "t2", "t1", "t0")
	check(store.ListOptions{Limit: 2}, "t4", "t3")
	check(store.ListOptions{Limit: 2, Offset: 2}, "t2", "t1")
	check(store.ListOptions{Offset: 4}, "t0")
	check(store.ListOptions{Offset: 9})
}

func testThreadUpdatedByAppend(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustThread(t, s, "old", base())
	mustThread(t, s, "new", base().Add(time.Hour))
	mustAppend(t, s, rec("old", "", 1, 0, store.Event))
	got, err := s.Threads(ctx, store.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "old" {
		t.Errorf("after Append to old, first thread = %v, want old (Append updates the thread)", got)
	}
}

func testRuns(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustThread(t, s, "t", base())
	mustThread(t, s, "u", base())
	if err := s.PutRun(ctx, &store.Run{ID: "r", ThreadID: "missing", Number: 1, Status: store.Running}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutRun on a missing thread: got %v, want ErrNotFound", err)
	}
	if err := s.PutRun(ctx, &store.Run{ThreadID: "t", Number: 1, Status: store.Running}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("PutRun with empty ID: got %v, want ErrInvalid", err)
	}
	// Put out of order: listing is by Number.
	mustRun(t, s, "t", "r3", 3)
	mustRun(t, s, "t", "r1", 1)
	mustRun(t, s, "t", "r2", 2)
	mustRun(t, s, "u", "u1", 1)

	r := &store.Run{ID: "r2", ThreadID: "t", Number: 2, Status: "failed", Error: "boom", Created: base().Add(2 * time.Minute), Updated: base().Add(time.Hour)}
	if err := s.PutRun(ctx, r); err != nil {
		t.Fatalf("PutRun update: %v", err)
	}
	got, err := s.Run(ctx, "r2")
	if err != nil {
		t.Fatal(err)
	}
	if got.ThreadID != "t" || got.Number != 2 || got.Status != "failed" || got.Error != "boom" || !sameTime(got.Created, r.Created) || !sameTime(got.Updated, r.Updated) {
		t.Errorf("Run(r2) = %+v, want %+v", got, r)
	}
	if err := s.PutRun(ctx, &store.Run{ID: "r2", ThreadID: "u", Number: 9, Status: store.Running}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("PutRun moving a run to another thread: got %v, want ErrInvalid", err)
	}
	_, err = s.Run(ctx, "nope")
	wantNotFound(t, "Run(nope)", err)

	runs, err := s.Runs(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range runs {
		order = append(order, r.ID)
	}
	if fmt.Sprint(order) != "[r1 r2 r3]" {
		t.Errorf("Runs(t) = %v, want [r1 r2 r3]", order)
	}
	_, err = s.Runs(ctx, "missing")
	wantNotFound(t, "Runs(missing)", err)
}

// testRunStatus checks that every run status reads back as put, by Run
// and Runs, and that PutRun refuses a status that is none of them
// (including the empty one), writing nothing.
func testRunStatus(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustThread(t, s, "t", base())
	all := []store.Status{store.Running, store.Waiting, store.Completed, store.Failed, store.Cancelled}
	for i, st := range all {
		if !st.Valid() {
			t.Errorf("%q.Valid() = false", st)
		}
		at := base().Add(time.Duration(i) * time.Minute)
		if err := s.PutRun(ctx, &store.Run{ID: fmt.Sprintf("r%d", i+1), ThreadID: "t", Number: i + 1, Status: st, Created: at, Updated: at}); err != nil {
			t.Fatalf("PutRun(%s): %v", st, err)
		}
		if got, err := s.Run(ctx, fmt.Sprintf("r%d", i+1)); err != nil || got.Status != st {
			t.Errorf("Run with status %s = %+v, %v", st, got, err)
		}
	}
	if got := [...]string{string(store.Running), string(store.Waiting), string(store.Completed), string(store.Failed), string(store.Cancelled)}; fmt.Sprint(got) != "[running waiting completed failed cancelled]" {
		t.Errorf("status names = %v", got)
	}
	runs, err := s.Runs(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	var got []store.Status
	for _, r := range runs {
		got = append(got, r.Status)
	}
	if fmt.Sprint(got) != fmt.Sprint(all) {
		t.Errorf("Runs statuses = %v, want %v", got, all)
	}
	for _, bad := range []store.Status{"", "canceled", "Running", "done"} {
		if bad.Valid() {
			t.Errorf("%q.Valid() = true", bad)
		}
		if err := s.PutRun(ctx, &store.Run{ID: "r1", ThreadID: "t", Number: 1, Status: bad}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("PutRun with status %q: %v, want ErrInvalid", bad, err)
		}
		if err := s.PutRun(ctx, &store.Run{ID: "new", ThreadID: "t", Number: 9, Status: bad}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("PutRun of a new run with status %q: %v, want ErrInvalid", bad, err)
		}
	}
	if got, err := s.Run(ctx, "r1"); err != nil || got.Status != store.Running {
		t.Errorf("run r1 after refused PutRuns = %+v, %v; want running", got, err)
	}
	_, err = s.Run(ctx, "new")
	wantNotFound(t, "Run of a refused PutRun", err)
}

func testAppendExactlyOnce(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustThread(t, s, "t", base())
	r1 := rec("t", "r", 1, 1, store.Step)
	before := time.Now()
	mustAppend(t, s, r1)
	if r1.Checksum != store.Sum(r1.Data) {
		t.Errorf("Append set Checksum %08x, want %08x", r1.Checksum, store.Sum(r1.Data))
	}
	if r1.Time.Before(before.Add(-timeSlack)) {
		t.Errorf("Append did not set Time: %v", r1.Time)
	}
	for _, seq := range []int64{1, 3, 0} {
		err := s.Append(ctx, rec("t", "r", seq, 2, store.Step))
		var ce *store.ConflictError
		if !errors.As(err, &ce) {
			t.Fatalf("Append at seq %d after 1: got %v, want *ConflictError", seq, err)
		}
		if ce.ThreadID != "t" || ce.Want != seq || ce.Got != 1 {
			t.Errorf("ConflictError = %+v, want thread t, Want %d, Got 1", ce, seq)
		}
	}
	mustAppend(t, s, rec("t", "r", 2, 2, store.Step))
	if got := seqs(mustRecords(t, s, "t", 1)); !equalSeqs(got, []int64{1, 2}) {
		t.Errorf("log = %v, want [1 2]", got)
	}
	err := s.Append(ctx, rec("missing", "r", 1, 1, store.Step))
	wantNotFound(t, "Append to a missing thread", err)
	err = s.Append(ctx, rec("missing", "r", 5, 1, store.Step))
	wantNotFound(t, "Append to a missing thread at seq 5", err)
	err = s.Append(ctx, rec("missing", "r", 1, 1, store.Step), rec("missing", "r", 2, 2, store.Step))
	wantNotFound(t, "Append of a batch to a missing thread", err)
	if err := s.Append(ctx); err != nil {
		t.Errorf("Append of nothing: %v", err)
	}
}

func testAppendBatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustThread(t, s, "t", base())
	mustAppend(t, s, rec("t", "r", 1, 1, store.Snapshot), rec("t", "r", 2, 1, store.Step), rec("t", "r", 3, 2, store.Step))
	// A batch whose second record is out of order writes nothing.
	err := s.Append(ctx, rec("t", "r", 4, 3, store.Step), rec("t", "r", 6, 4, store.Step))
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("Append with a gap inside the batch: got %v, want *ConflictError", err)
	}
	// A batch starting at a taken seq writes nothing.
	err = s.Append(ctx, rec("t", "r", 3, 3, store.Step), rec("t", "r", 4, 4, store.Step))
	if !errors.As(err, &ce) || ce.Want != 3 || ce.Got != 3 {
		t.Fatalf("Append at a taken seq: got %v, want *ConflictError{Want 3, Got 3}", err)
	}
	if got := seqs(mustRecords(t, s, "t", 1)); !equalSeqs(got, span(1, 3)) {
		t.Fatalf("after failed batches log = %v, want [1 2 3]", got)
	}
	mustAppend(t, s, rec("t", "r", 4, 3, store.Step), rec("t", "r", 5, 4, store.Step))
	if got := seqs(mustRecords(t, s, "t", 1)); !equalSeqs(got, span(1, 5)) {
		t.Errorf("log = %v, want 1..5", got)
	}
}

// testWriteBatch checks a store.BatchWriter (skipped for a store that is
// not one): a batch creates its thread unless it exists, appends and puts
// its run in one transaction, and one that fails writes nothing of it.
func testWriteBatch(t *testing.T, s store.Store) {
	bw, ok := s.(store.BatchWriter)
	if !ok {
		t.Skip("the store is not a store.BatchWriter")
	}
	ctx := t.Context()
	th := &store.Thread{ID: "b", Workflow: "W", Meta: map[string]string{"k": "v"}}
	recs := []*store.Record{rec("b", "r1", 1, 0, store.Snapshot), rec("b", "r1", 2, 1, store.Step)}
	if err := bw.WriteBatch(ctx, &store.Batch{Thread: th, Records: recs}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Thread(ctx, "b")
	if err != nil || got.Workflow != "W" || got.Meta["k"] != "v" {
		t.Fatalf("thread after the batch: %+v, %v", got, err)
	}
	if recs[0].Checksum != store.Sum(recs[0].Data) || recs[1].Time.IsZero() {
		t.Errorf("WriteBatch did not set Checksum and Time: %+v", recs[1])
	}
	// The thread exists now: creating it again in a batch is no error, and
	// the run goes in with the records.
	run := &store.Run{ID: "r1", ThreadID: "b", Number: 1, Status: "completed", Created: base(), Updated: base().Add(time.Second)}
	if err := bw.WriteBatch(ctx, &store.Batch{Thread: &store.Thread{ID: "b", Workflow: "W"}, Records: []*store.Record{rec("b", "r1", 3, 2, store.Step)}, Run: run}); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Run(ctx, "r1"); err != nil || r.Status != "completed" || r.Number != 1 {
		t.Errorf("run after the batch: %+v, %v", r, err)
	}
	// A batch whose records conflict writes nothing, not even its run.
	run2 := &store.Run{ID: "r2", ThreadID: "b", Number: 2, Status: "running", Created: base(), Updated: base()}
	err = bw.WriteBatch(ctx, &store.Batch{Records: []*store.Record{rec("b", "r2", 3, 1, store.Step)}, Run: run2})
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Want != 3 || ce.Got != 3 {
		t.Fatalf("batch at a taken seq: %v, want *ConflictError{Want 3, Got 3}", err)
	}
	if _, err := s.Run(ctx, "r2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the run of a failed batch was written: %v", err)
	}
	if got := seqs(mustRecords(t, s, "b", 1)); !equalSeqs(got, span(1, 3)) {
		t.Errorf("log = %v, want 1..3", got)
	}
	// A batch for a missing thread, without the thread, is refused.
	err = bw.WriteBatch(ctx, &store.Batch{Records: []*store.Record{rec("none", "r", 1, 0, store.Snapshot)}})
	if err == nil {
		t.Error("a batch appending to a missing thread was accepted")
	}
	if _, err := s.Thread(ctx, "none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a failed batch created a thread: %v", err)
	}
}

func testAppendInvalid(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustThread(t, s, "t", base())
	mustThread(t, s, "u", base())
	bad := rec("t", "r", 1, 1, "")
	if err := s.Append(ctx, bad); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Append without Kind: got %v, want ErrInvalid", err)
	}
	if err := s.Append(ctx, rec("t", "r", 1, 1, "bogus")); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Append of an unknown Kind: got %v, want ErrInvalid", err)
	}
	if err := s.Append(ctx, rec("t", "r", 1, 1, store.Step), rec("u", "r", 2, 1, store.Step)); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Append across threads: got %v, want ErrInvalid", err)
	}
	if err := s.Append(ctx, nil); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Append(nil): got %v, want ErrInvalid", err)
	}
	if got := mustRecords(t, s, "t", 1); len(got) != 0 {
		t.Errorf("invalid appends wrote %v", seqs(got))
	}
}

func testAppendConcurrent(t *testing.T, s store.Store) {
	const (
		writers = 16
		total   = 200
	)
	ctx := t.Context()
	mustThread(t, s, "t", base())
	var (
		mu      sync.Mutex
		winners = map[int64]int{}
		errs    []error
		wg      sync.WaitGroup
		start   = make(chan struct{})
	)
	for w := range writers {
		wg.Go(func() {
			<-start // all writers race from the first seq
			seq := int64(1)
			for seq <= total {
				r := &store.Record{ThreadID: "t", RunID: "r", Seq: seq, Step: w, Kind: store.Step, Data: fmt.Appendf(nil, `{"writer":%d,"seq":%d}`, w, seq)}
				err := s.Append(ctx, r)
				var ce *store.ConflictError
				switch {
				case err == nil:
					mu.Lock()
					if prev, ok := winners[seq]; ok {
						errs = append(errs, fmt.Errorf("seq %d won by writers %d and %d", seq, prev, w))
					}
					winners[seq] = w
					mu.Unlock()
					seq++
				case errors.As(err, &ce):
					if ce.Got < seq-1 {
						mu.Lock()
						errs = append(errs, fmt.Errorf("writer %d: conflict at %d says log ends at %d, but %d was written", w, seq, ce.Got, seq-1))
						mu.Unlock()
						return
					}
					seq = ce.Got + 1
				default:
					mu.Lock()
					errs = append(errs, fmt.Errorf("writer %d at seq %d: %w", w, seq, err))
					mu.Unlock()
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	rs := mustRecords(t, s, "t", 1)
	if got := seqs(rs); !equalSeqs(got, span(1, total)) {
		t.Fatalf("log has %d records %v..., want 1..%d without gaps or duplicates", len(got), got[:min(len(got), 10)], total)
	}
	if len(winners) != total {
		t.Errorf("%d appends succeeded, want %d", len(winners), total)
	}
	for _, r := range rs {
		want := fmt.Appendf(nil, `{"writer":%d,"seq":%d}`, winners[r.Seq], r.Seq)
		if !bytes.Equal(r.Data, want) {
			t.Errorf("seq %d holds %s, but writer %d won it", r.Seq, r.Data, winners[r.Seq])
		}
	}
}

func testRecords(t *testing.T, s store.Store) {
	mustThread(t, s, "t", base())
	mustThread(t, s, "other", base())
	var written []*store.Record
	for i := int64(1); i <= 20; i++ {
		kind := store.Step
		if i%5 == 1 {
			kind = store.Snapshot
		}
		r := rec("t", fmt.Sprintf("r%d", (i-1)/10+1), i, int(i), kind)
		mustAppend(t, s, r)
		written = append(written, r)
		mustAppend(t, s, rec("other", "x", i, int(i), store.Event))
	}
	if got := mustRecords(t, s, "t", 1); len(got) != 20 {
		t.Fatalf("Records(1) has %d records, want 20", len(got))
	}
	for _, from := range []int64{0, 1, 7, 20, 21} {
		got := mustRecords(t, s, "t", from)
		want := span(max(from, 1), 20)
		if !equalSeqs(seqs(got), want) {
			t.Errorf("Records(from %d) = %v, want %v", from, seqs(got), want)
			continue
		}
		for _, r := range got {
			w := written[r.Seq-1]
			if r.ThreadID != "t" || r.RunID != w.RunID || r.Step != w.Step || r.Kind != w.Kind || !bytes.Equal(r.Data, w.Data) || r.Checksum != store.Sum(w.Data) || !sameTime(r.Time, w.Time) {
				t.Errorf("record %d = %+v, want %+v", r.Seq, r, w)
			}
		}
	}
	// Empty and nil Data round-trip as empty.
	mustThread(t, s, "e", base())
	mustAppend(t, s, &store.Record{ThreadID: "e", Seq: 1, Kind: store.Event})
	if got := mustRecords(t, s, "e", 1); len(got) != 1 || len(got[0].Data) != 0 || got[0].Checksum != store.Sum(nil) {
		t.Errorf("record with nil Data read back as %+v", got)
	}
}

func testRecordsNoAlias(t *testing.T, s store.Store) {
	mustThread(t, s, "t", base())
	r := rec("t", "r", 1, 1, store.Step)
	orig := bytes.Clone(r.Data)
	mustAppend(t, s, r)
	r.Data[0] = 'X' // the caller reuses its buffer
	got := mustRecords(t, s, "t", 1)
	if !bytes.Equal(got[0].Data, orig) {
		t.Fatalf("store aliased the appended Data: %s", got[0].Data)
	}
	got[0].Data[0] = 'Y' // the caller edits what it read
	again := mustRecords(t, s, "t", 1)
	if !bytes.Equal(again[0].Data, orig) {
		t.Errorf("store aliased the returned Data: %s", again[0].Data)
	}
}

func testLastSnapshot(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustThread(t, s, "t", base())
	_, err := s.LastSnapshot(ctx, "t")
	wantNotFound(t, "LastSnapshot of an empty log", err)
	mustAppend(t, s, rec("t", "r", 1, 1, store.Step))
	_, err = s.LastSnapshot(ctx, "t")
	wantNotFound(t, "LastSnapshot without snapshots", err)
	mustAppend(t, s, rec("t", "r", 2, 2, store.Snapshot), rec("t", "r", 3, 3, store.Step), rec("t", "r", 4, 4, store.Snapshot), rec("t", "r", 5, 5, store.Step))
	got, err := s.LastSnapshot(ctx, "t")
	if err != nil {
		t.Fatalf("LastSnapshot: %v", err)
	}
	want := rec("t", "r", 4, 4, store.Snapshot)
	if got.Seq != 4 || got.Kind != store.Snapshot || got.Step != 4 || !bytes.Equal(got.Data, want.Data) || got.Checksum != store.Sum(want.Data) {
		t.Errorf("LastSnapshot = %+v, want seq 4", got)
	}
	_, err = s.LastSnapshot(ctx, "missing")
	wantNotFound(t, "LastSnapshot of a missing thread", err)
}

func testPending(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustThread(t, s, "t", base())
	mustThread(t, s, "u", base())
	if err := s.PutPending(ctx, &store.Pending{ID: "q", ThreadID: "missing"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutPending on a missing thread: got %v, want ErrNotFound", err)
	}
	if err := s.PutPending(ctx, &store.Pending{ThreadID: "t"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("PutPending with empty ID: got %v, want ErrInvalid", err)
	}
	put := func(id, thread string, minute int) *store.Pending {
		p := &store.Pending{ID: id, ThreadID: thread, RunID: "r1", Node: "ask_" + id, Question: fmt.Appendf(nil, `{"q":%q}`, id), Created: base().Add(time.Duration(minute) * time.Minute)}
		if err := s.PutPending(ctx, p); err != nil {
			t.Fatalf("PutPending(%s): %v", id, err)
		}
		return p
	}
	b := put("b", "t", 2)
	put("a", "t", 1)
	put("c", "t", 3)
	put("a", "u", 1) // the same ID in another thread is another question
	list := func(thread string) []*store.Pending {
		t.Helper()
		ps, err := s.Pending(ctx, thread)
		if err != nil {
			t.Fatalf("Pending(%s): %v", thread, err)
		}
		return ps
	}
	ids := func(ps []*store.Pending) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return fmt.Sprint(out)
	}
	got := list("t")
	if ids(got) != "[a b c]" {
		t.Fatalf("Pending(t) = %s, want [a b c]", ids(got))
	}
	g := got[1]
	if g.ThreadID != "t" || g.RunID != b.RunID || g.Node != b.Node || !bytes.Equal(g.Question, b.Question) || !sameTime(g.Created, b.Created) {
		t.Errorf("Pending b = %+v, want %+v", g, b)
	}
	// Putting again replaces (a re-run step asks again).
	b2 := &store.Pending{ID: "b", ThreadID: "t", RunID: "r2", Node: "ask_b", Question: []byte(`{"q":"again"}`), Created: b.Created}
	if err := s.PutPending(ctx, b2); err != nil {
		t.Fatalf("PutPending again: %v", err)
	}
	got = list("t")
	if ids(got) != "[a b c]" || got[1].RunID != "r2" || string(got[1].Question) != `{"q":"again"}` {
		t.Errorf("after replacing b: %s, b = %+v", ids(got), got[1])
	}
	if err := s.DeletePending(ctx, "t", "a"); err != nil {
		t.Fatalf("DeletePending: %v", err)
	}
	wantNotFound(t, "DeletePending twice", s.DeletePending(ctx, "t", "a"))
	wantNotFound(t, "DeletePending on a missing thread", s.DeletePending(ctx, "missing", "a"))
	if got := ids(list("t")); got != "[b c]" {
		t.Errorf("after delete, Pending(t) = %s, want [b c]", got)
	}
	if got := ids(list("u")); got != "[a]" {
		t.Errorf("Pending(u) = %s, want [a]", got)
	}
	_, err := s.Pending(ctx, "missing")
	wantNotFound(t, "Pending of a missing thread", err)
}

// pruneLog builds a thread of four runs, run rN last updated N minutes
// after base():
//
//	run r1: 1 snapshot, 2 step, 3 step
//	run r2: 4 step, 5 step, 6 step
//	run r3: 7 snapshot, 8 step
//	run r4: 9 step, 10 step
//
// and two pending questions, q1 of r1 and q4 of r4.
func pruneLog(t *testing.T, s store.Store, id string) {
	mustThread(t, s, id, base())
	for i, run := range []string{"r1", "r2", "r3", "r4"} {
		mustRun(t, s, id, id+"-"+run, i+1)
	}
	kinds := []store.Kind{store.Snapshot, store.Step, store.Step, store.Step, store.Step, store.Step, store.Snapshot, store.Step, store.Step, store.Step}
	runOf := []string{"r1", "r1", "r1", "r2", "r2", "r2", "r3", "r3", "r4", "r4"}
	for i, k := range kinds {
		mustAppend(t, s, rec(id, id+"-"+runOf[i], int64(i+1), i+1, k))
	}
	if err := s.PutPending(t.Context(), &store.Pending{ID: "q1", ThreadID: id, RunID: id + "-r1", Node: "ask"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPending(t.Context(), &store.Pending{ID: "q4", ThreadID: id, RunID: id + "-r4", Node: "ask"}); err != nil {
		t.Fatal(err)
	}
}

// checkPruned checks what a Prune of a pruneLog thread left: the records
// firstSeq..last, the runs (by name, in order) and the pending questions.
func checkPruned(t *testing.T, s store.Store, id, what string, firstSeq, last int64, runs, pending string) {
	t.Helper()
	ctx := t.Context()
	if got := seqs(mustRecords(t, s, id, 1)); !equalSeqs(got, span(firstSeq, last)) {
		t.Errorf("%s left records %v, want %d..%d", what, got, firstSeq, last)
	}
	rs, err := s.Runs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rs {
		names = append(names, r.ID[len(id)+1:])
	}
	if fmt.Sprint(names) != runs {
		t.Errorf("%s left runs %v, want %s", what, names, runs)
	}
	ps, err := s.Pending(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var qs []string
	for _, p := range ps {
		qs = append(qs, p.ID)
	}
	if fmt.Sprint(qs) != pending {
		t.Errorf("%s left pending questions %v, want %s", what, qs, pending)
	}
}

func testPrune(t *testing.T, s store.Store) {
	ctx := t.Context()
	at := func(d time.Duration) time.Time { return base().Add(d) }
	cases := []struct {
		name     string
		opts     store.PruneOptions
		removed  int
		firstSeq int64
		runs     string
		pending  string
	}{
		{"no limit", store.PruneOptions{}, 0, 1, "[r1 r2 r3 r4]", "[q1 q4]"},
		{"keep5", store.PruneOptions{KeepRuns: 5}, 0, 1, "[r1 r2 r3 r4]", "[q1 q4]"},
		{"keep4", store.PruneOptions{KeepRuns: 4}, 0, 1, "[r1 r2 r3 r4]", "[q1 q4]"},
		{"keep3", store.PruneOptions{KeepRuns: 3}, 0, 1, "[r2 r3 r4]", "[q4]"}, // r2 folds from snapshot 1
		{"keep2", store.PruneOptions{KeepRuns: 2}, 6, 7, "[r3 r4]", "[q4]"},
		{"keep1", store.PruneOptions{KeepRuns: 1}, 6, 7, "[r4]", "[q4]"}, // r4 folds from snapshot 7
		{"before base", store.PruneOptions{Before: at(0)}, 0, 1, "[r1 r2 r3 r4]", "[q1 q4]"},
		{"before r2", store.PruneOptions{Before: at(90 * time.Second)}, 0, 1, "[r2 r3 r4]", "[q4]"},
		// r3 was last updated at 3m exactly: not before.
		{"before r3", store.PruneOptions{Before: at(3 * time.Minute)}, 6, 7, "[r3 r4]", "[q4]"},
		// Everything is older, but the last run stays.
		{"before all", store.PruneOptions{Before: at(time.Hour)}, 6, 7, "[r4]", "[q4]"},
		// Either limit removes a run.
		{"keep3 before r3", store.PruneOptions{KeepRuns: 3, Before: at(150 * time.Second)}, 6, 7, "[r3 r4]", "[q4]"},
		{"keep4 before r3", store.PruneOptions{KeepRuns: 4, Before: at(150 * time.Second)}, 6, 7, "[r3 r4]", "[q4]"},
		{"keep1 before base", store.PruneOptions{KeepRuns: 1, Before: at(0)}, 6, 7, "[r4]", "[q4]"},
	}
	for i, c := range cases {
		id := fmt.Sprintf("p%d", i)
		pruneLog(t, s, id)
		n, err := s.Prune(ctx, id, c.opts)
		if err != nil {
			t.Fatalf("Prune(%s): %v", c.name, err)
		}
		if n != c.removed {
			t.Errorf("Prune(%s) removed %d records, want %d", c.name, n, c.removed)
		}
		checkPruned(t, s, id, "Prune("+c.name+")", c.firstSeq, 10, c.runs, c.pending)
		// The state still folds: the log starts at a snapshot.
		if snap, err := s.LastSnapshot(ctx, id); err != nil || snap.Seq != 7 {
			t.Errorf("Prune(%s): LastSnapshot = %v, %v; want seq 7", c.name, snap, err)
		}
		// The log goes on where it was.
		mustAppend(t, s, rec(id, id+"-r5", 11, 11, store.Step))
		// Pruning again with the same options removes nothing more.
		if n, err := s.Prune(ctx, id, c.opts); err != nil || n != 0 {
			t.Errorf("Prune(%s) again: removed %d, %v; want 0", c.name, n, err)
		}
	}

	// A run that is neither among the oldest by count nor old enough stays,
	// even when an older run goes; the records it folds from stay too.
	pruneLog(t, s, "mid")
	if err := s.PutRun(ctx, &store.Run{ID: "mid-r1", ThreadID: "mid", Number: 1, Status: "waiting", Created: at(time.Minute), Updated: at(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Prune(ctx, "mid", store.PruneOptions{Before: at(3 * time.Minute)}); err != nil || n != 0 {
		t.Errorf("Prune of r2 only: removed %d, %v; want 0", n, err)
	}
	checkPruned(t, s, "mid", "Prune of r2 only", 1, 10, "[r1 r3 r4]", "[q1 q4]")

	// The last run has no record yet: the kept state folds from the last
	// snapshot.
	pruneLog(t, s, "fresh")
	mustRun(t, s, "fresh", "fresh-r5", 5)
	if n, err := s.Prune(ctx, "fresh", store.PruneOptions{KeepRuns: 1}); err != nil || n != 6 {
		t.Errorf("Prune keeping a run without records: removed %d, %v; want 6", n, err)
	}
	checkPruned(t, s, "fresh", "Prune keeping a run without records", 7, 10, "[r5]", "[]")

	// A thread of one run keeps it, however old.
	mustThread(t, s, "one", base())
	mustRun(t, s, "one", "one-r1", 1)
	mustAppend(t, s, rec("one", "one-r1", 1, 1, store.Snapshot), rec("one", "one-r1", 2, 2, store.Step))
	if n, err := s.Prune(ctx, "one", store.PruneOptions{KeepRuns: 1, Before: at(24 * time.Hour)}); err != nil || n != 0 {
		t.Errorf("Prune of a one-run thread: removed %d, %v; want 0", n, err)
	}
	if rs, err := s.Runs(ctx, "one"); err != nil || len(rs) != 1 {
		t.Errorf("Prune of a one-run thread left runs %v, %v", rs, err)
	}

	if _, err := s.Prune(ctx, "p0", store.PruneOptions{KeepRuns: -1}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Prune(KeepRuns -1): got %v, want ErrInvalid", err)
	}
	_, err := s.Prune(ctx, "missing", store.PruneOptions{KeepRuns: 1})
	wantNotFound(t, "Prune of a missing thread", err)
}

func testDeleteThread(t *testing.T, s store.Store) {
	ctx := t.Context()
	pruneLog(t, s, "t")
	pruneLog(t, s, "keep")
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	_, err := s.Thread(ctx, "t")
	wantNotFound(t, "Thread", err)
	_, err = s.Run(ctx, "t-r1")
	wantNotFound(t, "Run of a deleted thread", err)
	_, err = s.Runs(ctx, "t")
	wantNotFound(t, "Runs of a deleted thread", err)
	_, err = s.Records(ctx, "t", 1)
	wantNotFound(t, "Records of a deleted thread", err)
	_, err = s.Pending(ctx, "t")
	wantNotFound(t, "Pending of a deleted thread", err)
	// A new thread with the same ID starts empty.
	mustThread(t, s, "t", base())
	if got := mustRecords(t, s, "t", 1); len(got) != 0 {
		t.Errorf("recreated thread has records %v", seqs(got))
	}
	if runs, err := s.Runs(ctx, "t"); err != nil || len(runs) != 0 {
		t.Errorf("recreated thread has runs %v (%v)", runs, err)
	}
	if ps, err := s.Pending(ctx, "t"); err != nil || len(ps) != 0 {
		t.Errorf("recreated thread has pending %v (%v)", ps, err)
	}
	mustAppend(t, s, rec("t", "x", 1, 1, store.Step))
	// The other thread is untouched.
	if got := seqs(mustRecords(t, s, "keep", 1)); !equalSeqs(got, span(1, 10)) {
		t.Errorf("other thread's log = %v", got)
	}
	if _, err := s.Run(ctx, "keep-r1"); err != nil {
		t.Errorf("other thread's run: %v", err)
	}
}

func testMissingThread(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, err := s.Records(ctx, "missing", 1)
	wantNotFound(t, "Records", err)
}

func testContextCanceled(t *testing.T, s store.Store) {
	mustThread(t, s, "t", base())
	mustRun(t, s, "t", "r1", 1)
	mustAppend(t, s, rec("t", "r1", 1, 1, store.Snapshot))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := map[string]func() error{
		"CreateThread": func() error { return s.CreateThread(ctx, &store.Thread{ID: "c"}) },
		"Thread":       func() error { _, err := s.Thread(ctx, "t"); return err },
		"UpdateThread": func() error { return s.UpdateThread(ctx, &store.Thread{ID: "t", Workflow: "changed"}) },
		"PutSource":    func() error { return s.PutSource(ctx, store.Digest([]byte("x")), []byte("x")) },
		"Source":       func() error { _, err := s.Source(ctx, store.Digest([]byte("x"))); return err },
		"Threads":      func() error { _, err := s.Threads(ctx, store.ListOptions{}); return err },
		"DeleteThread": func() error { return s.DeleteThread(ctx, "t") },
		"PutRun": func() error {
			return s.PutRun(ctx, &store.Run{ID: "r2", ThreadID: "t", Number: 2, Status: store.Running})
		},
		"Run":          func() error { _, err := s.Run(ctx, "r1"); return err },
		"Runs":         func() error { _, err := s.Runs(ctx, "t"); return err },
		"Append":       func() error { return s.Append(ctx, rec("t", "r1", 2, 2, store.Step)) },
		"Records":      func() error { _, err := s.Records(ctx, "t", 1); return err },
		"LastSnapshot": func() error { _, err := s.LastSnapshot(ctx, "t"); return err },
		"PutPending":   func() error { return s.PutPending(ctx, &store.Pending{ID: "q", ThreadID: "t"}) },
		"Pending":      func() error { _, err := s.Pending(ctx, "t"); return err },
		"DeletePending": func() error {
			return s.DeletePending(ctx, "t", "q")
		},
		"Prune": func() error { _, err := s.Prune(ctx, "t", store.PruneOptions{KeepRuns: 1}); return err },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: got %v, want context.Canceled", name, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s with a canceled context took %v", name, d)
		}
	}
	// Nothing was written.
	if got := seqs(mustRecords(t, s, "t", 1)); !equalSeqs(got, []int64{1}) {
		t.Errorf("log after canceled calls = %v, want [1]", got)
	}
	if _, err := s.Thread(t.Context(), "t"); err != nil {
		t.Errorf("thread after a canceled DeleteThread: %v", err)
	}
}

func testCorruption(t *testing.T, s store.Store) {
	c, ok := s.(Corrupter)
	if !ok {
		t.Skip("store does not implement storetest.Corrupter")
	}
	ctx := t.Context()
	mustThread(t, s, "t", base())
	mustAppend(t, s, rec("t", "r", 1, 1, store.Snapshot), rec("t", "r", 2, 2, store.Step), rec("t", "r", 3, 7, store.Snapshot))
	if err := c.CorruptRecord(ctx, "t", 3); err != nil {
		t.Fatalf("CorruptRecord: %v", err)
	}
	check := func(what string, err error) {
		t.Helper()
		var ce *store.CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("%s of a corrupted record: got %v, want *CorruptError", what, err)
		}
		if ce.ThreadID != "t" || ce.Seq != 3 || ce.Step != 7 || ce.Field != "data" {
			t.Errorf("%s: CorruptError = %+v, want thread t, seq 3, step 7, field data", what, ce)
		}
	}
	rs, err := s.Records(ctx, "t", 1)
	check("Records", err)
	if rs != nil {
		t.Errorf("Records returned %d records with the error", len(rs))
	}
	_, err = s.LastSnapshot(ctx, "t")
	check("LastSnapshot", err)
	// Records past the damage still read.
	if got := seqs(mustRecords(t, s, "t", 4)); len(got) != 0 {
		t.Errorf("Records(4) = %v", got)
	}
}

func testGap(t *testing.T, s store.Store) {
	d, ok := s.(Deleter)
	if !ok {
		t.Skip("store does not implement storetest.Deleter")
	}
	ctx := t.Context()
	// log builds a thread of n records, a snapshot at 1 and steps after.
	log := func(id string, n int64) {
		mustThread(t, s, id, base())
		for seq := int64(1); seq <= n; seq++ {
			k := store.Step
			if seq == 1 {
				k = store.Snapshot
			}
			mustAppend(t, s, rec(id, "r", seq, int(seq), k))
		}
	}
	del := func(id string, seq int64) {
		t.Helper()
		if err := d.DeleteRecord(ctx, id, seq); err != nil {
			t.Fatalf("DeleteRecord(%s, %d): %v", id, seq, err)
		}
	}
	// wantGap reads from from on and wants the gap at missing reported.
	wantGap := func(id string, from, missing int64) {
		t.Helper()
		rs, err := s.Records(ctx, id, from)
		var ce *store.CorruptError
		if !errors.As(err, &ce) {
			t.Errorf("Records(%s, %d) of a log without record %d: got %v, %v; want *CorruptError", id, from, missing, seqs(rs), err)
			return
		}
		if ce.ThreadID != id || ce.Seq != missing || ce.Field != "seq" {
			t.Errorf("Records(%s, %d): CorruptError = %+v, want thread %s, seq %d, field seq", id, from, ce, id, missing)
		}
		if rs != nil {
			t.Errorf("Records(%s, %d) returned %d records with the error", id, from, len(rs))
		}
	}

	// A record in the middle (the issue's: 38 of 43).
	log("mid", 43)
	del("mid", 38)
	for _, from := range []int64{0, 1, 30, 37, 38} {
		wantGap("mid", from, 38)
	}
	// Past the gap the log reads.
	if got := seqs(mustRecords(t, s, "mid", 39)); !equalSeqs(got, span(39, 43)) {
		t.Errorf("Records(mid, 39) = %v, want 39..43", got)
	}
	// Appending goes on at the end; the gap stays reported.
	mustAppend(t, s, rec("mid", "r", 44, 44, store.Step))
	wantGap("mid", 1, 38)

	// Two gaps: the first is named.
	log("two", 10)
	del("two", 7)
	del("two", 4)
	wantGap("two", 1, 4)
	wantGap("two", 5, 7)

	// The first record of a log that was never pruned.
	log("head", 5)
	del("head", 1)
	wantGap("head", 1, 1)

	// The snapshot a pruned log starts at.
	pruneLog(t, s, "pruned")
	if _, err := s.Prune(ctx, "pruned", store.PruneOptions{KeepRuns: 1}); err != nil {
		t.Fatal(err)
	}
	if got := seqs(mustRecords(t, s, "pruned", 1)); !equalSeqs(got, span(7, 10)) {
		t.Fatalf("pruned log = %v, want 7..10", got)
	}
	del("pruned", 7)
	wantGap("pruned", 1, 7)
	// A record right after a prune's snapshot.
	pruneLog(t, s, "pruned2")
	if _, err := s.Prune(ctx, "pruned2", store.PruneOptions{KeepRuns: 1}); err != nil {
		t.Fatal(err)
	}
	del("pruned2", 8)
	wantGap("pruned2", 1, 8)
	wantGap("pruned2", 8, 8)

	// An intact thread beside them reads whole.
	log("whole", 12)
	if got := seqs(mustRecords(t, s, "whole", 1)); !equalSeqs(got, span(1, 12)) {
		t.Errorf("Records(whole) = %v, want 1..12", got)
	}
}

// testHead checks a store.HeadReader: the seq and time of a thread's last
// record, the time exactly as Records reads it (engine.StateCache compares
// them), and 0 for a thread without records, store.ErrNotFound for a missing one.
func testHead(t *testing.T, s store.Store) {
	hr, ok := s.(store.HeadReader)
	if !ok {
		t.Skip("not a store.HeadReader")
	}
	ctx := t.Context()
	mustThread(t, s, "h1", base())
	head := func(id string) (int64, time.Time) {
		t.Helper()
		seq, at, err := hr.Head(ctx, id)
		if err != nil {
			t.Fatalf("Head(%s): %v", id, err)
		}
		return seq, at
	}
	if seq, _ := head("h1"); seq != 0 {
		t.Fatalf("Head of a thread without records = %d, want 0", seq)
	}
	if seq, _, err := hr.Head(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Head of a missing thread = %d, %v; want store.ErrNotFound", seq, err)
	}
	for i := int64(1); i <= 3; i++ {
		kind := store.Step
		if i == 1 {
			kind = store.Snapshot
		}
		mustAppend(t, s, rec("h1", "r1", i, int(i), kind))
		rs := mustRecords(t, s, "h1", 1)
		last := rs[len(rs)-1]
		seq, at := head("h1")
		if seq != i || last.Seq != i || !at.Equal(last.Time) {
			t.Fatalf("after seq %d: Head = %d at %v, the last record %d at %v", i, seq, at, last.Seq, last.Time)
		}
	}
}
