package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// rollbackRunner is updateRunner whose count and join actions call hook
// first, with the action's name.
func rollbackRunner(hook func(action string)) *engine.Runner {
	reg := engine.NewRegistry()
	reg.Register("count", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		hook("count")
		return c.SetOutput("n", flow.IntValue(1))
	}))
	reg.Register("join", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		hook("join")
		return c.SetOutput("out", flow.StringValue(fmt.Sprintf("%s/%s/%d", c.Input("t").Text(), c.Input("y").Text(), c.Input("n").Int())))
	}))
	return &engine.Runner{Registry: reg}
}

// sameJSON is a state's run and state (values and control), to compare
// a restored state with the one it restores: its Seq and run number
// differ.
func sameJSON(t testing.TB, ts *engine.ThreadState) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Run   string
		State *engine.State
	}{ts.Run, ts.State})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkpointsWith lists which of a thread's checkpoints hold an answer
// (ask.year) or an output (answer.out) equal to v.
func checkpointsWith(t *testing.T, th *engine.Threads, id, cell, v string) []int64 {
	t.Helper()
	cps, err := th.Checkpoints(context.Background(), id, engine.CheckpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, c := range cps {
		if got, _ := c.State.Value(cell); got.Text() == v {
			out = append(out, c.Seq)
		}
	}
	return out
}

// TestRunRolledBack: a run cancelled with ErrRunRolledBack leaves its
// thread as the drive found it. A resumed run rolled back waits again for
// the same question (pending, its run's row waiting), and a later resume
// continues from there; a new run rolled back leaves the previous run's
// end, and the next run is numbered after the rolled-back one; the first
// run of a thread rolled back leaves no state. History (Checkpoints)
// starts at the restored state and no longer shows the undone records.
func TestRunRolledBack(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		for _, dur := range []engine.Durability{engine.Sync, engine.Async} {
			t.Run(fmt.Sprint(dur), func(t *testing.T) {
				ctx := context.Background()
				plan := load(t, "upd.wf", updateWF)
				var cancel context.CancelCauseFunc
				stopAt := ""
				th := &engine.Threads{Store: open(), Durability: dur, LeaseTTL: time.Minute, Runner: rollbackRunner(func(a string) {
					if a == stopAt {
						cancel(engine.ErrRunRolledBack)
					}
				})}
				id := fmt.Sprintf("rb%d", dur)
				init := func(topic string) *engine.RunOptions {
					return &engine.RunOptions{Init: map[string]flow.Value{"topic": flow.StringValue(topic)}}
				}
				if res, err := th.Run(ctx, plan, id, nil, nil, init("cats")); err != nil || res.Status != engine.Waiting {
					t.Fatalf("run 1: %v", err)
				}
				waiting, _ := th.Load(ctx, id)
				pend0, _ := th.Store.Pending(ctx, id)

				// A resume rolled back: waiting again, as before.
				arm := func() context.Context {
					c, cf := context.WithCancelCause(ctx)
					cancel = cf
					t.Cleanup(func() { cf(nil) })
					return c
				}
				cctx := arm()
				stopAt = "join"
				res, err := th.Resume(cctx, plan, id, year("1999"), nil)
				if res == nil || res.Status != engine.Cancelled || !errors.Is(err, engine.ErrRunCancelled) {
					t.Fatalf("rolled-back resume: %v, %v", res, err)
				}
				ts, err := th.Load(ctx, id)
				if err != nil || sameJSON(t, ts) != sameJSON(t, waiting) || ts.Status() != engine.Waiting || ts.Run != waiting.Run || ts.RunNumber != 1 {
					t.Fatalf("after the rollback (%v):\n%s\nwant the state it waited in:\n%s", err, sameJSON(t, ts), sameJSON(t, waiting))
				}
				pend, _ := th.Store.Pending(ctx, id)
				if len(pend) != 1 || len(pend0) != 1 || pend[0].ID != pend0[0].ID || pend[0].Node != "ask" || string(pend[0].Question) != string(pend0[0].Question) {
					t.Fatalf("pending after the rollback: %+v; want %+v", pend, pend0)
				}
				if rn, err := th.Store.Run(ctx, waiting.Run); err != nil || rn.Status != store.Waiting {
					t.Fatalf("run row after the rollback: %+v, %v", rn, err)
				}
				cps, _ := th.Checkpoints(ctx, id, engine.CheckpointOptions{})
				if len(cps) == 0 || sameJSON(t, cps[0].State) != sameJSON(t, waiting) || cps[0].Parent != waiting.Seq || cps[0].Source != engine.SourceUpdate {
					t.Fatalf("newest checkpoint after the rollback: %+v", cps[0])
				}
				if hist, err := th.History(ctx, id, cps[0].Seq); err != nil || len(hist) != 1 || !hist[0].Restored || hist[0].To != waiting.Seq || hist[0].Status != engine.Waiting {
					t.Errorf("the log's restore record: %+v, %v", hist, err)
				}
				if got := checkpointsWith(t, th, id, "ask.year", "1999"); len(got) != 0 {
					t.Errorf("checkpoints %v still show the rolled-back answer", got)
				}
				stopAt = ""
				if res, err := th.Resume(ctx, plan, id, year("2000"), nil); err != nil || res.Status != engine.Completed {
					t.Fatalf("resume after the rollback: %v, %v", res, err)
				}
				done, _ := th.Load(ctx, id)
				if out, _ := done.Value("answer.out"); out.Text() != "cats/2000/1" {
					t.Errorf("answer.out after the rollback and a resume = %s; want cats/2000/1", out)
				}

				// A new run rolled back: the thread as run 1 left it.
				cctx = arm()
				stopAt = "count"
				if res, err := th.Run(cctx, plan, id, nil, nil, init("dogs")); res == nil || res.Status != engine.Cancelled || !errors.Is(err, engine.ErrRunCancelled) {
					t.Fatalf("rolled-back run 2: %v, %v", res, err)
				}
				ts, _ = th.Load(ctx, id)
				if sameJSON(t, ts) != sameJSON(t, done) || ts.Status() != engine.Completed || ts.RunNumber != 2 {
					t.Fatalf("after run 2's rollback (run %d):\n%s\nwant run 1's end:\n%s", ts.RunNumber, sameJSON(t, ts), sameJSON(t, done))
				}
				if got := checkpointsWith(t, th, id, "topic", "dogs"); len(got) != 0 {
					t.Errorf("checkpoints %v still show run 2", got)
				}
				stopAt = ""
				res, err = th.Run(ctx, plan, id, nil, nil, nil)
				if err != nil || res.Status != engine.Waiting || res.Run != 3 {
					t.Fatalf("run 3: %v, %v", res, err)
				}
				if v := resultVar(t, res, "topic"); v.Text() != "cats" {
					t.Errorf("run 3 carried topic %s; want cats, run 1's", v)
				}

				// Restore to run 1's end: run 3's question is gone.
				if _, err := th.Restore(ctx, id, done.Seq, nil); err != nil {
					t.Fatal(err)
				}
				if pend, _ := th.Store.Pending(ctx, id); len(pend) != 0 {
					t.Errorf("pending after restoring an ended state: %+v", pend)
				}
				ts, _ = th.Load(ctx, id)
				if sameJSON(t, ts) != sameJSON(t, done) || ts.Status() != engine.Completed || ts.RunNumber != 3 {
					t.Fatalf("after the restore (run %d):\n%s", ts.RunNumber, sameJSON(t, ts))
				}

				// The first run of a thread rolled back: no state.
				first := id + "-first"
				cctx = arm()
				stopAt = "count"
				if res, err := th.Run(cctx, plan, first, nil, nil, init("owls")); res == nil || res.Status != engine.Cancelled || !errors.Is(err, engine.ErrRunCancelled) {
					t.Fatalf("rolled-back first run: %v, %v", res, err)
				}
				if ts, err := th.Load(ctx, first); err != nil || ts.State != nil || ts.Status() != engine.Completed {
					t.Fatalf("after the first run's rollback: %+v, %v", ts, err)
				}
				if cps, err := th.Checkpoints(ctx, first, engine.CheckpointOptions{}); err != nil || len(cps) != 0 {
					t.Fatalf("checkpoints after the first run's rollback: %+v, %v", cps, err)
				}
				stopAt = ""
				if res, err := th.Run(ctx, plan, first, nil, nil, init("bats")); err != nil || res.Status != engine.Waiting || res.Run != 2 {
					t.Fatalf("run after the first run's rollback: %+v, %v", res, err)
				}
				if cps, _ := th.Checkpoints(ctx, first, engine.CheckpointOptions{}); len(cps) == 0 || cps[len(cps)-1].Parent != 0 {
					t.Errorf("checkpoints of the run after it: %+v", cps)
				}
				if got := checkpointsWith(t, th, first, "topic", "owls"); len(got) != 0 {
					t.Errorf("checkpoints %v still show the rolled-back first run", got)
				}
			})
		}
	})
}

// TestThreadRestoreRefused: a seq the log lacks is of KindNotFound; a
// waiting state without its plan is of KindInvalidInput.
func TestThreadRestoreRefused(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "upd.wf", updateWF)
	th := &engine.Threads{Runner: updateRunner(), Store: memory.New()}
	if res, err := th.Run(ctx, plan, "t", nil, nil, nil); err != nil || res.Status != engine.Waiting {
		t.Fatal(err)
	}
	waiting, _ := th.Load(ctx, "t")
	if _, err := th.Resume(ctx, plan, "t", year("1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := th.Restore(ctx, "t", 99, nil); engine.KindOf(err) != engine.KindNotFound {
		t.Errorf("restore to a record the log lacks: %v", err)
	}
	if _, err := th.Restore(ctx, "t", waiting.Seq, nil); engine.KindOf(err) != engine.KindInvalidInput {
		t.Errorf("restore to a waiting state without its plan: %v", err)
	}
	if _, err := th.Restore(ctx, "nope", 1, nil); engine.KindOf(err) != engine.KindNotFound {
		t.Errorf("restore of a missing thread: %v", err)
	}
	ts, err := th.Restore(ctx, "t", waiting.Seq, &engine.RestoreOptions{Plan: plan})
	if err != nil || ts.Status() != engine.Waiting || sameJSON(t, ts) != sameJSON(t, waiting) {
		t.Fatalf("restore with the plan: %v", err)
	}
}

// TestRecoveredRunRolledBack: a run whose process stopped mid-drive and
// was resumed, then rolled back, goes back to before that drive began
// (the answers it took), not to where the recovery picked it up.
func TestRecoveredRunRolledBack(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "upd.wf", updateWF)
		var cancel context.CancelCauseFunc
		var cause error
		th := &engine.Threads{Store: open(), Runner: rollbackRunner(func(a string) {
			if a == "join" && cancel != nil {
				cancel(cause)
			}
		})}
		if res, err := th.Run(ctx, plan, "t", nil, nil, nil); err != nil || res.Status != engine.Waiting {
			t.Fatalf("run: %v", err)
		}
		waiting, _ := th.Load(ctx, "t")
		c1, cf1 := context.WithCancelCause(ctx)
		defer cf1(nil)
		cancel, cause = cf1, errors.New("the process stops")
		if _, err := th.Resume(c1, plan, "t", year("1999"), nil); err == nil {
			t.Fatal("a resume stopped mid-way returned no error")
		}
		if ts, _ := th.Load(ctx, "t"); ts.Status() != engine.Running || ts.Seq <= waiting.Seq {
			t.Fatalf("stopped mid-way: %s at %d; want running after the answer", ts.Status(), ts.Seq)
		}
		c2, cf2 := context.WithCancelCause(ctx)
		defer cf2(nil)
		cancel, cause = cf2, engine.ErrRunRolledBack
		if res, err := th.Resume(c2, plan, "t", nil, nil); res == nil || res.Status != engine.Cancelled || !errors.Is(err, engine.ErrRunCancelled) {
			t.Fatalf("recovered run rolled back: %v, %v", res, err)
		}
		ts, _ := th.Load(ctx, "t")
		if sameJSON(t, ts) != sameJSON(t, waiting) || ts.Status() != engine.Waiting {
			t.Fatalf("after the rollback:\n%s\nwant\n%s", sameJSON(t, ts), sameJSON(t, waiting))
		}
		if pend, _ := th.Store.Pending(ctx, "t"); len(pend) != 1 || pend[0].Node != "ask" {
			t.Errorf("pending after the rollback: %+v", pend)
		}
	})
}
