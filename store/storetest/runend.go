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
