package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

func registry(t testing.TB, actions map[string]engine.ActionFunc) *engine.Registry {
	t.Helper()
	reg := engine.NewRegistry()
	for name, fn := range actions {
		if err := reg.Register(name, fn); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

const retryWF = `
workflow Retry {
  nodes {
    node call {
      type: FUNCTION
      action: "flaky"
      retry { max: 4; backoff: 100ms; factor: 3; max_backoff: 500ms }
      outputs {
        ok: Bool
      }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: call; to: done }
  }
  initial: call
  finals: [ done ]
}
`

func TestRunnerRetryBackoff(t *testing.T) {
	plan := compile(t, "retry.wf", retryWF)
	var calls atomic.Int32
	reg := registry(t, map[string]engine.ActionFunc{
		"flaky": func(ctx context.Context, c *engine.Call) error {
			if calls.Add(1) < 4 {
				return errors.New("503 service unavailable")
			}
			c.Outputs[0] = flow.BoolValue(true)
			return nil
		},
	})
	var delays []time.Duration
	r := &engine.Runner{Registry: reg, Sleep: func(ctx context.Context, d time.Duration) error {
		delays = append(delays, d)
		return nil
	}}
	var retries []string
	res, err := r.Run(context.Background(), plan, nil, engine.ObserverFunc(func(e engine.Event) {
		if e.Type == engine.NodeRetrying {
			retries = append(retries, e.String())
		}
	}))
	if err != nil || res.Status != engine.Completed {
		t.Fatalf("run: %v %v", res.Status, err)
	}
	want := []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, 500 * time.Millisecond}
	if len(delays) != 3 || delays[0] != want[0] || delays[1] != want[1] || delays[2] != want[2] {
		t.Errorf("delays = %v, want %v (backoff 100ms, factor 3, capped at 500ms)", delays, want)
	}
	if len(retries) != 3 || !strings.Contains(retries[0], "attempt 1 failed: 503 service unavailable; retrying in 100ms") {
		t.Errorf("retry events = %q", retries)
	}
}

func TestRunnerRetryExhausted(t *testing.T) {
	plan := compile(t, "retry.wf", retryWF)
	reg := registry(t, map[string]engine.ActionFunc{
		"flaky": func(ctx context.Context, c *engine.Call) error { return errors.New("boom") },
	})
	r := &engine.Runner{Registry: reg, Sleep: func(context.Context, time.Duration) error { return nil }}
	res, err := r.Run(context.Background(), plan, nil, nil)
	var ne *engine.NodeError
	if !errors.As(err, &ne) || ne.Node != "call" || ne.Step != 1 {
		t.Fatalf("err = %v, want a NodeError at call, step 1", err)
	}
	if !strings.Contains(err.Error(), "after 4 attempts: boom") || res.Status != engine.Failed {
		t.Errorf("err = %v, status %v", err, res.Status)
	}
}

const slowWF = `
workflow Slow {
  nodes {
    node slow {
      type: FUNCTION
      action: "hang"
      timeout: 50ms
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: slow; to: done }
  }
  initial: slow
  finals: [ done ]
}
`

// An action that ignores its context is still preempted by the node's
// timeout: the run does not hang.
func TestRunnerNodeTimeoutPreempts(t *testing.T) {
	plan := compile(t, "slow.wf", slowWF)
	release := make(chan struct{})
	defer close(release)
	reg := registry(t, map[string]engine.ActionFunc{
		"hang": func(ctx context.Context, c *engine.Call) error { <-release; return nil },
	})
	start := time.Now()
	_, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
	var te *engine.TimeoutError
	if !errors.As(err, &te) || te.Node != "slow" || te.Timeout != 50*time.Millisecond {
		t.Fatalf("err = %v, want TimeoutError for slow after 50ms", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v: the timeout did not preempt", el)
	}
}

func TestRunnerMaxTime(t *testing.T) {
	src := strings.Replace(slowWF, "timeout: 50ms", "", 1)
	src = strings.Replace(src, "finals: [ done ]", "finals: [ done ]\n  limits { max_time: 80ms }", 1)
	plan := compile(t, "maxtime.wf", src)
	release := make(chan struct{})
	defer close(release)
	reg := registry(t, map[string]engine.ActionFunc{
		"hang": func(ctx context.Context, c *engine.Call) error { <-release; return nil },
	})
	_, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
	var le *engine.LimitError
	if !errors.As(err, &le) || le.Limit != engine.LimitMaxTime || le.Node != "slow" || le.Value != "80ms" {
		t.Fatalf("err = %v, want max_time LimitError at slow", err)
	}
}

func TestRunnerCancel(t *testing.T) {
	plan := compile(t, "slow.wf", strings.Replace(slowWF, "timeout: 50ms", "", 1))
	ctx, cancel := context.WithCancel(context.Background())
	reg := registry(t, map[string]engine.ActionFunc{
		"hang": func(ctx context.Context, c *engine.Call) error { cancel(); <-ctx.Done(); return ctx.Err() },
	})
	res, err := (&engine.Runner{Registry: reg}).Run(ctx, plan, nil, nil)
	if err == nil || !errors.Is(err, context.Canceled) || res.Status != engine.Cancelled {
		t.Fatalf("err = %v status %v, want context.Canceled", err, res.Status)
	}
}

func TestRunnerPanicIsAnError(t *testing.T) {
	plan := compile(t, "slow.wf", strings.Replace(slowWF, "timeout: 50ms", "", 1))
	reg := registry(t, map[string]engine.ActionFunc{
		"hang": func(ctx context.Context, c *engine.Call) error { panic("nil map write") },
	})
	_, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
	var pe *engine.PanicError
	if !errors.As(err, &pe) || pe.Action != "hang" || !strings.Contains(pe.Stack, "runner_test.go") {
		t.Fatalf("err = %v, want a PanicError with a stack", err)
	}
}

func TestRunnerUnknownAction(t *testing.T) {
	plan := compile(t, "slow.wf", slowWF)
	_, err := (&engine.Runner{Registry: engine.NewRegistry()}).Run(context.Background(), plan, nil, nil)
	var ue *engine.UnknownActionError
	if !errors.As(err, &ue) || ue.Node != "slow" || ue.Action != "hang" {
		t.Fatalf("err = %v, want UnknownActionError", err)
	}
}

const fanWF = `
workflow Fan {
  variables {
    log: List[String] = [] reduce append
  }
  nodes {
    node start {
      type: FUNCTION
      action: "noop"
    }
    node a {
      type: FUNCTION
      action: "slow_name"
      outputs {
        name: String
      }
      set: { log = name }
    }
    node b {
      type: FUNCTION
      action: "fast_name"
      outputs {
        name: String
      }
      set: { log = name }
    }
    node join {
      type: FUNCTION
      action: "noop"
    }
  }
  edges {
    edge { from: start; to: [a, b]; join: join }
    edge { from: a; to: join }
    edge { from: b; to: join }
  }
  initial: start
  finals: [ join ]
}
`

// Branches run concurrently, and their writes merge in branch order, not in
// the order they finish.
func TestRunnerFanoutConcurrentDeterministic(t *testing.T) {
	plan := compile(t, "fan.wf", fanWF)
	bDone := make(chan struct{})
	reg := registry(t, map[string]engine.ActionFunc{
		"noop": func(context.Context, *engine.Call) error { return nil },
		"slow_name": func(ctx context.Context, c *engine.Call) error {
			<-bDone // a can only finish after b: proves they run at once
			c.Outputs[0] = flow.StringValue("a")
			return nil
		},
		"fast_name": func(ctx context.Context, c *engine.Call) error {
			defer close(bDone)
			c.Outputs[0] = flow.StringValue("b")
			return nil
		},
	})
	for range 20 {
		res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Vars[0].Value.String(); got != `["a", "b"]` {
			t.Fatalf("log = %s, want [\"a\", \"b\"] (branch order)", got)
		}
		bDone = make(chan struct{})
	}
}

const subWF = `
workflow Outer {
  nodes {
    node ask {
      type: WORKFLOW
      workflow: Inner
      inputs {
        input_text: input_text + "!"
      }
      outputs {
        shout: String
      }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: ask; to: done }
  }
  initial: ask
  finals: [ done ]
}

workflow Inner {
  nodes {
    node upper {
      type: FUNCTION
      action: "upper"
      outputs {
        shout: String
      }
    }
  }
  initial: upper
  finals: [ upper ]
}
`

func TestRunnerSubflow(t *testing.T) {
	plan := compile(t, "sub.wf", subWF)
	reg := registry(t, map[string]engine.ActionFunc{
		"upper": func(ctx context.Context, c *engine.Call) error {
			c.Outputs[0] = flow.StringValue(strings.ToUpper(c.Input("input_text").Str()))
			return nil
		},
	})
	var nodes []string
	res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, map[string]flow.Value{"input_text": flow.StringValue("hi")}, engine.ObserverFunc(func(e engine.Event) {
		if e.Type == engine.NodeFinished {
			nodes = append(nodes, e.Node)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Path; strings.Join(got, " ") != "ask done" {
		t.Errorf("path = %v", got)
	}
	if got := strings.Join(nodes, " "); got != "ask/upper ask done" {
		t.Errorf("finished nodes = %q, want the inner node prefixed", got)
	}
	_ = res
}

func TestRunnerResume(t *testing.T) {
	plan := compile(t, "ask.wf", yearWF)
	var answered int
	reg := registry(t, map[string]engine.ActionFunc{
		"answer": func(ctx context.Context, c *engine.Call) error {
			answered++
			c.Outputs[0] = flow.StringValue("revenue in " + c.Input("y").String())
			return nil
		},
	})
	r := &engine.Runner{Registry: reg}
	res, err := r.Run(context.Background(), plan, nil, nil)
	if err != nil || res.Status != engine.Waiting || len(res.Waiting) != 1 || res.Waiting[0].Question.Str() != "Which year?" {
		t.Fatalf("first run: %v %+v %v", res.Status, res.Waiting, err)
	}
	res, err = r.Resume(context.Background(), res, map[string]map[string]flow.Value{res.Waiting[0].ID: {"year": flow.IntValue(2019)}}, nil)
	if err != nil || res.Status != engine.Completed || res.Output("text").Str() != "revenue in 2019" || answered != 1 {
		t.Fatalf("resume: %v %v %v answered=%d", res.Status, res.Outputs, err, answered)
	}
	if strings.Join(res.Path, " ") != "ask answer" {
		t.Errorf("path = %v: the human node ran again or twice", res.Path)
	}
}

func TestRunnerInputErrors(t *testing.T) {
	src := `
workflow P {
  parameters {
    year: Int
  }
  nodes {
    node done {
      type: END
    }
  }
  initial: done
  finals: [ done ]
}
`
	plan := compile(t, "p.wf", src)
	r := &engine.Runner{Registry: engine.NewRegistry()}
	for _, tc := range []struct {
		params map[string]flow.Value
		want   string
	}{
		{nil, "parameter year: required (type Int) and not given"},
		{map[string]flow.Value{"year": flow.StringValue("x")}, "parameter year: want Int, got String"},
		{map[string]flow.Value{"year": flow.IntValue(1), "yaer": flow.IntValue(1)}, `parameter yaer: not a parameter of workflow P; did you mean "year"?`},
	} {
		_, err := r.Run(context.Background(), plan, tc.params, nil)
		var ie *engine.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("params %v: err = %v, want %q", tc.params, err, tc.want)
		}
	}
}

// Event sequence numbers are dense and increasing, also with concurrency.
func TestRunnerEventSeq(t *testing.T) {
	plan := compile(t, "fan.wf", fanWF)
	reg := registry(t, map[string]engine.ActionFunc{
		"noop":      func(context.Context, *engine.Call) error { return nil },
		"slow_name": func(ctx context.Context, c *engine.Call) error { c.Outputs[0] = flow.StringValue("a"); return nil },
		"fast_name": func(ctx context.Context, c *engine.Call) error { c.Outputs[0] = flow.StringValue("b"); return nil },
	})
	var seqs []int64
	_, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, engine.ObserverFunc(func(e engine.Event) {
		seqs = append(seqs, e.Seq)
		if e.Time.IsZero() {
			t.Errorf("event %v has no time", e)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("seqs = %v", seqs)
		}
	}
}

// Slow actions in a wide fan-out all run at once: the executor starts a
// goroutine for every task still queued after a short delay, so 20
// branches of 100ms take about 100ms, not 2s.
func TestRunnerWideFanoutOfSlowActionsRunsAtOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString("workflow Wide {\n  nodes {\n    node start {\n      type: FUNCTION\n      action: \"noop\"\n    }\n")
	var names []string
	for i := range 20 {
		name := fmt.Sprintf("b%d", i)
		names = append(names, name)
		fmt.Fprintf(&b, "    node %s {\n      type: FUNCTION\n      action: \"slow\"\n    }\n", name)
	}
	b.WriteString("    node join {\n      type: END\n    }\n  }\n  edges {\n")
	fmt.Fprintf(&b, "    edge { from: start; to: [%s]; join: join }\n", strings.Join(names, ", "))
	for _, n := range names {
		fmt.Fprintf(&b, "    edge { from: %s; to: join }\n", n)
	}
	b.WriteString("  }\n  initial: start\n  finals: [ join ]\n}\n")
	plan := compile(t, "wide.wf", b.String())
	var running, peak atomic.Int32
	reg := registry(t, map[string]engine.ActionFunc{
		"noop": func(context.Context, *engine.Call) error { return nil },
		"slow": func(ctx context.Context, c *engine.Call) error {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(100 * time.Millisecond)
			running.Add(-1)
			return nil
		},
	})
	start := time.Now()
	res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
	if err != nil || res.Status != engine.Completed {
		t.Fatal(res.Status, err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("20 parallel 100ms branches took %v", el)
	}
	if p := peak.Load(); p != 20 {
		t.Errorf("at most %d branches ran at once, want 20", p)
	}
}

// A state that does not fit the plan is refused with the field named.
func TestRestoreRejectsForeignState(t *testing.T) {
	plan := compile(t, "retry.wf", retryWF)
	m, err := engine.NewMachine(plan, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	st := m.Snapshot()
	other := *st
	other.Workflow = "Other"
	if _, err := engine.RestoreMachine(plan, &other, false); err == nil || !strings.Contains(err.Error(), "workflow") {
		t.Errorf("foreign workflow: %v", err)
	}
	bad := *st
	bad.Cells = append(bad.Cells, engine.CellValue{Cell: 9999, Value: flow.IntValue(1)})
	var se *engine.StateError
	if _, err := engine.RestoreMachine(plan, &bad, false); !errors.As(err, &se) || !strings.HasPrefix(se.Field, "cells[") {
		t.Errorf("cell out of range: %v", err)
	}
	badTask := *st
	badTask.Control.Tasks = []engine.TaskState{{ID: 1, Token: 7}}
	if _, err := engine.RestoreMachine(plan, &badTask, false); !errors.As(err, &se) || se.Field != "control.tasks[0].token" {
		t.Errorf("task with a missing token: %v", err)
	}
}

// A reducer of the caller's that fails fails the run, with the variable
// named; its error is not swallowed.
func TestCustomReducerError(t *testing.T) {
	src := `
workflow R {
  variables {
    total: Int = 0 reduce capped
  }
  nodes {
    node a {
      type: FUNCTION
      action: "noop"
      set: { total = 7 }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: a; to: done }
  }
  initial: a
  finals: [ done ]
}
`
	m, ds := lang.LoadSource("r.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	capped := func(old, v flow.Value) (flow.Value, error) {
		if old.Int()+v.Int() > 5 {
			return flow.Null, errors.New("over the cap of 5")
		}
		return flow.IntValue(old.Int() + v.Int()), nil
	}
	plan, ds := flow.Compile(m.Main(), &flow.CompileOptions{Reducers: map[string]flow.Reducer{"capped": capped}})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	reg := registry(t, map[string]engine.ActionFunc{"noop": func(context.Context, *engine.Call) error { return nil }})
	_, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "total: over the cap of 5") {
		t.Fatalf("err = %v", err)
	}
}

// A reducer of the caller's registered under a built-in's name replaces
// the built-in, as Compile documents: the engine runs it, even for
// "replace" (it used to compare the name and skip it).
func TestCustomReducerShadowsBuiltin(t *testing.T) {
	src := `
workflow R {
  variables {
    total: Int = 1
    best: Int = 10 reduce max
  }
  nodes {
    node a {
      type: FUNCTION
      action: "noop"
      set: { total = 7, best = 3 }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: a; to: done }
  }
  initial: a
  finals: [ done ]
}
`
	m, ds := lang.LoadSource("r.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	add := func(old, v flow.Value) (flow.Value, error) { return flow.IntValue(old.Int() + v.Int()), nil }
	plan, ds := flow.Compile(m.Main(), &flow.CompileOptions{Reducers: map[string]flow.Reducer{"replace": add, "max": add}})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	reg := registry(t, map[string]engine.ActionFunc{"noop": func(context.Context, *engine.Call) error { return nil }})
	res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, v := range res.Vars {
		got[v.Name] = v.Value.Int()
	}
	if got["total"] != 8 || got["best"] != 13 {
		t.Errorf("total = %d, best = %d; want 8 and 13 (the caller's reducers)", got["total"], got["best"])
	}
}
