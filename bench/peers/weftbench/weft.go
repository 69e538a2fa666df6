// Package weftbench is weft's side of the side-by-side benchmark: the
// shapes of internal/benchshapes (the same workflows bench/ measures),
// wrapped as harness engines. "weft-wf" runs the .wf spelling of each
// shape and "weft-go" the typed Go API's; both run on the same engine.
// The checkpointed shapes (S4) run with engine.Async durability, the
// trade LangGraph makes by default (weft-go through graph.Threads);
// "weft-wf-sync" runs them with engine.Sync, weft's default, which commits
// every step before the next.
package weftbench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/weftlang/weft/bench/peers/harness"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/internal/benchshapes"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/sqlite"
)

// Version is what the table prints for weft: the module is replaced by the
// working tree, so it is the tree's own state.
const Version = "working tree"

// WF returns the engine that runs the .wf spelling of each shape.
func WF() harness.Engine {
	return harness.Engine{Name: "weft-wf", Version: Version, Prepare: prepareWF}
}

// Go returns the engine that runs the typed Go API's spelling of each
// shape.
func Go() harness.Engine {
	return harness.Engine{Name: "weft-go", Version: Version, Prepare: prepareGo}
}

// WFSync returns the engine that runs the .wf spelling of the S4 shapes
// with engine.Sync durability: a commit per step.
func WFSync() harness.Engine {
	return harness.Engine{Name: "weft-wf-sync", Version: Version, Prepare: func(ctx context.Context, s harness.Shape, dir string) (harness.Run, func() error, error) {
		if s != harness.S4Memory && s != harness.S4SQLite {
			return nil, nil, harness.ErrUnsupported
		}
		return prepareS4(ctx, s, dir, engine.Sync)
	}}
}

func noClose() error { return nil }

// wantChain checks an S1 result: count 10 and the log n0..n9 in order.
func wantChain(count int, log []string) error {
	if count != 10 || len(log) != 10 {
		return fmt.Errorf("chain10: count %d, log %v; want 10 and n0..n9", count, log)
	}
	if !slices.Equal(log, chainNames) {
		return fmt.Errorf("chain10: log %v; want n0..n9", log)
	}
	return nil
}

// wantFan checks an S3 log: p00..p99, each once.
func wantFan(log []string) error {
	if len(log) != 100 {
		return fmt.Errorf("fanout100: %d log entries; want 100", len(log))
	}
	if slices.Equal(log, fanNames) {
		return nil
	}
	s := slices.Sorted(slices.Values(log))
	for i, name := range s {
		if name != fmt.Sprintf("p%02d", i) {
			return fmt.Errorf("fanout100: log %v; want p00..p99 each once", log)
		}
	}
	return nil
}

// chainNames and fanNames are the expected logs, made once so that the
// checks on the hot path do not allocate.
var (
	chainNames = names("n%d", 10)
	fanNames   = names("p%02d", 100)
)

func names(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

// checkChain checks an S1 result held as values, without allocating when
// it is right.
func checkChain(count, log flow.Value) error {
	if count.Int() == 10 && log.Len() == 10 {
		ok := true
		for i, e := range log.List() {
			ok = ok && e.Str() == chainNames[i]
		}
		if ok {
			return nil
		}
	}
	return wantChain(int(count.Int()), strings(log))
}

// checkFan checks an S3 log held as a value. The engine appends branch
// outputs in branch order, so p00..p99 in order is the fast path; any
// other order goes through wantFan.
func checkFan(log flow.Value) error {
	if log.Len() == 100 {
		ok := true
		for i, e := range log.List() {
			ok = ok && e.Str() == fanNames[i]
		}
		if ok {
			return nil
		}
	}
	return wantFan(strings(log))
}

func strings(v flow.Value) []string {
	out := make([]string, 0, v.Len())
	for _, e := range v.List() {
		out = append(out, e.Str())
	}
	return out
}

func prepareWF(ctx context.Context, s harness.Shape, dir string) (harness.Run, func() error, error) {
	reg := benchshapes.Actions()
	r := &engine.Runner{Registry: reg}
	switch s {
	case harness.S1:
		plan, err := benchshapes.Plan("s1.wf", benchshapes.S1Source(), reg)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, _ int) error {
			res, err := r.Run(ctx, plan, nil, nil)
			if err != nil {
				return err
			}
			return checkChain(res.Vars[0].Value, res.Vars[1].Value)
		}, noClose, nil
	case harness.S2:
		plan, err := benchshapes.Plan("s2.wf", benchshapes.S2Source, reg)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, _ int) error {
			res, err := r.Run(ctx, plan, nil, nil)
			if err != nil {
				return err
			}
			if n := res.Vars[0].Value.Int(); n != 1000 {
				return fmt.Errorf("loop1000: count %d; want 1000", n)
			}
			return nil
		}, noClose, nil
	case harness.S3:
		plan, err := benchshapes.Plan("s3.wf", benchshapes.S3Source(), reg)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, _ int) error {
			res, err := r.Run(ctx, plan, nil, nil)
			if err != nil {
				return err
			}
			return checkFan(res.Vars[0].Value)
		}, noClose, nil
	case harness.S4Memory, harness.S4SQLite:
		return prepareS4(ctx, s, dir, engine.Async)
	}
	return nil, nil, harness.ErrUnsupported
}

// openS4 opens the store of an S4 shape: in memory, or a SQLite file in
// dir.
func openS4(ctx context.Context, s harness.Shape, dir string) (store.Store, error) {
	if s == harness.S4SQLite {
		return sqlite.Open(ctx, filepath.Join(dir, "s4.db"))
	}
	return memory.New(), nil
}

// prepareS4 builds S1 run in threads, a new one per invocation, in memory
// or in a SQLite file, with durability d.
func prepareS4(ctx context.Context, s harness.Shape, dir string, d engine.Durability) (harness.Run, func() error, error) {
	reg := benchshapes.Actions()
	plan, err := benchshapes.Plan("s4.wf", benchshapes.S1Source(), reg)
	if err != nil {
		return nil, nil, err
	}
	st, err := openS4(ctx, s, dir)
	if err != nil {
		return nil, nil, err
	}
	th := &engine.Threads{Runner: &engine.Runner{Registry: reg}, Store: st, Durability: d}
	return func(ctx context.Context, i int) error {
		res, err := th.Run(ctx, plan, fmt.Sprintf("s4-%d", i), nil, nil, nil)
		if err != nil {
			return err
		}
		if res.Status != engine.Completed {
			return fmt.Errorf("chain10 checkpointed: status %v", res.Status)
		}
		return checkChain(res.Vars[0].Value, res.Vars[1].Value)
	}, st.Close, nil
}

// goShape wraps a shape built with the Go API: each invocation starts from
// the zero state and check judges the state at the end.
func goShape[S any](c *graph.Compiled[S], err error, check func(S) error) (harness.Run, func() error, error) {
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context, _ int) error {
		var zero S
		out, err := c.Invoke(ctx, zero)
		if err != nil {
			return err
		}
		return check(out)
	}, noClose, nil
}

func prepareGo(ctx context.Context, s harness.Shape, dir string) (harness.Run, func() error, error) {
	switch s {
	case harness.S1:
		c, err := benchshapes.S1Go()
		return goShape(c, err, func(s benchshapes.ChainState) error { return wantChain(s.Count, s.Log) })
	case harness.S2:
		c, err := benchshapes.S2Go()
		return goShape(c, err, func(s benchshapes.LoopState) error {
			if s.Count != 1000 {
				return fmt.Errorf("loop1000: count %d; want 1000", s.Count)
			}
			return nil
		})
	case harness.S3:
		c, err := benchshapes.S3Go()
		return goShape(c, err, func(s benchshapes.FanState) error { return wantFan(s.Log) })
	case harness.S4Memory, harness.S4SQLite:
		c, err := benchshapes.S1Go()
		if err != nil {
			return nil, nil, err
		}
		st, err := openS4(ctx, s, dir)
		if err != nil {
			return nil, nil, err
		}
		th := c.Threads(st, &graph.ThreadOptions{Durability: engine.Async})
		return func(ctx context.Context, i int) error {
			out, err := th.Invoke(ctx, fmt.Sprintf("s4-%d", i), benchshapes.ChainState{})
			if err != nil {
				return err
			}
			return wantChain(out.Count, out.Log)
		}, st.Close, nil
	}
	return nil, nil, harness.ErrUnsupported
}
