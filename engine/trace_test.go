package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store/memory"
)

// traceKey is the context key under which traceLog puts what it started.
type traceKey struct{}

// traceLog is an engine.Tracer that writes a line per call and end.
type traceLog struct {
	mu    sync.Mutex
	lines []string
}

// snapshot returns a copy of the lines written so far.
func (l *traceLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

func (l *traceLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *traceLog) StartRun(ctx context.Context, r engine.TracedRun) (context.Context, func(engine.Status, error)) {
	l.add("run %s thread=%q run=%d id=%t resumed=%t", r.Workflow, r.Thread, r.Run, r.RunID != "", r.Resumed)
	return context.WithValue(ctx, traceKey{}, "run"), func(s engine.Status, err error) {
		l.add("end run %v err=%v", s, err != nil)
	}
}

func (l *traceLog) StartAttempt(ctx context.Context, c *engine.Call) (context.Context, func(engine.AttemptEnd)) {
	name := fmt.Sprintf("%s[%d]#%d", c.Node.Name, c.Item, c.Attempt)
	l.add("attempt %s parent=%v key=%t", name, ctx.Value(traceKey{}), c.Key != "")
	return context.WithValue(ctx, traceKey{}, name), func(e engine.AttemptEnd) {
		var ir *engine.Interrupt
		switch {
		case errors.As(e.Err, &ir):
			l.add("end %s waiting", name)
		case e.Retrying:
			l.add("end %s err=%q retry in %s", name, e.Err, e.Delay)
		case e.Fallback:
			l.add("end %s err=%q fallback", name, e.Err)
		case e.Err != nil:
			l.add("end %s err=%q", name, e.Err)
		default:
			l.add("end %s ok", name)
		}
	}
}

// A Tracer sees each drive of a run and each attempt of a node, in order,
// with what follows a failed attempt (a retry with its delay, the node's
// fallback), and an action runs in the context its attempt's StartAttempt
// returned, under the run's. A resumed thread's drive says so and names
// the same run.
func TestTracerSeesRunsAttemptsRetriesAndFallbacks(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "fb.wf", fallbackWF)
	tl := &traceLog{}
	var ctxErrs []string
	var mu sync.Mutex
	checkCtx := func(ctx context.Context, c *engine.Call) {
		want := fmt.Sprintf("%s[%d]#%d", c.Node.Name, c.Item, c.Attempt)
		if got := ctx.Value(traceKey{}); got != want {
			mu.Lock()
			ctxErrs = append(ctxErrs, fmt.Sprintf("%s ran with %v", want, got))
			mu.Unlock()
		}
	}
	flaky := 0
	r := &engine.Runner{Registry: registry(t, map[string]engine.ActionFunc{
		"flaky": func(ctx context.Context, c *engine.Call) error {
			checkCtx(ctx, c)
			flaky++
			return fmt.Errorf("HTTP 500 (%d)", flaky)
		},
		"note": func(ctx context.Context, c *engine.Call) error {
			checkCtx(ctx, c)
			if c.Item == 2 {
				return errors.New("second element failed")
			}
			return c.SetOutput("text", flow.StringValue("first"))
		},
	}), Sleep: func(context.Context, time.Duration) error { return nil }, Tracer: tl}
	th := &engine.Threads{Runner: r, Store: memory.New()}
	res, err := th.Run(ctx, plan, "t1", nil, nil, nil)
	if err != nil || res.Status != engine.Waiting {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	res, err = th.Resume(ctx, plan, "t1", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2024")}}}, nil)
	if err != nil || res.Status != engine.Completed {
		t.Fatalf("resume: %v, %v", res.Status, err)
	}
	want := []string{
		`run Fb thread="t1" run=1 id=true resumed=false`,
		`attempt classify[0]#1 parent=run key=true`,
		`end classify[0]#1 err="HTTP 500 (1)" retry in 1ms`,
		`attempt classify[0]#2 parent=run key=true`,
		`end classify[0]#2 err="HTTP 500 (2)" retry in 2ms`,
		`attempt classify[0]#3 parent=run key=true`,
		`end classify[0]#3 err="HTTP 500 (3)" fallback`,
		`attempt note[1]#1 parent=run key=true`,
		`end note[1]#1 ok`,
		`attempt note[2]#1 parent=run key=true`,
		`end note[2]#1 err="second element failed" fallback`,
		`attempt ask[0]#1 parent=run key=true`,
		`end ask[0]#1 waiting`,
		`end run waiting err=false`,
		`run Fb thread="t1" run=1 id=true resumed=true`,
		`end run completed err=false`,
	}
	if got := strings.Join(tl.lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("trace:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if len(ctxErrs) > 0 {
		t.Errorf("actions ran outside their attempt's context:\n%s", strings.Join(ctxErrs, "\n"))
	}
}

// Parallel attempts (a map with parallelism) each end once, and a failed
// run's end carries its error; a run not kept in a thread is named by its
// workflow only.
func TestTracerParallelAttemptsAndAFailedRun(t *testing.T) {
	plan := load(t, "par.wf", `
workflow Par {
  nodes {
    node each {
      type: FUNCTION
      action: "work"
      map: ["a", "b", "c", "d", "e", "f"]
      parallelism: 3
      outputs { text: String }
    }
    node done { type: END }
  }
  edges { edge { from: each; to: done } }
  initial: each
  finals: [ done ]
}`)
	tl := &traceLog{}
	r := &engine.Runner{Registry: registry(t, map[string]engine.ActionFunc{
		"work": func(ctx context.Context, c *engine.Call) error {
			if c.Item == 5 {
				return errors.New("five is out")
			}
			return c.SetOutput("text", flow.StringValue("x"))
		},
	}), Tracer: tl}
	res, err := r.Run(context.Background(), plan, nil, nil)
	if err == nil || res.Status != engine.Failed {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	// An attempt in flight when the run failed is abandoned, not waited
	// for: it may end after Run returns, and ends once all the same.
	var lines, starts, ends []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		lines, starts, ends = tl.snapshot(), nil, nil
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "attempt "):
				starts = append(starts, strings.Fields(l)[1])
			case strings.HasPrefix(l, "end each"):
				ends = append(ends, l)
			}
		}
		if len(starts) == len(ends) || time.Now().After(deadline) {
			break
		}
	}
	if lines[0] != `run Par thread="" run=0 id=false resumed=false` || !slices.Contains(lines, "end run failed err=true") {
		t.Errorf("run lines: %q", lines)
	}
	slices.Sort(starts)
	slices.Sort(ends)
	// The run stops at the failure: the elements after it may not start,
	// but each that started ends once, and the failed one ends failed.
	if len(starts) != len(ends) || !slices.Contains(ends, `end each[5]#1 err="five is out"`) {
		t.Errorf("attempts %q, ends %q", starts, ends)
	}
	for i, s := range starts {
		if !strings.HasPrefix(ends[i], "end "+s+" ") {
			t.Errorf("attempt %s ends as %q", s, ends[i])
		}
	}
}
