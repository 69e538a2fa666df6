package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// slowCountRunner is countRunner whose "answer" node calls block until
// release is closed (nil: they do not block), and signal started first.
func slowCountRunner(counts map[string]int, mu *sync.Mutex, started chan<- struct{}, release <-chan struct{}) *engine.Runner {
	return sleepyCountRunner(counts, mu, started, release, 0)
}

// sleepyCountRunner is slowCountRunner whose "answer" node also sleeps
// for sleep.
func sleepyCountRunner(counts map[string]int, mu *sync.Mutex, started chan<- struct{}, release <-chan struct{}, sleep time.Duration) *engine.Runner {
	reg := engine.NewRegistry()
	reg.Register("count", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		mu.Lock()
		counts[c.Node.Name]++
		n := counts[c.Node.Name]
		mu.Unlock()
		if c.Node.Name == "answer" && release != nil {
			started <- struct{}{}
			<-release
		}
		if c.Node.Name == "answer" {
			time.Sleep(sleep)
		}
		return c.SetOutput("n", flow.IntValue(int64(n)))
	}))
	return &engine.Runner{Registry: reg}
}

// wantAdvanced checks that err says another process advanced the thread.
func wantAdvanced(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, engine.ErrThreadAdvanced) {
		t.Errorf("%s: %v, want an error matching engine.ErrThreadAdvanced", what, err)
		return
	}
	if k := engine.KindOf(err); k != engine.KindConflict || !errors.Is(err, engine.ErrConflict) {
		t.Errorf("%s: %v: kind %q, want %q", what, err, k, engine.KindConflict)
	}
	if msg := err.Error(); !strings.Contains(msg, "another process") || strings.Contains(msg, "without answers") {
		t.Errorf("%s: %q does not say another process has the thread", what, msg)
	}
}

// TestThreadResumeAgainstAnotherProcess: a resume with an answer that
// another process gave first, while that process still runs the thread,
// and a run whose log another process's resume advanced, are told that
// another process advanced the thread, not "resume it without answers"
// or a bare append conflict.
func TestThreadResumeAgainstAnotherProcess(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "ask.wf", askWF)
		counts := map[string]int{}
		var mu sync.Mutex
		th := &engine.Threads{Runner: slowCountRunner(counts, &mu, nil, nil), Store: open()}
		if res, err := th.Run(ctx, plan, "t", nil, nil, nil); err != nil || res.Status != engine.Waiting {
			t.Fatalf("run: %v, %v", res, err)
		}
		answer := []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2024")}}}

		// Process A answers and is busy in the node after the question.
		started, release := make(chan struct{}, 1), make(chan struct{})
		a := &engine.Threads{Runner: slowCountRunner(counts, &mu, started, release), Store: open()}
		done := make(chan error, 1)
		go func() {
			res, err := a.Resume(ctx, plan, "t", answer, nil)
			if err == nil && res.Status != engine.Completed {
				err = fmt.Errorf("status %s", res.Status)
			}
			done <- err
		}()
		<-started
		// Process B answers too: A holds the thread.
		b := &engine.Threads{Runner: slowCountRunner(counts, &mu, nil, nil), Store: open()}
		_, err := b.Resume(ctx, plan, "t", answer, nil)
		wantAdvanced(t, "a second answer", err)
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("the first answer: %v", err)
		}
		if counts["answer"] != 1 {
			t.Errorf("the node after the question ran %d times, want 1", counts["answer"])
		}

		// A run stopped by nothing but slowness: its step is still in
		// flight when another process resumes the thread and finishes
		// it. The slow one's next record then meets the other's. (A
		// store that grants leases refuses the second process instead:
		// TestThreadLeaseOneDriver; here the stores grant none.)
		loop := load(t, "loop.wf", loopWF)
		var keys []string
		var kmu sync.Mutex
		inStep, goOn := make(chan struct{}), make(chan struct{})
		slow := &engine.Threads{Runner: stepRunner(&keys, &kmu, func(i int64) {
			if i == 5 {
				close(inStep)
				<-goOn
			}
		}), Store: struct{ store.Store }{open()}}
		go func() {
			_, err := slow.Run(ctx, loop, "l", nil, nil, nil)
			done <- err
		}()
		<-inStep
		fast := &engine.Threads{Runner: stepRunner(&keys, &kmu, nil), Store: struct{ store.Store }{open()}}
		res, err := fast.Resume(ctx, loop, "l", nil, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume beside the running process: %v, %v", res, err)
		}
		close(goOn)
		wantAdvanced(t, "the process whose thread was resumed elsewhere", <-done)
		ts, err := fast.Load(ctx, "l")
		if err != nil || ts.Status() != engine.Completed {
			t.Fatalf("after both: %v, %v", ts, err)
		}
		if v, _ := ts.Value("acc"); v.Int() != 2470 {
			t.Errorf("acc = %s, want 2470", v)
		}
	})
}

// TestThreadConcurrentResumersOneWinner: eight resumers answer the same
// question of one thread at once, each with a store of its own (as eight
// processes would): exactly one wins, the node after the question runs
// once, and each loser is told another process advanced the thread.
func TestThreadConcurrentResumersOneWinner(t *testing.T) {
	for _, gs := range gapStores(t) {
		t.Run(gs.name, func(t *testing.T) {
			ctx := context.Background()
			plan := load(t, "ask.wf", askWF)
			for round := range 3 {
				id := fmt.Sprintf("r%d", round)
				counts := map[string]int{}
				var mu sync.Mutex
				th := &engine.Threads{Runner: slowCountRunner(counts, &mu, nil, nil), Store: gs.open(t)}
				if _, err := th.Run(ctx, plan, id, nil, nil, nil); err != nil {
					t.Fatal(err)
				}
				const n = 8
				stores := make([]store.Store, n)
				for i := range stores {
					stores[i] = gs.open(t)
				}
				var (
					wg       sync.WaitGroup
					winners  atomic.Int32
					errs     = make([]error, n)
					start    = make(chan struct{})
					answered = map[string]bool{}
				)
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						// The winner takes its time after the answer:
						// the others meet its records, not its end.
						r := &engine.Threads{Runner: sleepyCountRunner(counts, &mu, nil, nil, 200*time.Millisecond), Store: stores[i]}
						<-start
						res, err := r.Resume(ctx, plan, id, []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue(fmt.Sprint(i))}}}, nil)
						if err == nil && res.Status == engine.Completed {
							winners.Add(1)
							mu.Lock()
							answered[fmt.Sprint(i)] = true
							mu.Unlock()
						}
						errs[i] = err
					}()
				}
				close(start)
				wg.Wait()
				if w := winners.Load(); w != 1 {
					t.Fatalf("round %d: %d winners, want 1 (errors %v)", round, w, errs)
				}
				for i, err := range errs {
					var te *engine.ThreadError
					switch {
					case err == nil:
					case errors.As(err, &te) && te.Status == engine.Completed:
						// A loser slower than the whole winning run.
						if !strings.Contains(err.Error(), "another process") {
							t.Errorf("round %d, loser %d: %v does not say another process may have answered", round, i, err)
						}
					default:
						wantAdvanced(t, fmt.Sprintf("round %d, loser %d", round, i), err)
					}
				}
				if counts["answer"] != 1 {
					t.Errorf("round %d: the node after the question ran %d times, want 1", round, counts["answer"])
				}
				hist, err := th.History(ctx, id, 1)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, h := range hist {
					if h.Answer {
						for _, c := range h.Changes {
							got = append(got, c.Value.Text())
						}
					}
				}
				if len(got) != 1 || !answered[got[0]] {
					t.Errorf("round %d: recorded answers %q, want the winner's only (%v)", round, got, answered)
				}
			}
		})
	}
}

// fullStore is a store whose appends after the first `room` fail as a
// full disk does, wrapping store.ErrFull (or store.ErrReadOnly).
type fullStore struct {
	store.Store
	room  atomic.Int64
	cause error
}

func (s *fullStore) Append(ctx context.Context, recs ...*store.Record) error {
	if s.room.Add(-1) < 0 {
		return fmt.Errorf("test store: append: %w: database or disk is full", s.cause)
	}
	return s.Store.Append(ctx, recs...)
}

// TestThreadFullStoreFailsFast: a store that is full, read-only or
// closed fails the run at once, naming the cause, instead of being
// retried for RetryFor (30 s) as a transient error, in silence.
func TestThreadFullStoreFailsFast(t *testing.T) {
	for _, cause := range []error{store.ErrFull, store.ErrReadOnly, store.ErrClosed} {
		for _, d := range []engine.Durability{engine.Sync, engine.Async} {
			ctx := context.Background()
			plan := load(t, "loop.wf", loopWF)
			var keys []string
			var mu sync.Mutex
			st := &fullStore{Store: memory.New(), cause: cause}
			if d == engine.Sync {
				st.room.Store(1) // the run's first record goes in
			} // Async may write a fast run in one append: none goes in

			th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: st, Durability: d}
			start := time.Now()
			res, err := th.Run(ctx, plan, "f", nil, nil, nil)
			took := time.Since(start)
			if !errors.Is(err, cause) {
				t.Errorf("%v, durability %v: run on a full store: %v, want %v", cause, d, err, cause)
			}
			if res == nil || res.Status != engine.Failed {
				t.Errorf("%v, durability %v: result %+v, want failed", cause, d, res)
			}
			if took > 2*time.Second {
				t.Errorf("%v, durability %v: the run took %v to fail", cause, d, took)
			}
		}
	}
}

// TestThreadConcurrentResumersOfAStoppedRun: eight resumers continue the
// same stopped run at once, each with a store of its own: exactly one
// finishes it, the others are told another process advanced the thread,
// and the thread holds the right result with every step recorded once.
func TestThreadConcurrentResumersOfAStoppedRun(t *testing.T) {
	for _, gs := range gapStores(t) {
		t.Run(gs.name, func(t *testing.T) {
			ctx := context.Background()
			plan := load(t, "loop.wf", loopWF)
			var keys []string
			var mu sync.Mutex
			cctx, cancel := context.WithCancel(ctx)
			th := &engine.Threads{Runner: stepRunner(&keys, &mu, func(i int64) {
				if i == 4 {
					cancel()
				}
			}), Store: gs.open(t)}
			if _, err := th.Run(cctx, plan, "s", nil, nil, nil); err == nil {
				t.Fatal("the stopped run did not fail")
			}
			const n = 8
			stores := make([]store.Store, n)
			for i := range stores {
				stores[i] = gs.open(t)
			}
			var (
				wg      sync.WaitGroup
				winners atomic.Int32
				errs    = make([]error, n)
				start   = make(chan struct{})
			)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := &engine.Threads{Runner: stepRunner(&keys, &mu, func(int64) { time.Sleep(time.Millisecond) }), Store: stores[i]}
					<-start
					res, err := r.Resume(ctx, plan, "s", nil, nil)
					if err == nil && res.Status == engine.Completed {
						winners.Add(1)
					}
					errs[i] = err
				}()
			}
			close(start)
			wg.Wait()
			if w := winners.Load(); w != 1 {
				t.Fatalf("%d winners, want 1 (errors %v)", w, errs)
			}
			for i, err := range errs {
				var te *engine.ThreadError
				switch {
				case err == nil:
				case errors.As(err, &te) && te.Status == engine.Completed:
					// A resumer slower than the whole winning run: the
					// run has ended, nothing to resume.
				default:
					wantAdvanced(t, fmt.Sprintf("loser %d", i), err)
				}
			}
			ts, err := th.Load(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := ts.Value("acc"); ts.Status() != engine.Completed || v.Int() != loopSum {
				t.Errorf("after the resumers: %s, acc = %s; want completed, %d", ts.Status(), v, loopSum)
			}
			hist, err := th.History(ctx, "s", 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := stepsOnce(hist, 20); err != nil {
				t.Errorf("%v", err)
			}
		})
	}
}
