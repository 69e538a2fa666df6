package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// TestBreakpoints: a run stops before or after the nodes named, once; the
// stop is recorded (a new Threads on the store sees it) and a resume
// without answers continues it from there; a new run ends it.
func TestBreakpoints(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		for _, dur := range []engine.Durability{engine.Sync, engine.Async} {
			t.Run(fmt.Sprint(dur), func(t *testing.T) { testBreakpoints(t, open(), dur, fmt.Sprintf("b%d", dur)) })
		}
	})
}

func testBreakpoints(t *testing.T, st store.Store, dur engine.Durability, id string) {
	ctx := context.Background()
	plan := load(t, "upd.wf", updateWF)
	var ran []string
	newThreads := func() *engine.Threads {
		return &engine.Threads{Store: st, Runner: rollbackRunner(func(a string) { ran = append(ran, a) }), Durability: dur, LeaseTTL: time.Minute}
	}
	th := newThreads()
	res, err := th.Run(ctx, plan, id, nil, nil, &engine.RunOptions{Breakpoints: &engine.Breakpoints{Before: []string{"prepare"}}})
	if err != nil || res.Status != engine.Running || !slices.Equal(res.Paused, []string{"prepare"}) || len(ran) != 0 {
		t.Fatalf("run stopped before prepare: %+v, %v (ran %v)", res, err, ran)
	}
	// Another process sees the stop.
	th = newThreads()
	ts, err := th.Load(ctx, id)
	if err != nil || ts.Status() != engine.Running || !slices.Equal(ts.Paused, []string{"prepare"}) || len(ts.State.Control.Tasks) != 1 || ts.NodeOf(ts.State.Control.Tasks[0]) != "prepare" {
		t.Fatalf("the stop, loaded: %+v, %v", ts, err)
	}
	// An update keeps the stop.
	if ts, err := th.Update(ctx, id, map[string]flow.Value{"topic": flow.StringValue("edited")}, nil); err != nil || !slices.Equal(ts.Paused, []string{"prepare"}) {
		t.Fatalf("update of the stopped run: %+v, %v", ts, err)
	}
	if ts, _ := th.Load(ctx, id); !slices.Equal(ts.Paused, []string{"prepare"}) || ts.Status() != engine.Running {
		t.Fatalf("the stop, loaded after an update: %v %s", ts.Paused, ts.Status())
	}
	// A fork of the stop is stopped there too.
	if ts, err := th.Fork(ctx, id, ts.Seq, id+"-fork", nil); err != nil || !slices.Equal(ts.Paused, []string{"prepare"}) || ts.Status() != engine.Running {
		t.Fatalf("fork of the stopped run: %+v, %v", ts, err)
	}
	// Continued with a breakpoint after prepare: prepare runs (the
	// stop before it does not stop it again), then the run stops.
	res, err = th.ResumeWith(ctx, plan, id, nil, nil, &engine.ResumeOptions{Breakpoints: &engine.Breakpoints{Before: []string{"prepare"}, After: []string{"prepare"}}})
	if err != nil || res.Status != engine.Running || !slices.Equal(res.Paused, []string{"ask"}) || !slices.Equal(ran, []string{"count"}) {
		t.Fatalf("continued, stopped after prepare: %+v, %v (ran %v)", res, err, ran)
	}
	ts, _ = th.Load(ctx, id)
	if v, _ := ts.Value("topic"); v.Text() != "edited" {
		t.Errorf("topic after the continue: %s; want the update's", v)
	}
	if n, _ := ts.Value("prepare.n"); n.Int() != 1 || !slices.Equal(ts.Paused, []string{"ask"}) {
		t.Fatalf("after prepare: prepare.n %s, paused %v", n, ts.Paused)
	}
	// Continued without breakpoints: it asks, and an answer ends it.
	res, err = th.Resume(ctx, plan, id, nil, nil)
	if err != nil || res.Status != engine.Waiting || len(res.Paused) != 0 || len(res.Waiting) != 1 {
		t.Fatalf("continued to the question: %+v, %v", res, err)
	}
	if ts, _ := th.Load(ctx, id); ts.Paused != nil {
		t.Errorf("paused after the run went on: %v", ts.Paused)
	}
	res, err = th.Resume(ctx, plan, id, year("2001"), nil)
	if err != nil || res.Status != engine.Completed || !slices.Equal(ran, []string{"count", "join"}) {
		t.Fatalf("answered: %+v, %v (ran %v)", res, err, ran)
	}
	if res.Run != 1 {
		t.Errorf("all of it was run %d; want 1", res.Run)
	}

	// "*": stops before the first node; a new run ends the stopped one.
	res, err = th.Run(ctx, plan, id, nil, nil, &engine.RunOptions{Breakpoints: &engine.Breakpoints{Before: []string{"*"}}})
	if err != nil || res.Status != engine.Running || !slices.Equal(res.Paused, []string{"prepare"}) || res.Run != 2 {
		t.Fatalf("run 2 with * before: %+v, %v", res, err)
	}
	ran = nil
	res, err = th.Run(ctx, plan, id, nil, nil, nil)
	if err != nil || res.Status != engine.Waiting || res.Run != 3 || !slices.Equal(ran, []string{"count"}) {
		t.Fatalf("run 3 over the stopped run 2: %+v, %v (ran %v)", res, err, ran)
	}
	runs, _ := st.Runs(ctx, id)
	if len(runs) != 3 || runs[1].Status != store.Cancelled {
		t.Fatalf("runs: %+v; want run 2 cancelled", runs)
	}
}

// TestBreakpointsRefused: a name that is not a node is an invalid input
// naming the list and the index, and nothing runs.
func TestBreakpointsRefused(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "upd.wf", updateWF)
	th := &engine.Threads{Store: memory.New(), Runner: updateRunner()}
	_, err := th.Run(ctx, plan, "x", nil, nil, &engine.RunOptions{Breakpoints: &engine.Breakpoints{Before: []string{"ask", "aks"}}})
	if engine.KindOf(err) != engine.KindInvalidInput || !strings.Contains(err.Error(), "interrupt_before[1]") || !strings.Contains(err.Error(), `"aks"`) {
		t.Fatalf("unknown node: %v", err)
	}
	if recs, _ := th.Store.Records(ctx, "x", 1); len(recs) != 0 {
		t.Errorf("a refused run wrote %d records", len(recs))
	}
}

// TestBreakpointContinueRolledBack: a run that continues a stop at a
// breakpoint, rolled back, leaves the thread stopped there again.
func TestBreakpointContinueRolledBack(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "upd.wf", updateWF)
		var cancel context.CancelCauseFunc
		th := &engine.Threads{Store: open(), LeaseTTL: time.Minute, Runner: rollbackRunner(func(a string) {
			if a == "count" && cancel != nil {
				cancel(engine.ErrRunRolledBack)
			}
		})}
		if res, err := th.Run(ctx, plan, "p", nil, nil, &engine.RunOptions{Breakpoints: &engine.Breakpoints{Before: []string{"prepare"}}}); err != nil || len(res.Paused) != 1 {
			t.Fatalf("stop before prepare: %+v, %v", res, err)
		}
		stopped, _ := th.Load(ctx, "p")
		c, cf := context.WithCancelCause(ctx)
		defer cf(nil)
		cancel = cf
		if res, err := th.Resume(c, plan, "p", nil, nil); res == nil || res.Status != engine.Cancelled || err == nil {
			t.Fatalf("continue rolled back: %+v, %v", res, err)
		}
		ts, _ := th.Load(ctx, "p")
		if sameJSON(t, ts) != sameJSON(t, stopped) || ts.Status() != engine.Running || !slices.Equal(ts.Paused, []string{"prepare"}) {
			t.Fatalf("after the rollback: paused %v\n%s\nwant\n%s", ts.Paused, sameJSON(t, ts), sameJSON(t, stopped))
		}
		cancel = nil
		if res, err := th.Resume(ctx, plan, "p", nil, nil); err != nil || res.Status != engine.Waiting {
			t.Fatalf("continued again: %+v, %v", res, err)
		}
	})
}
