package engine_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// stalling wraps a Leaser store: while stalled, its Heartbeat fails as a
// transient error would, so the driver's lease runs out as a stalled
// process's does.
type stalling struct {
	store.Store
	mu      sync.Mutex
	stalled bool
}

func (s *stalling) stall() { s.mu.Lock(); s.stalled = true; s.mu.Unlock() }

func (s *stalling) Claim(ctx context.Context, thread, owner string, ttl time.Duration) (store.Lease, error) {
	return s.Store.(store.Leaser).Claim(ctx, thread, owner, ttl)
}

func (s *stalling) Heartbeat(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	s.mu.Lock()
	stalled := s.stalled
	s.mu.Unlock()
	if stalled {
		return l, errors.New("stalled")
	}
	return s.Store.(store.Leaser).Heartbeat(ctx, l, ttl)
}

func (s *stalling) Release(ctx context.Context, l store.Lease) error {
	return s.Store.(store.Leaser).Release(ctx, l)
}

// stallingBatches is stalling over a store.BatchWriter.
type stallingBatches struct{ *stalling }

func (s stallingBatches) WriteBatch(ctx context.Context, b *store.Batch) error {
	return s.Store.(store.BatchWriter).WriteBatch(ctx, b)
}

func stallable(st store.Store) (store.Store, *stalling) {
	s := &stalling{Store: st}
	if _, ok := st.(store.BatchWriter); ok {
		return stallingBatches{s}, s
	}
	return s, s
}

// blockingRunner's step action, at step block, says so on reached and
// waits for goOn (or the run's end).
func blockingRunner(block int64, reached chan<- struct{}, goOn <-chan struct{}) *engine.Runner {
	reg := engine.NewRegistry()
	reg.Register("step", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		i := c.Input("i").Int()
		if i == block {
			reached <- struct{}{}
			select {
			case <-goOn:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return c.SetOutput("v", flow.IntValue(i*i))
	}))
	return &engine.Runner{Registry: reg}
}

func records(t *testing.T, st store.Store, thread string) []*store.Record {
	t.Helper()
	recs, err := st.Records(context.Background(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// waitGoroutines waits (up to 2 s) for the number of goroutines to fall to
// n, and fails the test if it does not: a run leaves no goroutine behind.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestThreadLeaseOneDriver: while A drives a thread, B (another owner on
// the same store) is refused with store.ErrLeaseHeld and writes nothing;
// once A stalls past its lease, B takes the thread over and completes the
// run, and A, woken, fails at its next append with store.ErrLeaseLost and
// writes nothing more.
func TestThreadLeaseOneDriver(t *testing.T) {
	for _, d := range []engine.Durability{engine.Sync, engine.Async} {
		t.Run(d.String(), func(t *testing.T) {
			stores(t, func(t *testing.T, open func() store.Store) { leaseOneDriver(t, open, d) })
		})
	}
}

func leaseOneDriver(t *testing.T, open func() store.Store, d engine.Durability) {
	ctx := context.Background()
	plan := load(t, "loop.wf", loopWF)
	params := map[string]flow.Value{"n": flow.IntValue(8)}
	// The stores first: a SQLite store's connections have goroutines.
	stA, stall := stallable(open())
	st := open()
	goroutines := runtime.NumGoroutine()
	reached, goOn := make(chan struct{}, 1), make(chan struct{})
	a := &engine.Threads{Runner: blockingRunner(3, reached, goOn), Store: stA, Durability: d, Owner: "A", LeaseTTL: 300 * time.Millisecond}
	type out struct {
		res *engine.Result
		err error
	}
	aDone := make(chan out, 1)
	go func() {
		res, err := a.Run(ctx, plan, "t", params, nil, nil)
		aDone <- out{res, err}
	}()
	<-reached
	// A holds the thread, and keeps it past its TTL by its heartbeat.
	time.Sleep(450 * time.Millisecond)
	before := records(t, st, "t")
	b := &engine.Threads{Runner: stepRunner(new([]string), new(sync.Mutex), nil), Store: st, Durability: d, Owner: "B", LeaseTTL: time.Minute}
	if _, err := b.Resume(ctx, plan, "t", nil, nil); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("B resumes while A drives: %v; want store.ErrLeaseHeld", err)
	}
	if _, err := b.Run(ctx, plan, "t", params, nil, nil); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("B runs while A drives: %v; want store.ErrLeaseHeld", err)
	}
	var te *engine.ThreadError
	if _, err := b.Resume(ctx, plan, "t", nil, nil); !errors.As(err, &te) || te.Thread != "t" {
		t.Errorf("B's refusal is %T %v; want a *ThreadError of thread t", err, err)
	}
	if after := records(t, st, "t"); len(after) != len(before) {
		t.Fatalf("B's refused calls changed the log: %d records, then %d", len(before), len(after))
	}
	if len(before) == 0 || before[0].Fence == 0 {
		t.Fatalf("A's records carry no fence: %+v", before)
	}
	fenceA := before[0].Fence
	for _, r := range before {
		if r.Fence != fenceA {
			t.Errorf("A's record %d has fence %d, want %d", r.Seq, r.Fence, fenceA)
		}
	}

	// A stalls: its lease runs out, and B takes the thread over.
	stall.stall()
	time.Sleep(400 * time.Millisecond)
	res, err := b.Resume(ctx, plan, "t", nil, nil)
	if err != nil || res.Status != engine.Completed {
		t.Fatalf("B takes over: %v, %v", res, err)
	}
	var want int64
	for i := int64(0); i < 8; i++ {
		want += i * i
	}
	if acc := resultVar(t, res, "acc"); acc.Int() != want {
		t.Errorf("acc = %s, want %d", acc, want)
	}
	taken := records(t, st, "t")

	// A wakes: its step is refused, and it writes nothing more.
	close(goOn)
	o := <-aDone
	if !errors.Is(o.err, store.ErrLeaseLost) {
		t.Fatalf("A after the takeover: %v; want store.ErrLeaseLost", o.err)
	}
	final := records(t, st, "t")
	if len(final) != len(taken) {
		t.Fatalf("A wrote after it lost its lease: %d records, then %d", len(taken), len(final))
	}
	var fenceB int64
	for _, r := range final[len(before):] {
		if fenceB == 0 {
			fenceB = r.Fence
		}
		if r.Fence <= fenceA || r.Fence != fenceB {
			t.Errorf("record %d after the takeover has fence %d; want B's (%d, above A's %d)", r.Seq, r.Fence, fenceB, fenceA)
		}
	}
	ts, err := b.Load(ctx, "t")
	if err != nil || ts.Status() != engine.Completed {
		t.Fatalf("thread after both: %v, %v", ts, err)
	}
	if acc, _ := ts.Value("acc"); acc.Int() != want {
		t.Errorf("stored acc = %s, want %d", acc, want)
	}
	waitGoroutines(t, goroutines)
}

// TestThreadLeaseHeartbeat: a run longer than its lease's TTL keeps the
// lease by its heartbeat, writes every record under one fence, releases
// the lease at its end, and leaves no goroutine behind.
func TestThreadLeaseHeartbeat(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "loop.wf", loopWF)
		st := open()
		goroutines := runtime.NumGoroutine()
		slow := func(i int64) { time.Sleep(40 * time.Millisecond) }
		a := &engine.Threads{Runner: stepRunner(new([]string), new(sync.Mutex), slow), Store: st, Owner: "A", LeaseTTL: 150 * time.Millisecond}
		res, err := a.Run(ctx, plan, "t", map[string]flow.Value{"n": flow.IntValue(10)}, nil, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("run of 400 ms under a lease of 150 ms: %v, %v", res, err)
		}
		recs := records(t, st, "t")
		for _, r := range recs {
			if r.Fence != recs[0].Fence || r.Fence == 0 {
				t.Errorf("record %d has fence %d, want %d", r.Seq, r.Fence, recs[0].Fence)
			}
		}
		// Released: another owner claims the thread at once.
		l, err := st.(store.Leaser).Claim(ctx, "t", "B", time.Minute)
		if err != nil || l.Fence != recs[0].Fence+1 {
			t.Fatalf("claim after the run: %+v, %v; want fence %d", l, err, recs[0].Fence+1)
		}
		waitGoroutines(t, goroutines)
	})
}

// TestThreadLeaseReleasedWhileWaiting: a run that waits for a person
// releases its lease, so another process answers at once.
func TestThreadLeaseReleasedWhileWaiting(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "ask.wf", askWF)
		a := &engine.Threads{Runner: countRunner(map[string]int{}), Store: open(), Owner: "A", LeaseTTL: time.Minute}
		res, err := a.Run(ctx, plan, "t", nil, nil, nil)
		if err != nil || res.Status != engine.Waiting {
			t.Fatalf("run: %v, %v", res, err)
		}
		st := open()
		b := &engine.Threads{Runner: countRunner(map[string]int{}), Store: st, Owner: "B", LeaseTTL: time.Minute}
		res, err = b.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("1999")}}}, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("B answers: %v, %v", res, err)
		}
		recs := records(t, st, "t")
		last := recs[len(recs)-1]
		if recs[0].Fence == 0 || last.Fence <= recs[0].Fence {
			t.Errorf("fences: first record %d, last %d; want A's, then B's above it", recs[0].Fence, last.Fence)
		}
	})
}

// TestThreadLeaseClaimWait: with ClaimWait, a driver refused because a
// lease is held retries until the lease runs out (a killed process's) and
// then drives the thread.
func TestThreadLeaseClaimWait(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "loop.wf", loopWF)
		st := open()
		if err := st.CreateThread(ctx, &store.Thread{ID: "t", Workflow: plan.Workflow.Name}); err != nil {
			t.Fatal(err)
		}
		// A killed process's lease.
		if _, err := st.(store.Leaser).Claim(ctx, "t", "dead", 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		b := &engine.Threads{Runner: stepRunner(new([]string), new(sync.Mutex), nil), Store: st, Owner: "B", ClaimWait: 2 * time.Second, LeaseTTL: time.Minute}
		res, err := b.Run(ctx, plan, "t", nil, nil, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("run after the dead lease: %v, %v", res, err)
		}
	})
}

// TestThreadWithoutLeaser: a store that grants no leases is driven as
// before, its records without fences.
func TestThreadWithoutLeaser(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "loop.wf", loopWF)
		st := struct{ store.Store }{open()}
		th := &engine.Threads{Runner: stepRunner(new([]string), new(sync.Mutex), nil), Store: st}
		if res, err := th.Run(ctx, plan, "t", nil, nil, nil); err != nil || res.Status != engine.Completed {
			t.Fatalf("run: %v, %v", res, err)
		}
		for _, r := range records(t, st, "t") {
			if r.Fence != 0 {
				t.Errorf("record %d has fence %d without a lease", r.Seq, r.Fence)
			}
		}
	})
}

// TestThreadLeaseOff: with LeaseTTL 0 (the default) a store that grants
// leases is driven without one, as before: no fences, nothing held. A
// lease someone else holds still refuses its unfenced appends.
func TestThreadLeaseOff(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "loop.wf", loopWF)
		st := open()
		ls, ok := st.(store.Leaser)
		if !ok {
			t.Skip("the store grants no leases")
		}
		th := &engine.Threads{Runner: stepRunner(new([]string), new(sync.Mutex), nil), Store: st}
		if res, err := th.Run(ctx, plan, "t", nil, nil, nil); err != nil || res.Status != engine.Completed {
			t.Fatalf("run: %v, %v", res, err)
		}
		for _, r := range records(t, st, "t") {
			if r.Fence != 0 {
				t.Errorf("record %d has fence %d with leases off", r.Seq, r.Fence)
			}
		}
		l, err := ls.Claim(ctx, "t", "other", time.Minute)
		if err != nil {
			t.Fatalf("a run with leases off left the thread held: %v", err)
		}
		before := len(records(t, st, "t"))
		if _, err := th.Run(ctx, plan, "t", nil, nil, nil); !errors.Is(err, store.ErrLeaseHeld) {
			t.Errorf("an unleased run on a held thread: %v, want ErrLeaseHeld", err)
		}
		if after := len(records(t, st, "t")); after != before {
			t.Errorf("the refused run wrote %d records", after-before)
		}
		_ = ls.Release(ctx, l)
	})
}

// takenOver wraps a Leaser store: just before the driver's first write
// of the kind named by at ("run" or "pending"), another owner takes the
// thread over (the driver's lease is released and B claims it), as if the
// driver had stalled past its lease right there.
type takenOver struct {
	store.Store
	at    string
	mu    sync.Mutex
	lease store.Lease
	done  bool
}

func (s *takenOver) Claim(ctx context.Context, thread, owner string, ttl time.Duration) (store.Lease, error) {
	l, err := s.Store.(store.Leaser).Claim(ctx, thread, owner, ttl)
	if err == nil {
		s.mu.Lock()
		s.lease = l
		s.mu.Unlock()
	}
	return l, err
}

func (s *takenOver) Heartbeat(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	return s.Store.(store.Leaser).Heartbeat(ctx, l, ttl)
}

func (s *takenOver) Release(ctx context.Context, l store.Lease) error {
	return s.Store.(store.Leaser).Release(ctx, l)
}

func (s *takenOver) takeOver(ctx context.Context, at string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at != at || s.done {
		return nil
	}
	s.done = true
	ls := s.Store.(store.Leaser)
	if err := ls.Release(ctx, s.lease); err != nil {
		return err
	}
	_, err := ls.Claim(ctx, s.lease.Thread, "B", time.Minute)
	return err
}

func (s *takenOver) PutRun(ctx context.Context, r *store.Run) error {
	if err := s.takeOver(ctx, "run"); err != nil {
		return err
	}
	return s.Store.PutRun(ctx, r)
}

func (s *takenOver) PutPending(ctx context.Context, p *store.Pending) error {
	if err := s.takeOver(ctx, "pending"); err != nil {
		return err
	}
	return s.Store.PutPending(ctx, p)
}

// takenOverEnds is takenOver over a store.RunEnder: the takeover comes
// just before the run's end, written in one transaction, when it holds a
// write of the kind named by at.
type takenOverEnds struct{ *takenOver }

func (s takenOverEnds) EndRun(ctx context.Context, e *store.RunEnd) error {
	if e.Run != nil {
		if err := s.takeOver(ctx, "run"); err != nil {
			return err
		}
	}
	if len(e.Pending) > 0 {
		if err := s.takeOver(ctx, "pending"); err != nil {
			return err
		}
	}
	return s.Store.(store.RunEnder).EndRun(ctx, e)
}

// TestThreadLeaseLostBeforeRunAndPending: a driver whose lease another
// owner took after its last record writes neither the run's row nor its
// questions: the store refuses them with store.ErrLeaseLost, as it refuses
// its records, and the run fails with it.
func TestThreadLeaseLostBeforeRunAndPending(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		for _, c := range []struct {
			at, thread, wf, src string
			runner              *engine.Runner
			want                engine.Status // as the records left it
		}{
			{"pending", "ask", "ask.wf", askWF, countRunner(map[string]int{}), engine.Waiting},
			{"run", "loop", "loop.wf", loopWF, stepRunner(new([]string), new(sync.Mutex), nil), engine.Completed},
		} {
			// The run's end written one write at a time, and in one
			// transaction (store.RunEnder): refused alike.
			for _, ends := range []bool{false, true} {
				plan := load(t, c.wf, c.src)
				to := &takenOver{Store: open(), at: c.at}
				var st store.Store = to
				thread := c.thread
				if ends {
					if _, ok := to.Store.(store.RunEnder); !ok {
						t.Fatalf("%T is not a store.RunEnder", to.Store)
					}
					st, thread = takenOverEnds{to}, c.thread+"-ends"
				}
				a := &engine.Threads{Runner: c.runner, Store: st, Owner: "A", LeaseTTL: time.Minute}
				res, err := a.Run(ctx, plan, thread, nil, nil, nil)
				if !errors.Is(err, store.ErrLeaseLost) || res == nil || res.Status != c.want {
					t.Errorf("%s: the run's %s write after a takeover: got %v, %v, want %v and store.ErrLeaseLost", thread, c.at, res, err, c.want)
				}
				if !to.done {
					t.Errorf("%s: no %s write to refuse", thread, c.at)
				}
				if ps, err := st.Pending(ctx, thread); err != nil || len(ps) != 0 {
					t.Errorf("%s: pending questions written after the takeover: %v, %v", thread, ps, err)
				}
				if runs, err := st.Runs(ctx, thread); err != nil || len(runs) != 0 {
					t.Errorf("%s: runs written after the takeover: %v, %v", thread, runs, err)
				}
				// B's lease stands: A released nothing of it.
				if _, err := st.(store.Leaser).Claim(ctx, thread, "C", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
					t.Errorf("%s: claim while B holds the thread: %v, want store.ErrLeaseHeld", thread, err)
				}
			}
		}
	})
}

// endCounting counts a store's writes of a run's end: EndRun, and the
// writes it stands for.
type endCounting struct {
	store.Store
	mu sync.Mutex
	n  map[string]int
	// last is the last RunEnd written.
	last *store.RunEnd
}

func (s *endCounting) count(name string) {
	s.mu.Lock()
	s.n[name]++
	s.mu.Unlock()
}

func (s *endCounting) Claim(ctx context.Context, thread, owner string, ttl time.Duration) (store.Lease, error) {
	return s.Store.(store.Leaser).Claim(ctx, thread, owner, ttl)
}

func (s *endCounting) Heartbeat(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	return s.Store.(store.Leaser).Heartbeat(ctx, l, ttl)
}

func (s *endCounting) Release(ctx context.Context, l store.Lease) error {
	s.count("Release")
	return s.Store.(store.Leaser).Release(ctx, l)
}

func (s *endCounting) PutRun(ctx context.Context, r *store.Run) error {
	s.count("PutRun")
	return s.Store.PutRun(ctx, r)
}

func (s *endCounting) PutPending(ctx context.Context, p *store.Pending) error {
	s.count("PutPending")
	return s.Store.PutPending(ctx, p)
}

func (s *endCounting) DeletePending(ctx context.Context, thread, id string) error {
	s.count("DeletePending")
	return s.Store.DeletePending(ctx, thread, id)
}

func (s *endCounting) EndRun(ctx context.Context, e *store.RunEnd) error {
	s.count("EndRun")
	s.mu.Lock()
	s.last = e
	s.mu.Unlock()
	return s.Store.(store.RunEnder).EndRun(ctx, e)
}

func (s *endCounting) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.n
	s.n = map[string]int{}
	return n
}

// TestThreadRunEndOneWrite: with a store.RunEnder, a run that waits, and
// the resumed run that ends, each record their end (questions, row,
// lease's release) in one EndRun, and nothing else: the lease is
// released by it, the questions and rows are as the one-by-one writes
// leave them, and the thread is free at once for another driver.
func TestThreadRunEndOneWrite(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		st := &endCounting{Store: open(), n: map[string]int{}}
		plan := load(t, "ask.wf", askWF)
		th := &engine.Threads{Runner: countRunner(map[string]int{}), Store: st, Owner: "A", LeaseTTL: time.Minute}
		res, err := th.Run(ctx, plan, "one", nil, nil, nil)
		if err != nil || res.Status != engine.Waiting || len(res.Waiting) != 1 {
			t.Fatalf("Run: %v, %v", res, err)
		}
		if n := st.take(); n["EndRun"] != 1 || len(n) != 1 {
			t.Errorf("a waiting run's end: writes %v, want one EndRun", n)
		}
		if e := st.last; e.Release == nil || e.Release.Owner != "A" || len(e.Pending) != 1 || e.Run == nil || e.Run.Status != store.Waiting {
			t.Errorf("the waiting run's end: %+v", e)
		}
		ps, err := st.Pending(ctx, "one")
		if err != nil || len(ps) != 1 || ps[0].ID != res.Waiting[0].ID {
			t.Errorf("pending after the run: %v, %v; want the question %s", ps, err, res.Waiting[0].ID)
		}
		// Released: another owner claims at once.
		l, err := st.Claim(ctx, "one", "B", time.Minute)
		if err != nil {
			t.Fatalf("claim after the run: %v", err)
		}
		if err := st.Release(ctx, l); err != nil {
			t.Fatal(err)
		}
		st.take()
		res, err = th.Resume(ctx, plan, "one", []engine.Answer{{ID: res.Waiting[0].ID, Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("Resume: %v, %v", res, err)
		}
		if n := st.take(); n["EndRun"] != 1 || len(n) != 1 {
			t.Errorf("the resumed run's end: writes %v, want one EndRun", n)
		}
		if ps, err := st.Pending(ctx, "one"); err != nil || len(ps) != 0 {
			t.Errorf("pending after the resumed run: %v, %v", ps, err)
		}
		if runs, err := st.Runs(ctx, "one"); err != nil || len(runs) != 1 || runs[0].Status != store.Completed {
			t.Errorf("runs: %v, %v", runs, err)
		}
		l, err = st.Claim(ctx, "one", "B", time.Minute)
		if err != nil || l.Fence != 4 {
			t.Errorf("claim after the resumed run: %+v, %v; want fence 4", l, err)
		}
	})
}
