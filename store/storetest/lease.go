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

// Lease TTLs: long enough never to run out during a check that needs the
// lease held, and short ones that the suite sleeps past.
const (
	longTTL  = time.Minute
	shortTTL = 50 * time.Millisecond
)

// clockSlack is how far the store's clock (PostgreSQL's, for one) may be
// from the test's.
const clockSlack = 5 * time.Second

func leaser(t *testing.T, s store.Store) store.Leaser {
	t.Helper()
	l, ok := s.(store.Leaser)
	if !ok {
		t.Skip("the store is not a store.Leaser")
	}
	return l
}

func mustClaim(t *testing.T, ls store.Leaser, thread, owner string, ttl time.Duration) store.Lease {
	t.Helper()
	before := time.Now()
	l, err := ls.Claim(t.Context(), thread, owner, ttl)
	if err != nil {
		t.Fatalf("Claim(%s, %s): %v", thread, owner, err)
	}
	if l.Thread != thread || l.Owner != owner || l.Fence < 1 {
		t.Fatalf("Claim(%s, %s) = %+v", thread, owner, l)
	}
	if l.Expires.Before(before.Add(ttl-clockSlack)) || l.Expires.After(time.Now().Add(ttl+clockSlack)) {
		t.Errorf("Claim(%s, %s, %v): expires %v, want about %v", thread, owner, ttl, l.Expires, before.Add(ttl))
	}
	return l
}

// mustShorten makes l expire shortTTL from now, with a Heartbeat (so
// that what the test did under l before could not have been late).
func mustShorten(t *testing.T, ls store.Leaser, l store.Lease) store.Lease {
	t.Helper()
	h, err := ls.Heartbeat(t.Context(), l, shortTTL)
	if err != nil {
		t.Fatalf("Heartbeat(%+v, %v): %v", l, shortTTL, err)
	}
	return h
}

// wantLeaseErr checks that err is a *LeaseError wrapping want for thread,
// naming holder (empty: none held).
func wantLeaseErr(t *testing.T, what string, err, want error, thread, holder string) *store.LeaseError {
	t.Helper()
	var le *store.LeaseError
	if !errors.Is(err, want) || !errors.As(err, &le) {
		t.Errorf("%s: got %v, want a *store.LeaseError wrapping %v", what, err, want)
		return &store.LeaseError{}
	}
	if le.Thread != thread || le.Holder != holder {
		t.Errorf("%s: %+v, want thread %s held by %q", what, le, thread, holder)
	}
	return le
}

// fenced returns a record of thread at seq written under fence.
func fenced(thread string, seq, fence int64) *store.Record {
	r := rec(thread, "r", seq, int(seq), store.Step)
	r.Fence = fence
	return r
}

// sameLog checks that the thread's log is still want, record by record.
func sameLog(t *testing.T, s store.Store, thread, what string, want []*store.Record) {
	t.Helper()
	got := mustRecords(t, s, thread, 1)
	if len(got) != len(want) {
		t.Errorf("%s: the log has records %v, want %v", what, seqs(got), seqs(want))
		return
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Seq != w.Seq || g.Fence != w.Fence || !bytes.Equal(g.Data, w.Data) || !g.Time.Equal(w.Time) {
			t.Errorf("%s: record %d is %+v, want %+v", what, w.Seq, g, w)
		}
	}
}

// testLeaseLifecycle: claim, fenced appends, heartbeat, release; a
// released lease is lost, unfenced appends wait for no lease, and fences
// only grow.
func testLeaseLifecycle(t *testing.T, s store.Store) {
	ls := leaser(t, s)
	ctx := t.Context()
	mustThread(t, s, "t", base())
	l := mustClaim(t, ls, "t", "A", longTTL)
	mustAppend(t, s, fenced("t", 1, l.Fence), fenced("t", 2, l.Fence))

	// No unfenced write while the lease is held.
	before := mustRecords(t, s, "t", 1)
	le := wantLeaseErr(t, "unfenced Append while leased", s.Append(ctx, fenced("t", 3, 0)), store.ErrLeaseHeld, "t", "A")
	if le.HolderFence != l.Fence || le.Fence != 0 || !le.Expires.Equal(l.Expires) || le.Op != "append" {
		t.Errorf("unfenced Append while leased: %+v, want holder fence %d until %v, op append", le, l.Fence, l.Expires)
	}
	sameLog(t, s, "t", "after a refused unfenced Append", before)
	for _, r := range before {
		if r.Fence != l.Fence {
			t.Errorf("record %d reads back with fence %d, written with %d", r.Seq, r.Fence, l.Fence)
		}
	}

	time.Sleep(2 * time.Millisecond)
	h, err := ls.Heartbeat(ctx, l, 2*longTTL)
	if err != nil {
		t.Fatalf("Heartbeat: %v", err)
	}
	if h.Fence != l.Fence || h.Owner != "A" || h.Thread != "t" || !h.Expires.After(l.Expires) {
		t.Errorf("Heartbeat(%+v) = %+v, want the same fence, later expiry", l, h)
	}
	mustAppend(t, s, fenced("t", 3, h.Fence))
	if err := ls.Release(ctx, h); err != nil {
		t.Fatalf("Release: %v", err)
	}

	// Released: lost to its holder, free for everyone else.
	wantLeaseErr(t, "Release again", ls.Release(ctx, h), store.ErrLeaseLost, "t", "")
	_, err = ls.Heartbeat(ctx, h, longTTL)
	wantLeaseErr(t, "Heartbeat after Release", err, store.ErrLeaseLost, "t", "")
	before = mustRecords(t, s, "t", 1)
	le = wantLeaseErr(t, "Append with a released fence", s.Append(ctx, fenced("t", 4, h.Fence)), store.ErrLeaseLost, "t", "")
	if le.Fence != h.Fence || le.HolderFence != h.Fence || !le.Expires.IsZero() || le.Op != "append" {
		t.Errorf("Append with a released fence: %+v, want fence %d, holder fence %d, no expiry, op append", le, h.Fence, h.Fence)
	}
	sameLog(t, s, "t", "after a refused Append", before)
	mustAppend(t, s, fenced("t", 4, 0))
	if got := mustRecords(t, s, "t", 4); len(got) != 1 || got[0].Fence != 0 {
		t.Errorf("unfenced record reads back as %+v, want fence 0", got)
	}

	// Fences only grow, across Release.
	l2 := mustClaim(t, ls, "t", "B", longTTL)
	if l2.Fence != l.Fence+1 {
		t.Errorf("claim after release: fence %d, want %d", l2.Fence, l.Fence+1)
	}
	if err := ls.Release(ctx, l2); err != nil {
		t.Fatal(err)
	}
	if l3 := mustClaim(t, ls, "t", "A", longTTL); l3.Fence != l2.Fence+1 {
		t.Errorf("third claim: fence %d, want %d", l3.Fence, l2.Fence+1)
	}
}

// testLeaseSecondOwner: a live lease refuses every other claim (and a
// second claim by its owner); after expiry another owner wins with a
// higher fence, and the old holder can neither write, heartbeat nor
// release.
func testLeaseSecondOwner(t *testing.T, s store.Store) {
	ls := leaser(t, s)
	ctx := t.Context()
	mustThread(t, s, "t", base())
	a := mustClaim(t, ls, "t", "A", longTTL)
	for _, owner := range []string{"B", "A"} {
		_, err := ls.Claim(ctx, "t", owner, longTTL)
		le := wantLeaseErr(t, "Claim by "+owner+" while A holds the lease", err, store.ErrLeaseHeld, "t", "A")
		if le.HolderFence != a.Fence || !le.Expires.Equal(a.Expires) || le.Op != "claim" {
			t.Errorf("Claim by %s: %+v, want A's fence %d until %v", owner, le, a.Fence, a.Expires)
		}
	}
	mustAppend(t, s, fenced("t", 1, a.Fence))

	// A short lease that runs out.
	mustThread(t, s, "u", base())
	old := mustClaim(t, ls, "u", "A", longTTL)
	mustAppend(t, s, fenced("u", 1, old.Fence))
	old = mustShorten(t, ls, old)
	time.Sleep(2 * shortTTL)
	b := mustClaim(t, ls, "u", "B", longTTL)
	if b.Fence != old.Fence+1 {
		t.Errorf("claim after expiry: fence %d, want %d", b.Fence, old.Fence+1)
	}
	before := mustRecords(t, s, "u", 1)
	le := wantLeaseErr(t, "Append by the expired holder", s.Append(ctx, fenced("u", 2, old.Fence), fenced("u", 3, old.Fence)), store.ErrLeaseLost, "u", "B")
	if le.Fence != old.Fence || le.HolderFence != b.Fence || !le.Expires.Equal(b.Expires) || le.Op != "append" {
		t.Errorf("Append by the expired holder: %+v, want fence %d, holder fence %d until %v, op append", le, old.Fence, b.Fence, b.Expires)
	}
	sameLog(t, s, "u", "after the expired holder's Append", before)
	_, err := ls.Heartbeat(ctx, old, longTTL)
	wantLeaseErr(t, "Heartbeat by the expired holder", err, store.ErrLeaseLost, "u", "B")
	wantLeaseErr(t, "Release by a non-holder", ls.Release(ctx, old), store.ErrLeaseLost, "u", "B")
	// A lease made up with B's fence but another owner is not B's.
	forged := b
	forged.Owner = "A"
	wantLeaseErr(t, "Release by another owner with the holder's fence", ls.Release(ctx, forged), store.ErrLeaseLost, "u", "B")
	_, err = ls.Heartbeat(ctx, forged, longTTL)
	wantLeaseErr(t, "Heartbeat by another owner with the holder's fence", err, store.ErrLeaseLost, "u", "B")
	// B still drives.
	mustAppend(t, s, fenced("u", 2, b.Fence))
	if _, err := ls.Heartbeat(ctx, b, longTTL); err != nil {
		t.Errorf("Heartbeat by the holder: %v", err)
	}
}

// testLeaseStalled: a driver whose lease expired, with nobody claiming
// since, is refused too: it wakes up late and writes nothing.
func testLeaseStalled(t *testing.T, s store.Store) {
	ls := leaser(t, s)
	ctx := t.Context()
	mustThread(t, s, "t", base())
	l := mustClaim(t, ls, "t", "A", longTTL)
	mustAppend(t, s, fenced("t", 1, l.Fence))
	l = mustShorten(t, ls, l)
	time.Sleep(2 * shortTTL)
	before := mustRecords(t, s, "t", 1)
	le := wantLeaseErr(t, "Append after expiry", s.Append(ctx, fenced("t", 2, l.Fence)), store.ErrLeaseLost, "t", "")
	if le.Fence != l.Fence || le.HolderFence != l.Fence || !le.Expires.IsZero() || le.Op != "append" {
		t.Errorf("Append after expiry: %+v, want fence %d, holder fence %d, no expiry, op append", le, l.Fence, l.Fence)
	}
	sameLog(t, s, "t", "after an Append past expiry", before)
	_, err := ls.Heartbeat(ctx, l, longTTL)
	wantLeaseErr(t, "Heartbeat after expiry", err, store.ErrLeaseLost, "t", "")
	if bw, ok := s.(store.BatchWriter); ok {
		run := &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: "completed", Created: base(), Updated: base()}
		err := bw.WriteBatch(ctx, &store.Batch{Records: []*store.Record{fenced("t", 2, l.Fence)}, Run: run})
		wantLeaseErr(t, "WriteBatch after expiry", err, store.ErrLeaseLost, "t", "")
		if _, err := s.Run(ctx, "r"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the run of a refused batch was written: %v", err)
		}
		sameLog(t, s, "t", "after a WriteBatch past expiry", before)
	}
	// The same driver claims again, with a new fence, and writes.
	l2 := mustClaim(t, ls, "t", "A", longTTL)
	if l2.Fence <= l.Fence {
		t.Errorf("claim after expiry: fence %d, want more than %d", l2.Fence, l.Fence)
	}
	mustAppend(t, s, fenced("t", 2, l2.Fence))
	if bw, ok := s.(store.BatchWriter); ok {
		if err := bw.WriteBatch(ctx, &store.Batch{Records: []*store.Record{fenced("t", 3, l2.Fence)}}); err != nil {
			t.Errorf("WriteBatch with the live fence: %v", err)
		}
		err := bw.WriteBatch(ctx, &store.Batch{Records: []*store.Record{fenced("t", 4, 0)}})
		wantLeaseErr(t, "unfenced WriteBatch while leased", err, store.ErrLeaseHeld, "t", "A")
	}
}

// testLeaseConcurrentClaims: N goroutines claim one thread at once;
// exactly one wins, the others are told who did.
func testLeaseConcurrentClaims(t *testing.T, s store.Store) {
	ls := leaser(t, s)
	const n = 16
	for round, thread := range []string{"fresh", "expired"} {
		mustThread(t, s, thread, base())
		var prev int64
		if round == 1 {
			prev = mustClaim(t, ls, thread, "old", shortTTL).Fence
			time.Sleep(2 * shortTTL)
		}
		var (
			wg     sync.WaitGroup
			start  = make(chan struct{})
			leases = make([]store.Lease, n)
			errs   = make([]error, n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				leases[i], errs[i] = ls.Claim(t.Context(), thread, fmt.Sprintf("o%d", i), longTTL)
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			if err == nil {
				if winner >= 0 {
					t.Errorf("%s: both o%d and o%d won the claim", thread, winner, i)
				}
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("%s: no claim won: %v", thread, errs)
		}
		w := leases[winner]
		if w.Owner != fmt.Sprintf("o%d", winner) || w.Fence != prev+1 || w.Thread != thread {
			t.Errorf("%s: winner's lease %+v, want owner o%d, fence %d", thread, w, winner, prev+1)
		}
		for i, err := range errs {
			if i == winner {
				continue
			}
			le := wantLeaseErr(t, fmt.Sprintf("%s: claim by o%d", thread, i), err, store.ErrLeaseHeld, thread, w.Owner)
			if le.HolderFence != w.Fence {
				t.Errorf("%s: claim by o%d names fence %d, the winner has %d", thread, i, le.HolderFence, w.Fence)
			}
		}
	}
}

// testLeaseInvalid: arguments, missing threads, deleted threads, canceled
// contexts.
func testLeaseInvalid(t *testing.T, s store.Store) {
	ls := leaser(t, s)
	ctx := t.Context()
	mustThread(t, s, "t", base())
	for _, c := range []struct {
		thread, owner string
		ttl           time.Duration
	}{{"", "A", longTTL}, {"t", "", longTTL}, {"t", "A", 0}, {"t", "A", -time.Second}} {
		if _, err := ls.Claim(ctx, c.thread, c.owner, c.ttl); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Claim(%q, %q, %v): got %v, want ErrInvalid", c.thread, c.owner, c.ttl, err)
		}
	}
	_, err := ls.Claim(ctx, "missing", "A", longTTL)
	wantNotFound(t, "Claim of a missing thread", err)
	l := mustClaim(t, ls, "t", "A", longTTL)
	if _, err := ls.Heartbeat(ctx, l, 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Heartbeat for 0: got %v, want ErrInvalid", err)
	}
	if err := s.Append(ctx, fenced("t", 1, l.Fence), fenced("t", 2, 0)); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Append of two fences in one batch: got %v, want ErrInvalid", err)
	}
	if err := s.Append(ctx, fenced("t", 1, -1)); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Append with a negative fence: got %v, want ErrInvalid", err)
	}
	wantNotFound(t, "fenced Append to a missing thread", s.Append(ctx, fenced("missing", 1, 1)))

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ls.Claim(canceled, "t", "B", longTTL); !errors.Is(err, context.Canceled) {
		t.Errorf("Claim with a canceled context: got %v, want context.Canceled", err)
	}
	if _, err := ls.Heartbeat(canceled, l, longTTL); !errors.Is(err, context.Canceled) {
		t.Errorf("Heartbeat with a canceled context: got %v, want context.Canceled", err)
	}
	if err := ls.Release(canceled, l); !errors.Is(err, context.Canceled) {
		t.Errorf("Release with a canceled context: got %v, want context.Canceled", err)
	}
	if _, err := ls.Heartbeat(ctx, l, longTTL); err != nil {
		t.Errorf("the lease after canceled calls: %v", err)
	}

	// The lease goes with its thread.
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	_, err = ls.Heartbeat(ctx, l, longTTL)
	wantNotFound(t, "Heartbeat on a deleted thread", err)
	wantNotFound(t, "Release on a deleted thread", ls.Release(ctx, l))
	mustThread(t, s, "t", base())
	mustClaim(t, ls, "t", "B", longTTL)
}

// testLeaseRunsAndPending: a run's row and a pending question are fenced
// as records are: a driver whose lease another owner took writes neither
// (ErrLeaseLost), a writer without a fence writes neither while a lease
// is held (ErrLeaseHeld), and the holder writes both.
func testLeaseRunsAndPending(t *testing.T, s store.Store) {
	ls := leaser(t, s)
	ctx := t.Context()
	mustThread(t, s, "t", base())
	a := mustClaim(t, ls, "t", "A", longTTL)
	run := &store.Run{ID: "r1", ThreadID: "t", Number: 1, Status: store.Running, Created: base(), Updated: base(), Fence: a.Fence}
	if err := s.PutRun(ctx, run); err != nil {
		t.Fatalf("PutRun by the holder: %v", err)
	}
	q := &store.Pending{ID: "q1", ThreadID: "t", RunID: "r1", Node: "ask", Question: []byte(`"?"`), Created: base(), Fence: a.Fence}
	if err := s.PutPending(ctx, q); err != nil {
		t.Fatalf("PutPending by the holder: %v", err)
	}
	a = mustShorten(t, ls, a)
	time.Sleep(2 * shortTTL)
	b := mustClaim(t, ls, "t", "B", longTTL)

	// A, whose lease B took, writes nothing.
	for _, c := range []struct {
		what string
		err  error
	}{
		{"PutRun of its run", s.PutRun(ctx, &store.Run{ID: "r1", ThreadID: "t", Number: 1, Status: store.Completed, Created: base(), Updated: base().Add(time.Second), Fence: a.Fence})},
		{"PutRun of a new run", s.PutRun(ctx, &store.Run{ID: "r2", ThreadID: "t", Number: 2, Status: store.Running, Fence: a.Fence})},
		{"PutPending of its question", s.PutPending(ctx, &store.Pending{ID: "q1", ThreadID: "t", RunID: "r1", Node: "other", Question: []byte(`"!"`), Fence: a.Fence})},
		{"PutPending of a new question", s.PutPending(ctx, &store.Pending{ID: "q2", ThreadID: "t", RunID: "r1", Node: "ask", Question: []byte(`"?"`), Fence: a.Fence})},
	} {
		le := wantLeaseErr(t, c.what+" by the expired holder", c.err, store.ErrLeaseLost, "t", "B")
		if le.Fence != a.Fence || le.HolderFence != b.Fence || !le.Expires.Equal(b.Expires) {
			t.Errorf("%s by the expired holder: %+v, want fence %d, holder fence %d until %v", c.what, le, a.Fence, b.Fence, b.Expires)
		}
	}
	// Nor does a writer without a fence while B holds the lease.
	wantLeaseErr(t, "unfenced PutRun while leased", s.PutRun(ctx, &store.Run{ID: "r1", ThreadID: "t", Number: 1, Status: store.Failed}), store.ErrLeaseHeld, "t", "B")
	wantLeaseErr(t, "unfenced PutPending while leased", s.PutPending(ctx, &store.Pending{ID: "q3", ThreadID: "t", RunID: "r1"}), store.ErrLeaseHeld, "t", "B")
	if got, err := s.Run(ctx, "r1"); err != nil || got.Status != store.Running || !got.Updated.Equal(base()) {
		t.Errorf("run r1 after refused writes: %+v, %v, want it running, updated %v", got, err, base())
	}
	if _, err := s.Run(ctx, "r2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused new run r2 was written: %v", err)
	}
	ps, err := s.Pending(ctx, "t")
	if err != nil || len(ps) != 1 || ps[0].ID != "q1" || ps[0].Node != "ask" || string(ps[0].Question) != `"?"` {
		t.Errorf("pending after refused writes: %v, %v, want only q1 as A put it", ps, err)
	}

	// B, the holder, writes both; once it released, so does anyone
	// without a fence, and B's fence no longer does.
	if err := s.PutRun(ctx, &store.Run{ID: "r1", ThreadID: "t", Number: 1, Status: store.Waiting, Fence: b.Fence}); err != nil {
		t.Errorf("PutRun by the holder: %v", err)
	}
	if err := s.PutPending(ctx, &store.Pending{ID: "q2", ThreadID: "t", RunID: "r1", Node: "ask", Fence: b.Fence}); err != nil {
		t.Errorf("PutPending by the holder: %v", err)
	}
	if err := ls.Release(ctx, b); err != nil {
		t.Fatal(err)
	}
	le := wantLeaseErr(t, "PutRun with a released fence", s.PutRun(ctx, &store.Run{ID: "r1", ThreadID: "t", Number: 1, Status: store.Completed, Fence: b.Fence}), store.ErrLeaseLost, "t", "")
	if le.Op != "put run" {
		t.Errorf("PutRun with a released fence: op %q, want %q", le.Op, "put run")
	}
	le = wantLeaseErr(t, "PutPending with a released fence", s.PutPending(ctx, &store.Pending{ID: "q4", ThreadID: "t", RunID: "r1", Fence: b.Fence}), store.ErrLeaseLost, "t", "")
	if le.Op != "put pending" {
		t.Errorf("PutPending with a released fence: op %q, want %q", le.Op, "put pending")
	}
	if err := s.PutRun(ctx, &store.Run{ID: "r1", ThreadID: "t", Number: 1, Status: store.Completed}); err != nil {
		t.Errorf("unfenced PutRun with no lease held: %v", err)
	}
	if err := s.PutPending(ctx, &store.Pending{ID: "q5", ThreadID: "t", RunID: "r1"}); err != nil {
		t.Errorf("unfenced PutPending with no lease held: %v", err)
	}
	if got, err := s.Run(ctx, "r1"); err != nil || got.Status != store.Completed {
		t.Errorf("run r1 at the end: %+v, %v, want completed", got, err)
	}
	// A missing thread is still ErrNotFound, fenced or not.
	wantNotFound(t, "fenced PutRun of a missing thread", s.PutRun(ctx, &store.Run{ID: "m", ThreadID: "missing", Number: 1, Status: store.Running, Fence: 1}))
	wantNotFound(t, "fenced PutPending of a missing thread", s.PutPending(ctx, &store.Pending{ID: "m", ThreadID: "missing", Fence: 1}))
}
