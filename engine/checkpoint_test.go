package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// stateJSON is a state's values and control state, to compare states by.
func stateJSON(t testing.TB, ts *engine.ThreadState) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Run   string
		N     int
		Seq   int64
		State *engine.State
	}{ts.Run, ts.RunNumber, ts.Seq, ts.State})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// loopAfter returns i and acc of loopWF's state after its k-th step
// (k from 1) of a run of n steps: the edge of step k sets i = k and adds
// (k-1)² to acc, but the last one only adds.
func loopAfter(k, n int64) (i, acc int64) {
	for j := int64(0); j < k; j++ {
		acc += j * j
	}
	return min(k, n-1), acc
}

func TestThreadLoadAt(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "loop.wf", loopWF)
		th := &engine.Threads{Runner: stepRunner(new([]string), new(sync.Mutex), nil), Store: open()}
		if _, err := th.Run(ctx, plan, "t", map[string]flow.Value{"n": flow.IntValue(6)}, nil, nil); err != nil {
			t.Fatal(err)
		}
		hist, err := th.History(ctx, "t", 1)
		if err != nil {
			t.Fatal(err)
		}
		// After each record, the values the steps so far made.
		k := int64(0)
		for _, h := range hist {
			if h.Node == "step" {
				k++
			}
			ts, err := th.LoadAt(ctx, "t", h.Seq)
			if err != nil {
				t.Fatalf("LoadAt(%d): %v", h.Seq, err)
			}
			wi, wacc := loopAfter(k, 6)
			i, _ := ts.Value("i")
			acc, _ := ts.Value("acc")
			if ts.Seq != h.Seq || i.Int() != wi || acc.Int() != wacc || ts.Status() != h.Status {
				t.Errorf("LoadAt(%d): seq %d, i %s, acc %s, %s; want i %d, acc %d, %s", h.Seq, ts.Seq, i, acc, ts.Status(), wi, wacc, h.Status)
			}
		}
		last := hist[len(hist)-1].Seq
		latest, _ := th.Load(ctx, "t")
		if at, _ := th.LoadAt(ctx, "t", last); stateJSON(t, at) != stateJSON(t, latest) {
			t.Errorf("LoadAt(last) differs from Load:\n%s\n%s", stateJSON(t, at), stateJSON(t, latest))
		}
		for _, c := range []struct {
			thread string
			seq    int64
			want   string
		}{
			{"t", 0, fmt.Sprintf("has no record 0 (its log holds records 1..%d)", last)},
			{"t", last + 1, fmt.Sprintf("has no record %d (its log holds records 1..%d)", last+1, last)},
			{"nope", 1, "thread nope: does not exist"},
		} {
			_, err := th.LoadAt(ctx, c.thread, c.seq)
			if engine.KindOf(err) != engine.KindNotFound || !strings.Contains(fmt.Sprint(err), c.want) || !errors.Is(err, store.ErrNotFound) {
				t.Errorf("LoadAt(%s, %d) = %v (%s); want not_found, %q", c.thread, c.seq, err, engine.KindOf(err), c.want)
			}
		}
	})
}

func TestThreadCheckpoints(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "loop.wf", loopWF)
		th := &engine.Threads{Runner: stepRunner(new([]string), new(sync.Mutex), nil), Store: open()}
		if _, err := th.Run(ctx, plan, "t", map[string]flow.Value{"n": flow.IntValue(8)}, nil, nil); err != nil {
			t.Fatal(err)
		}
		hist, _ := th.History(ctx, "t", 1)
		var all []int64 // every checkpoint's Seq, newest first
		for _, h := range slices.Backward(hist) {
			all = append(all, h.Seq)
		}
		last := all[0]
		for _, c := range []struct {
			opts engine.CheckpointOptions
			want []int64
		}{
			{engine.CheckpointOptions{}, all},
			{engine.CheckpointOptions{Limit: 3}, all[:3]},
			{engine.CheckpointOptions{Limit: 100}, all},
			{engine.CheckpointOptions{Before: last}, all[1:]},
			{engine.CheckpointOptions{Before: 5, Limit: 2}, []int64{4, 3}},
			{engine.CheckpointOptions{Before: 2}, []int64{1}},
			{engine.CheckpointOptions{Before: 1}, []int64{}},
			{engine.CheckpointOptions{Before: last + 10, Limit: 1}, all[:1]},
		} {
			cps, err := th.Checkpoints(ctx, "t", c.opts)
			if err != nil {
				t.Fatalf("%+v: %v", c.opts, err)
			}
			got := []int64{}
			for _, cp := range cps {
				got = append(got, cp.Seq)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%+v: seqs %v, want %v", c.opts, got, c.want)
			}
			for _, cp := range cps {
				h := hist[slices.IndexFunc(hist, func(h engine.HistoryEntry) bool { return h.Seq == cp.Seq })]
				at, err := th.LoadAt(ctx, "t", cp.Seq)
				if err != nil {
					t.Fatal(err)
				}
				if stateJSON(t, cp.State) != stateJSON(t, at) {
					t.Errorf("%+v: checkpoint %d's state is not LoadAt's:\n%s\n%s", c.opts, cp.Seq, stateJSON(t, cp.State), stateJSON(t, at))
				}
				wantSource := map[bool]string{true: engine.SourceInput, false: engine.SourceLoop}[cp.Seq == 1]
				if cp.Parent != cp.Seq-1 || cp.Node != h.Node || cp.Step != h.Step || cp.Run != 1 || cp.RunID != at.Run || cp.Source != wantSource || !cp.Time.Equal(h.Time) {
					t.Errorf("%+v: checkpoint %+v; want parent %d, node %q, step %d, run 1 (%s), source %s, time %v", c.opts, cp, cp.Seq-1, h.Node, h.Step, at.Run, wantSource, h.Time)
				}
			}
		}
		for _, opts := range []engine.CheckpointOptions{{Limit: -1}, {Before: -1}} {
			if _, err := th.Checkpoints(ctx, "t", opts); engine.KindOf(err) != engine.KindInvalidInput {
				t.Errorf("%+v: %v; want invalid_input", opts, err)
			}
		}
		if _, err := th.Checkpoints(ctx, "nope", engine.CheckpointOptions{}); engine.KindOf(err) != engine.KindNotFound {
			t.Errorf("checkpoints of a missing thread: %v", err)
		}
	})
}

// TestCheckpointStatesAreTheirOwn: each checkpoint's state is the state
// after its record, not a later one that folding the log on changed in
// place: a variable set again, a map's element lists, a subworkflow
// frame's cells.
func TestCheckpointStatesAreTheirOwn(t *testing.T) {
	ctx := context.Background()
	reg := engine.NewRegistry()
	reg.Register("scale", engine.ActionFunc(scale))
	for _, c := range []struct {
		name   string
		plan   *flow.Plan
		runner *engine.Runner
		answer []engine.Answer // to resume the run with
	}{
		{"loop", load(t, "loop.wf", loopWF), stepRunner(new([]string), new(sync.Mutex), nil), nil},
		{"map", load(t, "map.wf", mapWF(2, 1)), &engine.Runner{Registry: reg}, nil},
		{"subworkflow", load(t, "review.wf", reviewWF), workRunner(map[string]int{}, new(sync.Mutex), nil),
			[]engine.Answer{{Outputs: map[string]flow.Value{"note": flow.StringValue("fine")}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			th := &engine.Threads{Runner: c.runner, Store: memory.New()}
			res, err := th.Run(ctx, c.plan, "t", nil, nil, nil)
			if err == nil && c.answer != nil {
				res, err = th.Resume(ctx, c.plan, "t", c.answer, nil)
			}
			if err != nil || res.Status != engine.Completed {
				t.Fatalf("run: %v", err)
			}
			cps, err := th.Checkpoints(ctx, "t", engine.CheckpointOptions{})
			if err != nil {
				t.Fatal(err)
			}
			distinct := map[string]bool{}
			for _, cp := range cps {
				at, err := th.LoadAt(ctx, "t", cp.Seq)
				if err != nil {
					t.Fatal(err)
				}
				got, want := stateJSON(t, cp.State), stateJSON(t, at)
				if got != want {
					t.Errorf("checkpoint %d:\n got %s\nwant %s", cp.Seq, got, want)
				}
				distinct[got] = true
			}
			if len(distinct) != len(cps) || len(cps) < 4 {
				t.Errorf("%d checkpoints, %d distinct states", len(cps), len(distinct))
			}
		})
	}
}

const updateWF = `
workflow Upd {
  variables {
    topic: String
  }
  nodes {
    node prepare {
      type: FUNCTION
      action: "count"
      outputs {
        n: Int
      }
    }
    node ask {
      type: HUMAN
      question: "Which year?"
      outputs {
        year: String
      }
    }
    node answer {
      type: FUNCTION
      action: "join"
      inputs {
        t: topic
        y: ask.year
        n: prepare.n
      }
      outputs {
        out: String
      }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: prepare; to: ask }
    edge { from: ask; to: answer }
    edge { from: answer; to: done }
  }
  initial: prepare
  finals: [ done ]
}
`

func updateRunner() *engine.Runner {
	reg := engine.NewRegistry()
	reg.Register("count", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		return c.SetOutput("n", flow.IntValue(1))
	}))
	reg.Register("join", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		return c.SetOutput("out", flow.StringValue(fmt.Sprintf("%s/%s/%d", c.Input("t").Text(), c.Input("y").Text(), c.Input("n").Int())))
	}))
	return &engine.Runner{Registry: reg}
}

func year(y string) []engine.Answer {
	return []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue(y)}}}
}

// TestThreadUpdate: an update of a waiting run keeps it waiting, and the
// Resume that answers it sees the new values; an update of an ended run
// is what the next Run starts from; the update's record reads back in
// Load, LoadAt, History, Checkpoints, Fork and after Prune.
func TestThreadUpdate(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "upd.wf", updateWF)
		th := &engine.Threads{Runner: updateRunner(), Store: open()}
		init := &engine.RunOptions{Init: map[string]flow.Value{"topic": flow.StringValue("cats")}}
		if res, err := th.Run(ctx, plan, "t", nil, nil, init); err != nil || res.Status != engine.Waiting {
			t.Fatalf("run: %v", err)
		}
		before, _ := th.Load(ctx, "t")
		ts, err := th.Update(ctx, "t", map[string]flow.Value{"topic": flow.StringValue("dogs"), "prepare.n": flow.IntValue(7), "input_text": flow.StringValue("hello")}, &engine.UpdateOptions{Plan: plan, AsNode: "prepare"})
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := ts.Value("input_text"); v.Text() != "hello" {
			t.Errorf("input_text after the update = %s", v)
		}
		upd := before.Seq + 1
		check := func(what string, ts *engine.ThreadState, topic string, n int64) {
			t.Helper()
			v, _ := ts.Value("topic")
			pn, _ := ts.Value("prepare.n")
			if v.Text() != topic || pn.Int() != n {
				t.Errorf("%s: topic %s, prepare.n %s; want %s, %d", what, v, pn, topic, n)
			}
		}
		check("Update's state", ts, "dogs", 7)
		if ts.Seq != upd || ts.Status() != engine.Waiting || ts.Run != before.Run || ts.RunNumber != 1 {
			t.Errorf("after the update: seq %d, %s, run %s %d; want seq %d, waiting, run %s 1", ts.Seq, ts.Status(), ts.Run, ts.RunNumber, upd, before.Run)
		}
		loaded, _ := th.Load(ctx, "t")
		if stateJSON(t, loaded) != stateJSON(t, ts) {
			t.Errorf("Load after the update differs from Update's state:\n%s\n%s", stateJSON(t, loaded), stateJSON(t, ts))
		}
		if w := loaded.Waiting(); len(w) != 1 || loaded.NodeOf(w[0]) != "ask" {
			t.Errorf("after the update the run waits on %+v; want ask", w)
		}
		if pend, err := th.Store.Pending(ctx, "t"); err != nil || len(pend) != 1 || pend[0].Node != "ask" {
			t.Errorf("pending after the update: %+v, %v", pend, err)
		}
		if at, _ := th.LoadAt(ctx, "t", upd-1); at != nil {
			check("LoadAt before the update", at, "cats", 1)
		}
		hist, _ := th.History(ctx, "t", upd)
		if len(hist) != 1 || !hist[0].Update || hist[0].Node != "prepare" || hist[0].Kind != store.Snapshot || hist[0].Status != engine.Waiting || !slices.Equal(hist[0].Next, []string{"ask"}) {
			t.Errorf("history of the update: %+v", hist)
		}
		cps, _ := th.Checkpoints(ctx, "t", engine.CheckpointOptions{Limit: 2})
		if len(cps) != 2 || cps[0].Seq != upd || cps[0].Source != engine.SourceUpdate || cps[0].Node != "prepare" || cps[0].Parent != upd-1 || cps[0].RunID != before.Run {
			t.Fatalf("checkpoints: %+v", cps)
		}
		check("newest checkpoint", cps[0].State, "dogs", 7)
		check("checkpoint before the update", cps[1].State, "cats", 1)

		// A fork at the update starts from it, waiting.
		fts, err := th.Fork(ctx, "t", upd, "f", nil)
		if err != nil {
			t.Fatal(err)
		}
		check("fork at the update", fts, "dogs", 7)

		// The resume sees the new values.
		res, err := th.Resume(ctx, plan, "t", year("2019"), nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume after the update: %v, %v", res, err)
		}
		final, _ := th.Load(ctx, "t")
		if out, _ := final.Value("answer.out"); out.Text() != "dogs/2019/7" {
			t.Errorf("answer.out after the resume = %s; want dogs/2019/7", out)
		}
		res, err = th.Resume(ctx, plan, "f", year("1999"), nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume of the fork: %v, %v", res, err)
		}
		if fs, _ := th.Load(ctx, "f"); fs != nil {
			if out, _ := fs.Value("answer.out"); out.Text() != "dogs/1999/7" {
				t.Errorf("fork's answer.out = %s; want dogs/1999/7", out)
			}
		}
		// In the fork's history, the fork's origin is on its first
		// snapshot only, not on an update's.
		if _, err := th.Update(ctx, "f", map[string]flow.Value{"topic": flow.StringValue("eels")}, nil); err != nil {
			t.Fatal(err)
		}
		fh, _ := th.History(ctx, "f", 1)
		if first, last := fh[0], fh[len(fh)-1]; first.Forked == nil || *first.Forked != (engine.ForkOrigin{Thread: "t", Seq: upd}) || first.Update ||
			last.Forked != nil || !last.Update || last.Node != "" {
			t.Errorf("fork's history: first %+v, last %+v", first, last)
		}
		fcps, _ := th.Checkpoints(ctx, "f", engine.CheckpointOptions{})
		if fcps[0].Source != engine.SourceUpdate || fcps[len(fcps)-1].Source != engine.SourceFork || fcps[len(fcps)-1].Parent != 0 {
			t.Errorf("fork's checkpoints: newest %+v, oldest %+v", fcps[0], fcps[len(fcps)-1])
		}

		// An ended thread: its next run starts from the update.
		if _, err := th.Update(ctx, "t", map[string]flow.Value{"topic": flow.StringValue("birds")}, nil); err != nil {
			t.Fatal(err)
		}
		if res, err := th.Run(ctx, plan, "t", nil, nil, nil); err != nil || res.Status != engine.Waiting {
			t.Fatalf("second run: %v", err)
		}
		if res, err := th.Resume(ctx, plan, "t", year("2020"), nil); err != nil || res.Status != engine.Completed {
			t.Fatalf("second resume: %v", err)
		}
		final, _ = th.Load(ctx, "t")
		if out, _ := final.Value("answer.out"); out.Text() != "birds/2020/1" {
			t.Errorf("answer.out of the run after the update = %s; want birds/2020/1", out)
		}

		// Prune keeps the last run: the log starts at the update that
		// run folds from, and reads back.
		if _, err := th.Store.Prune(ctx, "t", store.PruneOptions{KeepRuns: 1}); err != nil {
			t.Fatal(err)
		}
		pruned, err := th.Load(ctx, "t")
		if err != nil || stateJSON(t, pruned) != stateJSON(t, final) {
			t.Fatalf("Load after Prune: %v\n%s\n%s", err, stateJSON(t, pruned), stateJSON(t, final))
		}
		hist, err = th.History(ctx, "t", 1)
		if err != nil || len(hist) == 0 || !hist[0].Update || hist[0].Seq <= upd {
			t.Fatalf("history after Prune: %+v, %v; want it to start at the second update", hist, err)
		}
		if _, err := th.LoadAt(ctx, "t", upd); engine.KindOf(err) != engine.KindNotFound || !strings.Contains(err.Error(), fmt.Sprintf("its log holds records %d..%d", hist[0].Seq, final.Seq)) {
			t.Errorf("LoadAt of a pruned record: %v", err)
		}
		if at, err := th.LoadAt(ctx, "t", hist[0].Seq); err != nil {
			t.Error(err)
		} else {
			check("LoadAt of the second update after Prune", at, "birds", 7) // the first run's end, updated
		}
	})
}

// TestThreadUpdateRefused: an update that cannot be made is an error of
// the kind it is, and writes nothing.
func TestThreadUpdateRefused(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "upd.wf", updateWF)
	other := load(t, "loop.wf", loopWF)
	th := &engine.Threads{Runner: updateRunner(), Store: memory.New()}
	if _, err := th.Run(ctx, plan, "t", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := th.Store.CreateThread(ctx, &store.Thread{ID: "empty", Workflow: "Upd"}); err != nil {
		t.Fatal(err)
	}
	before, _ := th.Load(ctx, "t")
	for _, c := range []struct {
		thread string
		set    map[string]flow.Value
		opts   *engine.UpdateOptions
		kind   engine.Kind
		want   string
	}{
		{"t", map[string]flow.Value{"topc": flow.StringValue("x")}, nil, engine.KindInvalidInput, `"topc" is not a variable, slot, parameter or node output; did you mean "topic"`},
		{"t", map[string]flow.Value{"answer.t": flow.StringValue("x")}, nil, engine.KindInvalidInput, `"answer.t" is not a variable`},
		{"t", map[string]flow.Value{"topic": flow.IntValue(3)}, &engine.UpdateOptions{Plan: plan}, engine.KindInvalidInput, "update: topic:"},
		{"t", map[string]flow.Value{"topic": flow.StringValue("x")}, &engine.UpdateOptions{Plan: other}, engine.KindMismatch, "not workflow Loop's plan"},
		{"t", map[string]flow.Value{"topic": flow.StringValue("x")}, &engine.UpdateOptions{AsNode: "asks"}, engine.KindInvalidInput, `as node "asks": the workflow has no such node; did you mean "ask"`},
		{"empty", map[string]flow.Value{"topic": flow.StringValue("x")}, nil, engine.KindNotFound, "has no run yet"},
		{"nope", map[string]flow.Value{"topic": flow.StringValue("x")}, nil, engine.KindNotFound, "does not exist"},
	} {
		_, err := th.Update(ctx, c.thread, c.set, c.opts)
		if engine.KindOf(err) != c.kind || !strings.Contains(fmt.Sprint(err), c.want) {
			t.Errorf("update of %s with %v: %v (%s); want %s, %q", c.thread, c.set, err, engine.KindOf(err), c.kind, c.want)
		}
	}
	if after, _ := th.Load(ctx, "t"); stateJSON(t, after) != stateJSON(t, before) {
		t.Errorf("refused updates changed the thread:\n%s\n%s", stateJSON(t, before), stateJSON(t, after))
	}
}

// TestThreadUpdateLease: while another process holds the thread's lease,
// an update is refused as a conflict, leased or not, and writes nothing;
// once the lease is released it goes through, and writes under its own
// lease.
func TestThreadUpdateLease(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "upd.wf", updateWF)
		st := open()
		th := &engine.Threads{Runner: updateRunner(), Store: st, Owner: "B", LeaseTTL: time.Minute}
		if _, err := th.Run(ctx, plan, "t", nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		ls := open().(store.Leaser)
		l, err := ls.Claim(ctx, "t", "A", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		before := records(t, st, "t")
		set := map[string]flow.Value{"topic": flow.StringValue("x")}
		for _, ttl := range []time.Duration{time.Minute, 0} {
			u := &engine.Threads{Runner: updateRunner(), Store: st, Owner: "B", LeaseTTL: ttl}
			if _, err := u.Update(ctx, "t", set, nil); engine.KindOf(err) != engine.KindConflict || !errors.Is(err, store.ErrLeaseHeld) {
				t.Errorf("update (lease TTL %v) while A holds the lease: %v (%s); want conflict, store.ErrLeaseHeld", ttl, err, engine.KindOf(err))
			}
		}
		if after := records(t, st, "t"); len(after) != len(before) {
			t.Fatalf("refused updates wrote records %d..%d", before[len(before)-1].Seq+1, after[len(after)-1].Seq)
		}
		if err := ls.Release(ctx, l); err != nil {
			t.Fatal(err)
		}
		ts, err := th.Update(ctx, "t", set, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs := records(t, st, "t")
		if r := recs[len(recs)-1]; r.Seq != ts.Seq || r.Fence <= l.Fence {
			t.Errorf("the update's record %d has fence %d; want its own lease's, above A's %d", r.Seq, r.Fence, l.Fence)
		}
		res, err := th.Resume(ctx, plan, "t", year("2001"), nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume after the update: %v", err)
		}
		final, _ := th.Load(ctx, "t")
		if out, _ := final.Value("answer.out"); out.Text() != "x/2001/1" {
			t.Errorf("answer.out = %s; want x/2001/1", out)
		}
	})
}

// BenchmarkCheckpoints reads the newest 10 checkpoints of a thread of
// 1000 steps.
func BenchmarkCheckpoints(b *testing.B) {
	ctx := context.Background()
	plan := load(b, "loop.wf", loopWF)
	th := &engine.Threads{Runner: stepRunner(new([]string), new(sync.Mutex), nil), Store: memory.New()}
	if _, err := th.Run(ctx, plan, "t", map[string]flow.Value{"n": flow.IntValue(1000)}, nil, nil); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts engine.CheckpointOptions
	}{{"limit10", engine.CheckpointOptions{Limit: 10}}, {"before500limit10", engine.CheckpointOptions{Before: 500, Limit: 10}}, {"all", engine.CheckpointOptions{}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cps, err := th.Checkpoints(ctx, "t", c.opts)
				if err != nil || len(cps) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("history", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := th.History(ctx, "t", 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// recordCounter counts the records Records returns.
type recordCounter struct {
	store.Store
	mu   sync.Mutex
	read int
}

func (s *recordCounter) Records(ctx context.Context, threadID string, from int64) ([]*store.Record, error) {
	recs, err := s.Store.Records(ctx, threadID, from)
	s.mu.Lock()
	s.read += len(recs)
	s.mu.Unlock()
	return recs, err
}

func (s *recordCounter) reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.read
	s.read = 0
	return n
}

// TestCheckpointsPagedLongThread: on a long thread of several runs, with
// snapshots, a rollback (Restore) and an update, every page of
// Checkpoints (each Before, several Limits) is the same slice of the full
// listing, state and all; and the newest checkpoint reads the log from
// its last snapshot on, not the whole log.
func TestCheckpointsPagedLongThread(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "loop.wf", loopWF)
		cs := &recordCounter{Store: open()}
		th := &engine.Threads{Runner: stepRunner(new([]string), new(sync.Mutex), nil), Store: cs}
		run := func(n int64) {
			t.Helper()
			if _, err := th.Run(ctx, plan, "t", map[string]flow.Value{"n": flow.IntValue(n)}, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		run(120)
		end1, err := th.Load(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		run(60)
		if _, err := th.Restore(ctx, "t", end1.Seq, nil); err != nil {
			t.Fatal(err)
		}
		run(90)
		if _, err := th.Update(ctx, "t", map[string]flow.Value{"acc": flow.IntValue(7)}, nil); err != nil {
			t.Fatal(err)
		}
		run(40)
		cs.reads()
		full, err := th.Checkpoints(ctx, "t", engine.CheckpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		logLen := cs.reads()
		if logLen < 300 || len(full) < 250 {
			t.Fatalf("a log of %d records, %d checkpoints: not long", logLen, len(full))
		}
		same := func(what string, got, want []engine.Checkpoint) {
			t.Helper()
			if len(got) != len(want) {
				t.Fatalf("%s: %d checkpoints, want %d", what, len(got), len(want))
			}
			for i := range got {
				g, w := got[i], want[i]
				if g.Seq != w.Seq || g.Parent != w.Parent || g.Run != w.Run || g.RunID != w.RunID || g.Step != w.Step ||
					g.Node != w.Node || g.Source != w.Source || !g.Time.Equal(w.Time) || stateJSON(t, g.State) != stateJSON(t, w.State) {
					t.Fatalf("%s: checkpoint %d is\n%+v\n%s\nwant\n%+v\n%s", what, i, g, stateJSON(t, g.State), w, stateJSON(t, w.State))
				}
			}
		}
		befores := []int64{0, full[0].Seq + 5}
		for i, c := range full {
			if i%3 == 0 || i < 40 {
				befores = append(befores, c.Seq, c.Seq+1)
			}
		}
		for _, before := range befores {
			var want []engine.Checkpoint
			for _, c := range full {
				if before == 0 || c.Seq < before {
					want = append(want, c)
				}
			}
			for _, limit := range []int{0, 1, 3, 40} {
				if limit == 0 && len(want)%7 != 0 {
					continue // the whole log: a few suffice
				}
				got, err := th.Checkpoints(ctx, "t", engine.CheckpointOptions{Before: before, Limit: limit})
				if err != nil {
					t.Fatalf("before %d, limit %d: %v", before, limit, err)
				}
				w := want
				if limit > 0 && len(w) > limit {
					w = w[:limit]
				}
				same(fmt.Sprintf("before %d, limit %d", before, limit), got, w)
			}
		}
		cs.reads()
		if _, err := th.Checkpoints(ctx, "t", engine.CheckpointOptions{Limit: 1}); err != nil {
			t.Fatal(err)
		}
		if n := cs.reads(); n > logLen/4 {
			t.Errorf("the newest checkpoint read %d of the log's %d records", n, logLen)
		}
	})
}
