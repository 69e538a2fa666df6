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

// The RunEvents subtests check a store.RunEvents (skipped for a store
// that is not one).

func runEventsOf(t *testing.T, s store.Store) (store.RunEvents, store.Jobs) {
	t.Helper()
	re, ok := s.(store.RunEvents)
	if !ok {
		t.Skip("the store is not a store.RunEvents")
	}
	return re, jobsOf(t, s)
}

// evs returns events from to to of attempt att, with Data naming each.
func evs(att string, from, to int64) []*store.RunEvent {
	var out []*store.RunEvent
	for i := from; i <= to; i++ {
		out = append(out, &store.RunEvent{Seq: i, Attempt: att, N: i - from, Event: "values",
			Data: fmt.Appendf(nil, `{"attempt": %q, "seq": %d}`, att, i)})
	}
	return out
}

func evSeqs(es []*store.RunEvent) []int64 {
	out := []int64{}
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

func mustRunEvents(t *testing.T, re store.RunEvents, job string, after int64, limit int) []*store.RunEvent {
	t.Helper()
	got, err := re.RunEvents(t.Context(), job, after, limit)
	if err != nil {
		t.Fatalf("RunEvents(%s, %d, %d): %v", job, after, limit, err)
	}
	return got
}

func wantEvSeqs(t *testing.T, what string, got []*store.RunEvent, want ...int64) {
	t.Helper()
	if fmt.Sprint(evSeqs(got)) != fmt.Sprint(append([]int64{}, want...)) {
		t.Errorf("%s: seqs %v, want %v", what, evSeqs(got), want)
	}
}

// wantRunEventConflict checks that err is a *RunEventConflictError of
// job (ErrConflict); want and got are checked when not negative.
func wantRunEventConflict(t *testing.T, what string, err error, job string, want, got int64) {
	t.Helper()
	var ce *store.RunEventConflictError
	if !errors.Is(err, store.ErrConflict) || !errors.As(err, &ce) {
		t.Errorf("%s: got %v, want a *store.RunEventConflictError (store.ErrConflict)", what, err)
		return
	}
	if ce.Job != job || (want >= 0 && ce.Want != want) || (got >= 0 && ce.Got != got) {
		t.Errorf("%s: %+v, want job %s, want %d, got %d", what, ce, job, want, got)
	}
}

// testRunEventsAppend: seqs from 1, Time filled in and written back or
// kept, every field read back byte for byte, reads after a Seq and
// limited, copies returned.
func testRunEventsAppend(t *testing.T, s store.Store) {
	re, js := runEventsOf(t, s)
	ctx := t.Context()
	mustThread(t, s, "t1", base())
	mustJob(t, js, "j1", "t1", 0)
	mustJob(t, js, "j2", "t1", 1)
	if got := mustRunEvents(t, re, "j1", 0, 0); len(got) != 0 {
		t.Errorf("RunEvents of a new job: %v, want none", evSeqs(got))
	}
	before := time.Now()
	raw := []byte("\x00\xff{\"a\":  1.50}\n\xc3(")
	first := []*store.RunEvent{
		{Seq: 1, Attempt: "epoch-1", N: 0, Event: "metadata", Data: []byte(`{"run_id":"j1"}`)},
		{Seq: 2, Attempt: "epoch-1", N: 1, Event: "values", Data: raw},
		{Seq: 3, Attempt: "epoch-1", N: 2, Event: "end"}, // no data
	}
	if err := re.AppendRunEvents(ctx, "j1", first); err != nil {
		t.Fatalf("AppendRunEvents: %v", err)
	}
	for _, e := range first {
		if e.Time.IsZero() || e.Time.Before(before.Add(-clockSlack)) || e.Time.After(time.Now().Add(clockSlack)) {
			t.Errorf("event %d: Time written back %v, want the store's time (about %v)", e.Seq, e.Time, before)
		}
	}
	at := base().Add(time.Hour)
	second := []*store.RunEvent{
		{Seq: 4, Attempt: "epoch-2", N: 0, Event: "values", Data: []byte(`{}`), Time: at},
		{Seq: 5, Attempt: "", N: 7, Event: "updates|sub:1", Data: []byte(`[1, 2]`)},
	}
	if err := re.AppendRunEvents(ctx, "j1", second); err != nil {
		t.Fatalf("AppendRunEvents (second batch): %v", err)
	}
	if !second[0].Time.Equal(at) {
		t.Errorf("a Time given was changed to %v, want %v", second[0].Time, at)
	}
	if err := re.AppendRunEvents(ctx, "j1", nil); err != nil {
		t.Errorf("AppendRunEvents of no event: %v", err)
	}
	// Another job numbers its own from 1.
	if err := re.AppendRunEvents(ctx, "j2", evs("x", 1, 2)); err != nil {
		t.Fatalf("AppendRunEvents(j2): %v", err)
	}

	want := append(append([]*store.RunEvent{}, first...), second...)
	got := mustRunEvents(t, re, "j1", 0, 0)
	if len(got) != len(want) {
		t.Fatalf("RunEvents(j1) = %v, want %v", evSeqs(got), evSeqs(want))
	}
	for i, g := range got {
		w := want[i]
		if g.Seq != w.Seq || g.Attempt != w.Attempt || g.N != w.N || g.Event != w.Event || !bytes.Equal(g.Data, w.Data) || !sameTime(g.Time, w.Time) {
			t.Errorf("event %d read back %+v (data %q), want %+v (data %q)", i, g, g.Data, w, w.Data)
		}
	}
	wantEvSeqs(t, "RunEvents(j1, after 2)", mustRunEvents(t, re, "j1", 2, 0), 3, 4, 5)
	wantEvSeqs(t, "RunEvents(j1, after 1, limit 2)", mustRunEvents(t, re, "j1", 1, 2), 2, 3)
	wantEvSeqs(t, "RunEvents(j1, after 4, limit 9)", mustRunEvents(t, re, "j1", 4, 9), 5)
	wantEvSeqs(t, "RunEvents(j1, after 5)", mustRunEvents(t, re, "j1", 5, 0))
	wantEvSeqs(t, "RunEvents(j1, after 99)", mustRunEvents(t, re, "j1", 99, 0))
	wantEvSeqs(t, "RunEvents(j2)", mustRunEvents(t, re, "j2", 0, 0), 1, 2)
	if got := mustRunEvents(t, re, "j2", 1, 1); len(got) != 1 || string(got[0].Data) != `{"attempt": "x", "seq": 2}` {
		t.Errorf("RunEvents(j2, after 1) = %+v, want event 2 of j2", got)
	}

	// The events returned are copies.
	got[1].Data[2] = 'X'
	if again := mustRunEvents(t, re, "j1", 1, 1); len(again) != 1 || !bytes.Equal(again[0].Data, raw) {
		t.Errorf("event 2 after changing a returned copy: %+v", again)
	}
	// WaitRunEvents with events to give returns them at once.
	start := time.Now()
	w, err := re.WaitRunEvents(ctx, "j1", 3, 1)
	if err != nil || fmt.Sprint(evSeqs(w)) != "[4]" || time.Since(start) > 500*time.Millisecond {
		t.Errorf("WaitRunEvents(j1, after 3, limit 1) = %v, %v after %v; want [4] at once", evSeqs(w), err, time.Since(start))
	}
}

// testRunEventsRefused: a Seq that is not the next (a gap, a repeat, out
// of order in a batch) is a conflict, an invalid event or limit
// ErrInvalid, a missing job ErrNotFound; a refused append writes nothing.
func testRunEventsRefused(t *testing.T, s store.Store) {
	re, js := runEventsOf(t, s)
	ctx := t.Context()
	mustThread(t, s, "t1", base())
	mustJob(t, js, "j1", "t1", 0)
	mustJob(t, js, "j0", "t1", 0)
	wantRunEventConflict(t, "first append at seq 2", re.AppendRunEvents(ctx, "j0", evs("a", 2, 3)), "j0", 2, 0)
	if err := re.AppendRunEvents(ctx, "j1", evs("a", 1, 3)); err != nil {
		t.Fatal(err)
	}
	wantRunEventConflict(t, "a gap", re.AppendRunEvents(ctx, "j1", evs("b", 5, 6)), "j1", 5, 3)
	wantRunEventConflict(t, "a repeat", re.AppendRunEvents(ctx, "j1", evs("b", 3, 4)), "j1", 3, 3)
	wantRunEventConflict(t, "a rewrite", re.AppendRunEvents(ctx, "j1", evs("b", 1, 1)), "j1", 1, 3)
	gap := evs("b", 4, 6)
	gap[2].Seq = 7
	wantRunEventConflict(t, "a gap in a batch", re.AppendRunEvents(ctx, "j1", gap), "j1", -1, -1)
	swapped := evs("b", 4, 6)
	swapped[1], swapped[2] = swapped[2], swapped[1]
	wantRunEventConflict(t, "out of order in a batch", re.AppendRunEvents(ctx, "j1", swapped), "j1", -1, -1)
	twice := evs("b", 4, 5)
	twice = append(twice, &store.RunEvent{Seq: 5, Event: "values"})
	wantRunEventConflict(t, "a repeat in a batch", re.AppendRunEvents(ctx, "j1", twice), "j1", -1, -1)

	// Each invalid event alone, and after a valid one (seq 4): nothing
	// written. An invalid Seq is ErrInvalid, not a conflict.
	for name, bad := range map[string]func(seq int64) *store.RunEvent{
		"nil":        func(int64) *store.RunEvent { return nil },
		"seq 0":      func(int64) *store.RunEvent { return &store.RunEvent{Seq: 0, Event: "values"} },
		"seq -1":     func(int64) *store.RunEvent { return &store.RunEvent{Seq: -1, Event: "values"} },
		"no event":   func(seq int64) *store.RunEvent { return &store.RunEvent{Seq: seq} },
		"negative n": func(seq int64) *store.RunEvent { return &store.RunEvent{Seq: seq, Event: "values", N: -1} },
	} {
		if err := re.AppendRunEvents(ctx, "j1", []*store.RunEvent{bad(4)}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AppendRunEvents (%s): %v, want ErrInvalid", name, err)
		}
		if err := re.AppendRunEvents(ctx, "j1", []*store.RunEvent{{Seq: 4, Event: "values"}, bad(5)}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AppendRunEvents (a valid event, then %s): %v, want ErrInvalid", name, err)
		}
	}
	wantEvSeqs(t, "RunEvents after refused appends", mustRunEvents(t, re, "j1", 0, 0), 1, 2, 3)
	wantEvSeqs(t, "RunEvents(j0) after a refused append", mustRunEvents(t, re, "j0", 0, 0))
	if got := mustRunEvents(t, re, "j1", 0, 0); got[2].Attempt != "a" {
		t.Errorf("event 3 after refused appends: %+v, want attempt a's", got[2])
	}
	// The next one is still accepted.
	if err := re.AppendRunEvents(ctx, "j1", evs("b", 4, 4)); err != nil {
		t.Errorf("AppendRunEvents at the next seq after refusals: %v", err)
	}

	wantNotFound(t, "AppendRunEvents to a missing job", re.AppendRunEvents(ctx, "nope", evs("a", 1, 1)))
	_, err := re.RunEvents(ctx, "nope", 0, 0)
	wantNotFound(t, "RunEvents of a missing job", err)
	_, err = re.WaitRunEvents(ctx, "nope", 0, 0)
	wantNotFound(t, "WaitRunEvents of a missing job", err)
	if _, err := re.RunEvents(ctx, "j1", 0, -1); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("RunEvents with limit -1: %v, want ErrInvalid", err)
	}
	if _, err := re.WaitRunEvents(ctx, "j1", 0, -1); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("WaitRunEvents with limit -1: %v, want ErrInvalid", err)
	}
}

// testRunEventsConcurrent: appenders racing at one Seq: one wins, the
// others get a conflict, and the stream is the winner's.
func testRunEventsConcurrent(t *testing.T, s store.Store) {
	re, js := runEventsOf(t, s)
	mustThread(t, s, "t1", base())
	mustJob(t, js, "j1", "t1", 0)
	const n = 8
	for round := range 3 {
		from := int64(round*2 + 1)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				errs[i] = re.AppendRunEvents(t.Context(), "j1", evs(fmt.Sprint("w", i), from, from+1))
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: appenders %d and %d both appended at seq %d", round, winner, i, from)
			case err == nil:
				winner = i
			default:
				wantRunEventConflict(t, fmt.Sprintf("round %d, appender %d", round, i), err, "j1", from, -1)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no appender won: %v", round, errs)
		}
		got := mustRunEvents(t, re, "j1", from-1, 0)
		if len(got) != 2 || got[0].Attempt != fmt.Sprint("w", winner) || got[1].Attempt != got[0].Attempt {
			t.Errorf("round %d: events %+v, want 2 of winner w%d", round, got, winner)
		}
	}
}

// testRunEventsWait: WaitRunEvents blocks until an append from another
// goroutine, returns ctx's error when it ends, and ErrNotFound when the
// job is deleted while it waits.
func testRunEventsWait(t *testing.T, s store.Store) {
	re, js := runEventsOf(t, s)
	ctx := t.Context()
	mustThread(t, s, "t1", base())
	mustJob(t, js, "j1", "t1", 0)
	mustJob(t, js, "j2", "t1", 0)
	if err := re.AppendRunEvents(ctx, "j1", evs("a", 1, 2)); err != nil {
		t.Fatal(err)
	}
	type result struct {
		evs []*store.RunEvent
		err error
		at  time.Time
	}
	wait := func(ctx context.Context, job string, after int64, limit int) <-chan result {
		ch := make(chan result, 1)
		go func() {
			es, err := re.WaitRunEvents(ctx, job, after, limit)
			ch <- result{es, err, time.Now()}
		}()
		return ch
	}
	const bound = 2 * time.Second
	for round := range 3 {
		after := int64(2 + round*2)
		ch := wait(ctx, "j1", after, 0)
		select {
		case r := <-ch:
			t.Fatalf("round %d: WaitRunEvents returned %v, %v with no event to give", round, evSeqs(r.evs), r.err)
		case <-time.After(150 * time.Millisecond):
		}
		appended := time.Now()
		if err := re.AppendRunEvents(ctx, "j1", evs("b", after+1, after+2)); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-ch:
			if r.err != nil || len(r.evs) == 0 || r.evs[0].Seq != after+1 || r.evs[0].Attempt != "b" {
				t.Errorf("round %d: WaitRunEvents = %+v, %v; want event %d of attempt b first", round, r.evs, r.err, after+1)
			}
			if len(r.evs) == 2 && r.evs[1].Seq != after+2 {
				t.Errorf("round %d: WaitRunEvents = %v", round, evSeqs(r.evs))
			}
			t.Logf("round %d: woken %v after the append", round, r.at.Sub(appended))
		case <-time.After(bound):
			t.Fatalf("round %d: WaitRunEvents not woken %v after an append", round, bound)
		}
	}
	// A waiter on another job is not woken by j1's appends.
	other := wait(ctx, "j2", 0, 0)
	if err := re.AppendRunEvents(ctx, "j1", evs("c", 9, 9)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-other:
		t.Fatalf("WaitRunEvents(j2) returned %v, %v on an append to j1", evSeqs(r.evs), r.err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := re.AppendRunEvents(ctx, "j2", evs("d", 1, 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-other:
		if r.err != nil || fmt.Sprint(evSeqs(r.evs)) != "[1]" {
			t.Errorf("WaitRunEvents(j2) = %v, %v; want [1]", evSeqs(r.evs), r.err)
		}
	case <-time.After(bound):
		t.Fatalf("WaitRunEvents(j2) not woken %v after an append", bound)
	}

	// Cancel and deadline: ctx's error.
	cctx, cancel := context.WithCancel(ctx)
	ch := wait(cctx, "j1", 9, 0)
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case r := <-ch:
		if !errors.Is(r.err, context.Canceled) || len(r.evs) != 0 {
			t.Errorf("WaitRunEvents canceled = %v, %v; want context.Canceled", evSeqs(r.evs), r.err)
		}
	case <-time.After(bound):
		t.Fatalf("WaitRunEvents not returned %v after its context was canceled", bound)
	}
	dctx, dcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer dcancel()
	if got, err := re.WaitRunEvents(dctx, "j1", 9, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitRunEvents past its deadline = %v, %v; want context.DeadlineExceeded", evSeqs(got), err)
	}

	// The job deleted while a waiter waits: ErrNotFound.
	ch = wait(ctx, "j2", 1, 0)
	time.Sleep(100 * time.Millisecond)
	if err := js.DeleteJob(ctx, "j2"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		wantNotFound(t, "WaitRunEvents of a job deleted while waiting", r.err)
	case <-time.After(bound):
		t.Fatalf("WaitRunEvents not returned %v after its job was deleted", bound)
	}
}

// testRunEventsPrune: only the events of ended jobs last updated before
// the bound go.
func testRunEventsPrune(t *testing.T, s store.Store) {
	re, js := runEventsOf(t, s)
	ctx := t.Context()
	mustThread(t, s, "t1", base())
	for i, id := range []string{"done", "failed", "running", "pending", "empty"} {
		mustJob(t, js, id, "t1", i)
		if id != "empty" {
			if err := re.AppendRunEvents(ctx, id, evs(id, 1, int64(i+2))); err != nil {
				t.Fatal(err)
			}
		}
	}
	set := func(id string, to store.JobStatus) {
		t.Helper()
		if _, err := js.SetJob(ctx, id, []store.JobStatus{store.JobPending, store.JobRunning}, to, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	set("running", store.JobRunning)
	set("done", store.JobRunning)
	set("done", store.JobSuccess)
	set("failed", store.JobError)
	set("empty", store.JobSuccess)
	// Ended now: not before an hour ago.
	if n, err := re.PruneRunEvents(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("PruneRunEvents(an hour ago) = %d, %v; want 0", n, err)
	}
	wantEvSeqs(t, "done after a prune before it ended", mustRunEvents(t, re, "done", 0, 0), 1, 2)
	if n, err := re.PruneRunEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 2+3 {
		t.Errorf("PruneRunEvents(in an hour) = %d, %v; want 5 (done's 2, failed's 3)", n, err)
	}
	wantEvSeqs(t, "done after the prune", mustRunEvents(t, re, "done", 0, 0))
	wantEvSeqs(t, "failed after the prune", mustRunEvents(t, re, "failed", 0, 0))
	wantEvSeqs(t, "running after the prune", mustRunEvents(t, re, "running", 0, 0), 1, 2, 3, 4)
	wantEvSeqs(t, "pending after the prune", mustRunEvents(t, re, "pending", 0, 0), 1, 2, 3, 4, 5)
	if j, err := js.Job(ctx, "done"); err != nil || j.Status != store.JobSuccess {
		t.Errorf("Job(done) after the prune = %+v, %v; want it kept", j, err)
	}
	if n, err := re.PruneRunEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("PruneRunEvents again = %d, %v; want 0", n, err)
	}
}

// testRunEventsDelete: DeleteJob and DeleteThread delete the events; a
// job re-created with the same ID starts from none.
func testRunEventsDelete(t *testing.T, s store.Store) {
	re, js := runEventsOf(t, s)
	ctx := t.Context()
	mustThread(t, s, "t1", base())
	mustThread(t, s, "t2", base())
	mustJob(t, js, "j1", "t1", 0)
	mustJob(t, js, "j2", "t2", 0)
	mustJob(t, js, "keep", "t1", 0)
	for _, id := range []string{"j1", "j2", "keep"} {
		if err := re.AppendRunEvents(ctx, id, evs(id, 1, 3)); err != nil {
			t.Fatal(err)
		}
	}
	if err := js.DeleteJob(ctx, "j1"); err != nil {
		t.Fatal(err)
	}
	_, err := re.RunEvents(ctx, "j1", 0, 0)
	wantNotFound(t, "RunEvents of a deleted job", err)
	mustJob(t, js, "j1", "t1", 1)
	wantEvSeqs(t, "RunEvents of a job re-created after DeleteJob", mustRunEvents(t, re, "j1", 0, 0))
	if err := re.AppendRunEvents(ctx, "j1", evs("new", 1, 1)); err != nil {
		t.Errorf("AppendRunEvents at seq 1 of a re-created job: %v", err)
	}

	if err := s.DeleteThread(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	_, err = re.RunEvents(ctx, "j2", 0, 0)
	wantNotFound(t, "RunEvents of a job of a deleted thread", err)
	mustThread(t, s, "t2", base())
	mustJob(t, js, "j2", "t2", 1)
	wantEvSeqs(t, "RunEvents of a job re-created after DeleteThread", mustRunEvents(t, re, "j2", 0, 0))
	wantEvSeqs(t, "RunEvents of a job not deleted", mustRunEvents(t, re, "keep", 0, 0), 1, 2, 3)
}

// RunEventsAcross checks that appends through store a wake a
// WaitRunEvents on store b, two stores opened on one database (as two
// processes would), within bound each time; it returns the slowest wake.
// Both must be store.RunEvents and store.Jobs.
func RunEventsAcross(t *testing.T, a, b store.Store, bound time.Duration) time.Duration {
	t.Helper()
	ra, js := runEventsOf(t, a)
	rb, _ := runEventsOf(t, b)
	ctx := t.Context()
	mustThread(t, a, "across", base())
	mustJob(t, js, "across-1", "across", 0)
	var slowest time.Duration
	for round := range 5 {
		after := int64(round)
		type result struct {
			evs []*store.RunEvent
			err error
			at  time.Time
		}
		ch := make(chan result, 1)
		go func() {
			es, err := rb.WaitRunEvents(ctx, "across-1", after, 0)
			ch <- result{es, err, time.Now()}
		}()
		select {
		case r := <-ch:
			t.Fatalf("round %d: WaitRunEvents on b returned %v, %v with no event to give", round, evSeqs(r.evs), r.err)
		case <-time.After(time.Duration(100+round*137) * time.Millisecond):
		}
		appended := time.Now()
		if err := ra.AppendRunEvents(ctx, "across-1", evs("a", after+1, after+1)); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-ch:
			took := r.at.Sub(appended)
			slowest = max(slowest, took)
			if r.err != nil || fmt.Sprint(evSeqs(r.evs)) != fmt.Sprint([]int64{after + 1}) {
				t.Errorf("round %d: WaitRunEvents on b = %v, %v; want [%d]", round, evSeqs(r.evs), r.err, after+1)
			}
			if took > bound {
				t.Errorf("round %d: WaitRunEvents on b woken %v after the append on a, want at most %v", round, took, bound)
			}
		case <-time.After(bound + 2*time.Second):
			t.Fatalf("round %d: WaitRunEvents on b not woken %v after an append on a", round, bound+2*time.Second)
		}
	}
	t.Logf("slowest wake across stores: %v", slowest)
	return slowest
}
