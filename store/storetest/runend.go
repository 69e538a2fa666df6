package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

func pendingIDs(t *testing.T, s store.Store, thread string) []string {
	t.Helper()
	ps, err := s.Pending(t.Context(), thread)
	if err != nil {
		t.Fatalf("Pending(%s): %v", thread, err)
	}
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	return ids
}

// testEndRun checks store.RunEnder: questions, run and release in one
// write, all or nothing, fenced as PutPending, PutRun and Release are.
func testEndRun(t *testing.T, s store.Store) {
	re, ok := s.(store.RunEnder)
	if !ok {
		t.Skip("the store is not a store.RunEnder")
	}
	ls := leaser(t, s)
	ctx := t.Context()
	mustThread(t, s, "e1", base())
	l := mustClaim(t, ls, "e1", "a", longTTL)
	if err := s.PutPending(ctx, &store.Pending{ID: "q1", ThreadID: "e1", RunID: "r1", Node: "ask", Question: []byte(`"one?"`), Fence: l.Fence}); err != nil {
		t.Fatal(err)
	}
	at := base().Add(time.Hour)
	q2 := &store.Pending{ID: "q2", ThreadID: "e1", RunID: "r1", Node: "ask2", Question: []byte(`"two?"`), Fence: l.Fence}
	run := &store.Run{ID: "r1", ThreadID: "e1", Number: 1, Status: store.Waiting, Created: at, Updated: at, Fence: l.Fence}
	if err := re.EndRun(ctx, &store.RunEnd{Thread: "e1", Answered: []string{"q1", "nope"}, Pending: []*store.Pending{q2}, Run: run, Release: &l}); err != nil {
		t.Fatalf("EndRun: %v", err)
	}
	if got := pendingIDs(t, s, "e1"); !slices.Equal(got, []string{"q2"}) {
		t.Errorf("pending after EndRun: %v, want [q2]", got)
	}
	ps, _ := s.Pending(ctx, "e1")
	if len(ps) == 1 && (ps[0].Node != "ask2" || string(ps[0].Question) != `"two?"` || ps[0].RunID != "r1" || q2.Created.IsZero()) {
		t.Errorf("question read back %+v (Created written back %v)", ps[0], q2.Created)
	}
	if r, err := s.Run(ctx, "r1"); err != nil || r.Status != store.Waiting || r.Number != 1 || !sameTime(r.Created, at) {
		t.Errorf("Run(r1) = %+v, %v; want waiting, number 1, created %v", r, err, at)
	}
	// Released: another owner claims at once, with the next fence.
	l2 := mustClaim(t, ls, "e1", "b", longTTL)
	if l2.Fence != l.Fence+1 {
		t.Errorf("claim after EndRun's release: fence %d, want %d", l2.Fence, l.Fence+1)
	}

	// A lease lost (another driver holds the thread): nothing written.
	q3 := &store.Pending{ID: "q3", ThreadID: "e1", RunID: "r1", Node: "ask3", Question: []byte(`"three?"`), Fence: l.Fence}
	stale := &store.Run{ID: "r1", ThreadID: "e1", Number: 1, Status: store.Completed, Created: at, Updated: at.Add(time.Minute), Fence: l.Fence}
	err := re.EndRun(ctx, &store.RunEnd{Thread: "e1", Answered: []string{"q2"}, Pending: []*store.Pending{q3}, Run: stale, Release: &l})
	wantLeaseErr(t, "EndRun under a lost lease", err, store.ErrLeaseLost, "e1", "b")
	if got := pendingIDs(t, s, "e1"); !slices.Equal(got, []string{"q2"}) {
		t.Errorf("pending after a refused EndRun: %v, want [q2]", got)
	}
	if r, err := s.Run(ctx, "r1"); err != nil || r.Status != store.Waiting {
		t.Errorf("Run(r1) after a refused EndRun = %+v, %v; want waiting", r, err)
	}
	// Only the release refused (a lease of this fence no longer held,
	// the other parts unfenced): still nothing written.
	err = re.EndRun(ctx, &store.RunEnd{Thread: "e1", Answered: []string{"q2"}, Release: &l})
	wantLeaseErr(t, "EndRun releasing a lost lease", err, store.ErrLeaseLost, "e1", "b")
	if got := pendingIDs(t, s, "e1"); !slices.Equal(got, []string{"q2"}) {
		t.Errorf("pending after a refused release: %v, want [q2]", got)
	}
	// The holder's end, without a release: written, lease still held.
	done := &store.Run{ID: "r1", ThreadID: "e1", Number: 1, Status: store.Completed, Created: at, Updated: at.Add(time.Minute), Fence: l2.Fence}
	if err := re.EndRun(ctx, &store.RunEnd{Thread: "e1", Answered: []string{"q2"}, Run: done}); err != nil {
		t.Fatalf("EndRun without a release: %v", err)
	}
	if got := pendingIDs(t, s, "e1"); len(got) != 0 {
		t.Errorf("pending after the last answer: %v, want none", got)
	}
	if r, err := s.Run(ctx, "r1"); err != nil || r.Status != store.Completed {
		t.Errorf("Run(r1) = %+v, %v; want completed", r, err)
	}
	if _, err := ls.Claim(ctx, "e1", "c", longTTL); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("Claim while b holds the lease: %v, want ErrLeaseHeld", err)
	}

	// Refused before anything: a missing thread, parts of another thread.
	wantNotFound(t, "EndRun of a missing thread", re.EndRun(ctx, &store.RunEnd{Thread: "nope", Run: &store.Run{ID: "rx", ThreadID: "nope", Number: 1, Status: store.Completed, Created: at, Updated: at}}))
	for name, e := range map[string]*store.RunEnd{
		"no thread":          {},
		"run elsewhere":      {Thread: "e1", Run: &store.Run{ID: "ry", ThreadID: "other", Number: 1, Status: store.Completed, Created: at, Updated: at}},
		"bad status":         {Thread: "e1", Run: &store.Run{ID: "ry", ThreadID: "e1", Number: 1, Status: "nope", Created: at, Updated: at}},
		"question elsewhere": {Thread: "e1", Pending: []*store.Pending{{ID: "q", ThreadID: "other"}}},
		"lease elsewhere":    {Thread: "e1", Release: &store.Lease{Thread: "other", Owner: "b", Fence: l2.Fence}},
	} {
		if err := re.EndRun(ctx, e); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("EndRun (%s): %v, want ErrInvalid", name, err)
		}
	}
	if _, err := s.Run(ctx, "ry"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused EndRun wrote run ry: %v", err)
	}
}

// wantRecords checks that thread's log is want (Seq, Data, Checksum
// and, when set, Time), read back with its checksums verified.
func wantRecords(t *testing.T, what string, s store.Store, thread string, want []*store.Record) {
	t.Helper()
	got := mustRecords(t, s, thread, 1)
	if len(got) != len(want) {
		t.Errorf("%s: records of %s: %d, want %d", what, thread, len(got), len(want))
		return
	}
	for i, r := range got {
		w := want[i]
		if r.Seq != w.Seq || r.RunID != w.RunID || r.Step != w.Step || r.Kind != w.Kind || string(r.Data) != string(w.Data) ||
			r.Checksum != store.Sum(w.Data) || (!w.Time.IsZero() && !sameTime(r.Time, w.Time)) {
			t.Errorf("%s: record %d read back %+v (data %s), want %+v (data %s)", what, i, r, r.Data, w, w.Data)
		}
	}
}

// testEndRunRecords checks a RunEnd's Records: appended first, as Append
// appends them (the next Seqs, fenced), in the transaction of the rest,
// so that a wrong Seq or a stale fence writes nothing of the RunEnd.
func testEndRunRecords(t *testing.T, s store.Store) {
	re, ok := s.(store.RunEnder)
	if !ok {
		t.Skip("the store is not a store.RunEnder")
	}
	ls := leaser(t, s)
	ctx := t.Context()
	mustThread(t, s, "er", base())
	l := mustClaim(t, ls, "er", "a", longTTL)
	first := fenced("er", 1, l.Fence)
	mustAppend(t, s, first)
	at := base().Add(time.Hour)
	recs := []*store.Record{fenced("er", 2, l.Fence), fenced("er", 3, l.Fence)}
	recs[1].Kind = store.Snapshot
	q := &store.Pending{ID: "q1", ThreadID: "er", RunID: "r1", Node: "ask", Question: []byte(`"one?"`), Fence: l.Fence}
	run := &store.Run{ID: "r1", ThreadID: "er", Number: 1, Status: store.Waiting, Created: at, Updated: at, Fence: l.Fence}
	before := time.Now()
	if err := re.EndRun(ctx, &store.RunEnd{Thread: "er", Records: recs, Pending: []*store.Pending{q}, Run: run, Release: &l}); err != nil {
		t.Fatalf("EndRun with records: %v", err)
	}
	for _, r := range recs {
		if r.Checksum != store.Sum(r.Data) || r.Time.Before(before.Add(-clockSlack)) || r.Time.After(time.Now().Add(clockSlack)) {
			t.Errorf("EndRun wrote back record %d: checksum %d (want %d), time %v (want about %v)", r.Seq, r.Checksum, store.Sum(r.Data), r.Time, before)
		}
	}
	wantRecords(t, "after EndRun with records", s, "er", []*store.Record{first, recs[0], recs[1]})
	if seq, _, err := s.(store.HeadReader).Head(ctx, "er"); err != nil || seq != 3 {
		t.Errorf("Head(er) after EndRun with records = %d, %v; want 3", seq, err)
	}
	if got := pendingIDs(t, s, "er"); !slices.Equal(got, []string{"q1"}) {
		t.Errorf("pending after EndRun with records: %v, want [q1]", got)
	}
	if r, err := s.Run(ctx, "r1"); err != nil || r.Status != store.Waiting {
		t.Errorf("Run(r1) after EndRun with records = %+v, %v; want waiting", r, err)
	}
	l2 := mustClaim(t, ls, "er", "b", longTTL)
	if l2.Fence != l.Fence+1 {
		t.Errorf("claim after EndRun's release: fence %d, want %d", l2.Fence, l.Fence+1)
	}
	// Appending goes on from the RunEnd's last record.
	mustAppend(t, s, fenced("er", 4, l2.Fence))
	log := mustRecords(t, s, "er", 1)

	// A wrong Seq (a step recorded twice, a gap, a Seq inside the batch
	// out of order): a *ConflictError, and nothing of the RunEnd written.
	q2 := &store.Pending{ID: "q2", ThreadID: "er", RunID: "r1", Node: "ask", Question: []byte(`"two?"`), Fence: l2.Fence}
	done := &store.Run{ID: "r1", ThreadID: "er", Number: 1, Status: store.Completed, Created: at, Updated: at.Add(time.Minute), Fence: l2.Fence}
	for name, seqs := range map[string][]int64{"twice": {4, 5}, "gap": {6}, "out of order": {5, 7}} {
		var bad []*store.Record
		for _, seq := range seqs {
			bad = append(bad, fenced("er", seq, l2.Fence))
		}
		err := re.EndRun(ctx, &store.RunEnd{Thread: "er", Records: bad, Answered: []string{"q1"}, Pending: []*store.Pending{q2}, Run: done, Release: &l2})
		var ce *store.ConflictError
		if !errors.As(err, &ce) || !errors.Is(err, store.ErrConflict) || ce.ThreadID != "er" {
			t.Errorf("EndRun with records at a wrong seq (%s): %v, want a *store.ConflictError of thread er", name, err)
		}
		wantRecords(t, "after EndRun at a wrong seq ("+name+")", s, "er", log)
		if got := pendingIDs(t, s, "er"); !slices.Equal(got, []string{"q1"}) {
			t.Errorf("pending after EndRun at a wrong seq (%s): %v, want [q1]", name, got)
		}
		if r, err := s.Run(ctx, "r1"); err != nil || r.Status != store.Waiting {
			t.Errorf("Run(r1) after EndRun at a wrong seq (%s) = %+v, %v; want waiting", name, r, err)
		}
		if _, err := ls.Claim(ctx, "er", "c", longTTL); !errors.Is(err, store.ErrLeaseHeld) {
			t.Errorf("Claim after EndRun at a wrong seq (%s): %v, want ErrLeaseHeld (b still holds it)", name, err)
		}
	}

	// A stale fence (the lease taken over): the lease error Append gives,
	// and nothing written, not even the parts under the current fence.
	stale := []*store.Record{fenced("er", 5, l.Fence)}
	err := re.EndRun(ctx, &store.RunEnd{Thread: "er", Records: stale, Answered: []string{"q1"}, Pending: []*store.Pending{q2}, Run: done})
	wantLeaseErr(t, "EndRun with records under a stale fence", err, store.ErrLeaseLost, "er", "b")
	appendErr := s.Append(ctx, fenced("er", 5, l.Fence))
	wantLeaseErr(t, "Append under a stale fence", appendErr, store.ErrLeaseLost, "er", "b")
	// Unfenced records while b holds the lease: refused as Append refuses.
	err = re.EndRun(ctx, &store.RunEnd{Thread: "er", Records: []*store.Record{fenced("er", 5, 0)}, Answered: []string{"q1"}})
	wantLeaseErr(t, "EndRun with unfenced records while the lease is held", err, store.ErrLeaseHeld, "er", "b")
	wantRecords(t, "after EndRun under a stale fence", s, "er", log)
	if got := pendingIDs(t, s, "er"); !slices.Equal(got, []string{"q1"}) {
		t.Errorf("pending after EndRun under a stale fence: %v, want [q1]", got)
	}
	if r, err := s.Run(ctx, "r1"); err != nil || r.Status != store.Waiting {
		t.Errorf("Run(r1) after EndRun under a stale fence = %+v, %v; want waiting", r, err)
	}

	// The records of a missing thread; records of another thread.
	wantNotFound(t, "EndRun with records of a missing thread", re.EndRun(ctx, &store.RunEnd{Thread: "nope", Records: []*store.Record{fenced("nope", 1, 0)}}))
	if err := re.EndRun(ctx, &store.RunEnd{Thread: "er", Records: []*store.Record{fenced("other", 5, l2.Fence)}}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("EndRun with a record of another thread: %v, want ErrInvalid", err)
	}
	wantRecords(t, "after refused EndRuns", s, "er", log)
}

// testEndRunJob checks a RunEnd's Job: the job's status changed after
// the run's row, as SetJob changes it, in the same transaction; a job
// missing or not in From is left as it is (Done false, not an error).
func testEndRunJob(t *testing.T, s store.Store) {
	re, ok := s.(store.RunEnder)
	if !ok {
		t.Skip("the store is not a store.RunEnder")
	}
	js := jobsOf(t, s)
	ls := leaser(t, s)
	ctx := t.Context()
	mustThread(t, s, "ej", base())
	mkJob := func(id string, st store.JobStatus) {
		t.Helper()
		j := &store.Job{ID: id, ThreadID: "ej", Assistant: "IntentQA", Strategy: "enqueue", Status: st, Run: "r0", Error: "", Created: base(), Updated: base()}
		if err := js.CreateJob(ctx, j); err != nil {
			t.Fatalf("CreateJob(%s): %v", id, err)
		}
	}
	// wantJob checks a job's status, run, error, and whether Updated
	// moved from base() to about now.
	wantJob := func(what, id string, st store.JobStatus, run, errText string, moved bool) {
		t.Helper()
		j, err := js.Job(ctx, id)
		if err != nil {
			t.Errorf("%s: Job(%s): %v", what, id, err)
			return
		}
		now := time.Since(j.Updated).Abs() < clockSlack
		if j.Status != st || j.Run != run || j.Error != errText || (moved && !now) || (!moved && !sameTime(j.Updated, base())) {
			t.Errorf("%s: job %s = %+v; want status %s, run %s, error %q, updated now: %v", what, id, j, st, run, errText, moved)
		}
	}
	mkJob("j1", store.JobRunning)
	mkJob("j2", store.JobError)
	mkJob("j3", store.JobRunning)
	l := mustClaim(t, ls, "ej", "a", longTTL)
	at := base().Add(time.Hour)
	run := func(id string, st store.Status, fence int64) *store.Run {
		return &store.Run{ID: id, ThreadID: "ej", Number: 1, Status: st, Error: "boom", Created: at, Updated: at, Fence: fence}
	}

	// Applied: running to error, with the run and the error text.
	jc := &store.JobChange{ID: "j1", From: []store.JobStatus{store.JobPending, store.JobRunning}, To: store.JobError, Run: "r1", Error: "boom"}
	if err := re.EndRun(ctx, &store.RunEnd{Thread: "ej", Run: run("r1", store.Failed, l.Fence), Job: jc}); err != nil {
		t.Fatalf("EndRun with a job change: %v", err)
	}
	if !jc.Done {
		t.Errorf("EndRun with a job change it made: Done false")
	}
	wantJob("EndRun's job change", "j1", store.JobError, "r1", "boom", true)
	if r, err := s.Run(ctx, "r1"); err != nil || r.Status != store.Failed {
		t.Errorf("Run(r1) = %+v, %v; want failed", r, err)
	}
	// Applied, keeping the run and the error when the change has none.
	jc = &store.JobChange{ID: "j3", From: []store.JobStatus{store.JobRunning}, To: store.JobSuccess}
	if err := re.EndRun(ctx, &store.RunEnd{Thread: "ej", Job: jc}); err != nil || !jc.Done {
		t.Errorf("EndRun with only a job change: %v, Done %v; want nil, true", err, jc.Done)
	}
	wantJob("EndRun's job change without run and error", "j3", store.JobSuccess, "r0", "", true)

	// Not applicable: a job whose status is not in From, a missing job.
	// Not an error; the rest is written.
	for name, id := range map[string]string{"not in from": "j2", "missing": "nope"} {
		jc := &store.JobChange{ID: id, From: []store.JobStatus{store.JobRunning}, To: store.JobSuccess, Run: "r2", Error: "x"}
		q := &store.Pending{ID: "q-" + id, ThreadID: "ej", RunID: "r2", Node: "ask", Question: []byte(`"?"`), Fence: l.Fence}
		if err := re.EndRun(ctx, &store.RunEnd{Thread: "ej", Pending: []*store.Pending{q}, Run: run("r2-"+id, store.Waiting, l.Fence), Job: jc}); err != nil {
			t.Errorf("EndRun with a job change to skip (%s): %v", name, err)
		}
		if jc.Done {
			t.Errorf("EndRun with a job change to skip (%s): Done true", name)
		}
		if r, err := s.Run(ctx, "r2-"+id); err != nil || r.Status != store.Waiting {
			t.Errorf("EndRun with a job change to skip (%s): Run = %+v, %v; want waiting", name, r, err)
		}
		if got := pendingIDs(t, s, "ej"); !slices.Contains(got, "q-"+id) {
			t.Errorf("EndRun with a job change to skip (%s): pending %v, want q-%s among them", name, got, id)
		}
	}
	wantJob("a job change skipped", "j2", store.JobError, "r0", "", false)
	if _, err := js.Job(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a skipped job change of a missing job created it: %v", err)
	}

	// The transaction fails after the job's change (the release of a
	// lost lease): Done stays false, the job unchanged.
	mkJob("j4", store.JobRunning)
	if err := re.EndRun(ctx, &store.RunEnd{Thread: "ej", Release: &l}); err != nil {
		t.Fatalf("EndRun releasing: %v", err)
	}
	l2 := mustClaim(t, ls, "ej", "b", longTTL)
	jc = &store.JobChange{ID: "j4", From: []store.JobStatus{store.JobRunning}, To: store.JobSuccess, Run: "r3", Error: "x"}
	err := re.EndRun(ctx, &store.RunEnd{Thread: "ej", Run: run("r3", store.Completed, l2.Fence), Job: jc, Release: &l})
	wantLeaseErr(t, "EndRun with a job change releasing a lost lease", err, store.ErrLeaseLost, "ej", "b")
	if jc.Done {
		t.Errorf("EndRun refused: Done true")
	}
	wantJob("EndRun refused", "j4", store.JobRunning, "r0", "", false)
	if _, err := s.Run(ctx, "r3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("EndRun refused wrote run r3: %v", err)
	}
	// And a wrong record Seq.
	err = re.EndRun(ctx, &store.RunEnd{Thread: "ej", Records: []*store.Record{fenced("ej", 7, l2.Fence)}, Job: jc})
	if !errors.Is(err, store.ErrConflict) || jc.Done {
		t.Errorf("EndRun with a job change and a wrong seq: %v, Done %v; want ErrConflict, false", err, jc.Done)
	}
	wantJob("EndRun refused at a wrong seq", "j4", store.JobRunning, "r0", "", false)

	// An invalid change: refused before anything.
	for name, j := range map[string]*store.JobChange{
		"no id":       {From: []store.JobStatus{store.JobRunning}, To: store.JobSuccess},
		"no from":     {ID: "j4", To: store.JobSuccess},
		"bad to":      {ID: "j4", From: []store.JobStatus{store.JobRunning}, To: "done"},
		"bad from":    {ID: "j4", From: []store.JobStatus{"queued"}, To: store.JobSuccess},
		"empty to":    {ID: "j4", From: []store.JobStatus{store.JobRunning}},
		"one bad of2": {ID: "j4", From: []store.JobStatus{store.JobRunning, "nope"}, To: store.JobSuccess},
	} {
		err := re.EndRun(ctx, &store.RunEnd{Thread: "ej", Run: run("r4", store.Completed, l2.Fence), Job: j})
		if !errors.Is(err, store.ErrInvalid) || j.Done {
			t.Errorf("EndRun with an invalid job change (%s): %v, Done %v; want ErrInvalid", name, err, j.Done)
		}
	}
	if _, err := s.Run(ctx, "r4"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("EndRun with an invalid job change wrote run r4: %v", err)
	}
	wantJob("EndRun with an invalid job change", "j4", store.JobRunning, "r0", "", false)
}
