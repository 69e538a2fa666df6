package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// reviewWF has a subworkflow that asks a person, between two steps.
const reviewWF = `
workflow Publish {
  parameters {
    topic: String = "tides"
  }
  nodes {
    node prep {
      type: FUNCTION
      action: "work"
      inputs {
        x: topic
      }
      outputs {
        y: String
      }
    }
    node review {
      type: WORKFLOW
      workflow: Review
      inputs {
        brief: prep.y
      }
      outputs {
        text: String
      }
    }
    node publish {
      type: FUNCTION
      action: "work"
      inputs {
        x: review.text
      }
      outputs {
        y: String
      }
    }
  }
  edges {
    edge { from: prep; to: review }
    edge { from: review; to: publish }
  }
  initial: prep
  finals: [ publish ]
}

workflow Review {
  parameters {
    brief: String
  }
  nodes {
    node draft {
      type: FUNCTION
      action: "work"
      inputs {
        x: brief
      }
      outputs {
        y: String
      }
    }
    node ask {
      type: HUMAN
      inputs {
        question: "Approve " + draft.y + "?"
      }
      outputs {
        note: String
      }
    }
    node finish {
      type: FUNCTION
      action: "work"
      inputs {
        x: draft.y + " (" + ask.note + ")"
      }
      outputs {
        text: String
      }
    }
  }
  edges {
    edge { from: draft; to: ask }
    edge { from: ask; to: finish }
  }
  initial: draft
  finals: [ finish ]
}
`

// workRunner registers "work": it counts its calls by node path (the
// key's node, Call.Key being "" outside threads) and returns "NODE(x)" in
// its one output.
func workRunner(calls map[string]int, mu *sync.Mutex, hook func(c *engine.Call) error) *engine.Runner {
	reg := engine.NewRegistry()
	reg.Register("work", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		mu.Lock()
		calls[c.Node.Name]++
		mu.Unlock()
		if hook != nil {
			if err := hook(c); err != nil {
				return err
			}
		}
		c.Outputs[0] = flow.StringValue(c.Node.Name + "(" + c.Input("x").Text() + ")")
		return nil
	}))
	return &engine.Runner{Registry: reg}
}

// TestSubflowHumanRunner: a human node inside a subworkflow waits like
// any other (its question named by its path) and Runner.Resume answers
// it; the frame goes on, nothing before it runs again.
func TestSubflowHumanRunner(t *testing.T) {
	plan := compile(t, "review.wf", reviewWF)
	calls := map[string]int{}
	var mu sync.Mutex
	r := workRunner(calls, &mu, nil)
	var events []engine.Event
	obs := engine.ObserverFunc(func(e engine.Event) { events = append(events, e) })
	res, err := r.Run(context.Background(), plan, nil, obs)
	if err != nil || res.Status != engine.Waiting {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	if len(res.Waiting) != 1 || res.Waiting[0].Node != "review/ask" || res.Waiting[0].Question.Text() != "Approve draft(prep(tides))?" {
		t.Fatalf("waiting = %+v", res.Waiting)
	}
	res, err = r.Resume(context.Background(), res, map[string]map[string]flow.Value{res.Waiting[0].ID: {"note": flow.StringValue("ok")}}, obs)
	if err != nil || res.Status != engine.Completed {
		t.Fatalf("resume: %v, %v", res.Status, err)
	}
	if got := res.Output("y").Text(); got != "publish(finish(draft(prep(tides)) (ok)))" {
		t.Errorf("output = %q", got)
	}
	if want := map[string]int{"prep": 1, "draft": 1, "finish": 1, "publish": 1}; !mapsEqual(calls, want) {
		t.Errorf("calls = %v, want %v", calls, want)
	}
	var finished []string
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has Seq %d", i, e.Seq)
		}
		if e.Type == engine.NodeFinished {
			finished = append(finished, e.Node)
		}
	}
	if got := strings.Join(finished, " "); got != "prep review/draft review/ask review/finish review publish" {
		t.Errorf("finished = %q", got)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSubflowHumanThreads: the same in a thread, answered by another
// process (a new Threads on the store); the pending question and the
// history name the inner node by its path.
func TestSubflowHumanThreads(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "review.wf", reviewWF)
		calls := map[string]int{}
		var mu sync.Mutex
		th := &engine.Threads{Runner: workRunner(calls, &mu, nil), Store: open()}
		res, err := th.Run(ctx, plan, "t", nil, nil, nil)
		if err != nil || res.Status != engine.Waiting || len(res.Waiting) != 1 || res.Waiting[0].Node != "review/ask" {
			t.Fatalf("run: %v, %+v, %v", res.Status, res.Waiting, err)
		}
		id := res.Waiting[0].ID
		pend, err := th.Store.Pending(ctx, "t")
		if err != nil || len(pend) != 1 || pend[0].Node != "review/ask" || pend[0].ID != id || string(pend[0].Question) != `"Approve draft(prep(tides))?"` {
			t.Fatalf("pending = %+v, %v", pend, err)
		}
		ts, err := th.Load(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if w := ts.Waiting(); len(w) != 1 || w[0].QuestionID() != id || ts.NodeOf(w[0]) != "review/ask" {
			t.Fatalf("thread waits on %+v", w)
		}

		th2 := &engine.Threads{Runner: workRunner(calls, &mu, nil), Store: open()}
		res, err = th2.Resume(ctx, plan, "t", []engine.Answer{{ID: id, Outputs: map[string]flow.Value{"note": flow.StringValue("fine")}}}, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume: %v, %v", res.Status, err)
		}
		if got := res.Output("y").Text(); got != "publish(finish(draft(prep(tides)) (fine)))" {
			t.Errorf("output = %q", got)
		}
		if want := map[string]int{"prep": 1, "draft": 1, "finish": 1, "publish": 1}; !mapsEqual(calls, want) {
			t.Errorf("calls = %v, want %v", calls, want)
		}
		if pend, _ := th2.Store.Pending(ctx, "t"); len(pend) != 0 {
			t.Errorf("pending after the answer: %+v", pend)
		}
		hist, err := th2.History(ctx, "t", 1)
		if err != nil {
			t.Fatal(err)
		}
		var nodes []string
		for _, e := range hist {
			if e.Node != "" && e.Kind == store.Step {
				nodes = append(nodes, fmt.Sprintf("%s@%d", e.Node, e.Step))
			}
		}
		if got, want := strings.Join(nodes, " "), "prep@1 review/draft@2 review/ask@2 review/ask@2 review/finish@2 publish@3"; got != want {
			t.Errorf("history = %q, want %q", got, want)
		}
	})
}

// TestSubflowResumesInsideFrameAfterCrash: a run stopped in the middle of
// a subworkflow (its process gone) resumes inside the frame: the steps the
// frame finished do not run again, the one in flight does, with the same
// idempotency key.
func TestSubflowResumesInsideFrameAfterCrash(t *testing.T) {
	const wf = `
workflow Outer {
  nodes {
    node first {
      type: FUNCTION
      action: "work"
      inputs {
        x: "a"
      }
      outputs {
        y: String
      }
    }
    node inner {
      type: WORKFLOW
      workflow: Steps
      inputs {
        x: first.y
      }
      outputs {
        y: String
      }
    }
    node last {
      type: FUNCTION
      action: "work"
      inputs {
        x: inner.y
      }
      outputs {
        y: String
      }
    }
  }
  edges {
    edge { from: first; to: inner }
    edge { from: inner; to: last }
  }
  initial: first
  finals: [ last ]
}

workflow Steps {
  parameters {
    x: String
  }
  nodes {
    node s1 {
      type: FUNCTION
      action: "work"
      inputs {
        x: x
      }
      outputs {
        y: String
      }
    }
    node s2 {
      type: FUNCTION
      action: "work"
      inputs {
        x: s1.y
      }
      outputs {
        y: String
      }
    }
    node s3 {
      type: FUNCTION
      action: "work"
      inputs {
        x: s2.y
      }
      outputs {
        y: String
      }
    }
  }
  edges {
    edge { from: s1; to: s2 }
    edge { from: s2; to: s3 }
  }
  initial: s1
  finals: [ s3 ]
}
`
	stores(t, func(t *testing.T, open func() store.Store) {
		plan := load(t, "steps.wf", wf)
		calls := map[string]int{}
		var keys []string
		var mu sync.Mutex
		ctx, cancel := context.WithCancel(context.Background())
		th := &engine.Threads{Runner: workRunner(calls, &mu, func(c *engine.Call) error {
			mu.Lock()
			keys = append(keys, c.Node.Name+"="+c.Key[strings.LastIndexByte(c.Key, '/')+1:])
			mu.Unlock()
			if c.Node.Name == "s2" && ctx.Err() == nil {
				cancel() // the process stops in the middle of the frame
				return ctx.Err()
			}
			return nil
		}), Store: open()}
		res, err := th.Run(ctx, plan, "c", nil, nil, nil)
		if err == nil || res.Status != engine.Cancelled {
			t.Fatalf("stopped run: %v, %v", res.Status, err)
		}
		ts, err := th.Load(context.Background(), "c")
		if err != nil || ts.Status() != engine.Running {
			t.Fatalf("after the stop: %v, %v", ts.Status(), err)
		}
		th2 := &engine.Threads{Runner: th.Runner, Store: open()}
		res, err = th2.Resume(context.Background(), plan, "c", nil, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume: %v, %v", res.Status, err)
		}
		if got := res.Output("y").Text(); got != "last(s3(s2(s1(first(a)))))" {
			t.Errorf("output = %q", got)
		}
		if want := map[string]int{"first": 1, "s1": 1, "s2": 2, "s3": 1, "last": 1}; !mapsEqual(calls, want) {
			t.Errorf("calls = %v, want %v: steps done before the stop ran again", calls, want)
		}
		// The frame's keys are the WORKFLOW node's step, then its own.
		if want := []string{"first=1", "s1=2-1", "s2=2-2", "s2=2-2", "s3=2-3", "last=3"}; !slices.Equal(keys, want) {
			t.Errorf("keys = %q, want %q", keys, want)
		}
	})
}

// TestSubflowMapValues runs a map over a WORKFLOW node, its frames at
// once (parallelism 4 of 24 elements, actions that yield): each element's
// outputs are its own frame's, in element order.
func TestSubflowMapValues(t *testing.T) {
	const wf = `
workflow Batch {
  parameters {
    nums: List[Int]
  }
  nodes {
    node each {
      type: WORKFLOW
      workflow: Square
      map: nums
      as: n
      parallelism: 4
      inputs {
        n: n
      }
      outputs {
        sq: Int
        tag: String
      }
    }
  }
  initial: each
  finals: [ each ]
}

workflow Square {
  parameters {
    n: Int
  }
  variables {
    seen: List[Int] = [] reduce append
  }
  nodes {
    node mul {
      type: FUNCTION
      action: "mul"
      inputs {
        a: n
      }
      outputs {
        p: Int
      }
    }
    node tag {
      type: FUNCTION
      action: "tag"
      inputs {
        p: mul.p
        seen: seen
      }
      outputs {
        sq: Int
        tag: String
      }
    }
  }
  edges {
    edge { from: mul; to: tag
           update: { seen = mul.p } }
  }
  initial: mul
  finals: [ tag ]
}
`
	plan := compile(t, "batch.wf", wf)
	reg := engine.NewRegistry()
	reg.Register("mul", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		n := c.Input("a").Int()
		c.Outputs[0] = flow.IntValue(n * n)
		return nil
	}))
	reg.Register("tag", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		p := c.Input("p").Int()
		if seen := c.Input("seen").List(); len(seen) != 1 || seen[0].Int() != p {
			return fmt.Errorf("frame variables leak: seen = %s for %d", c.Input("seen"), p)
		}
		c.Outputs[0] = flow.IntValue(p)
		c.Outputs[1] = flow.StringValue(fmt.Sprintf("#%d", p))
		return nil
	}))
	var nums []flow.Value
	for i := range 24 {
		nums = append(nums, flow.IntValue(int64(i)))
	}
	var mu sync.Mutex
	var names []string
	obs := engine.ObserverFunc(func(e engine.Event) {
		if e.Type == engine.NodeFinished && strings.Contains(e.Node, "/tag") {
			mu.Lock()
			names = append(names, e.Node)
			mu.Unlock()
		}
	})
	for range 5 {
		names = nil
		res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, map[string]flow.Value{"nums": flow.ListValue(nums...)}, obs)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("run: %v, %v", res.Status, err)
		}
		sq, tag := res.Output("sq").List(), res.Output("tag").List()
		if len(sq) != 24 || len(tag) != 24 {
			t.Fatalf("outputs: %s %s", res.Output("sq"), res.Output("tag"))
		}
		for i := range 24 {
			if sq[i].Int() != int64(i*i) || tag[i].Text() != fmt.Sprintf("#%d", i*i) {
				t.Fatalf("element %d: sq %s tag %s", i, sq[i], tag[i])
			}
		}
		slices.Sort(names)
		if len(names) != 24 || !slices.Contains(names, "each[24]/tag") || !slices.Contains(names, "each[1]/tag") {
			t.Fatalf("inner nodes: %q", names)
		}
	}
}

// TestSubflowErrorNamesInnerNode: an inner node's failure fails the
// WORKFLOW node with a *NodeError naming it by its path, wrapped in the
// WORKFLOW node's.
func TestSubflowErrorNamesInnerNode(t *testing.T) {
	plan := compile(t, "review.wf", reviewWF)
	calls := map[string]int{}
	var mu sync.Mutex
	boom := errors.New("boom")
	r := workRunner(calls, &mu, func(c *engine.Call) error {
		if c.Node.Name == "draft" {
			return boom
		}
		return nil
	})
	res, err := r.Run(context.Background(), plan, nil, nil)
	if res.Status != engine.Failed || !errors.Is(err, boom) {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	var ne *engine.NodeError
	if !errors.As(err, &ne) || ne.Node != "review" {
		t.Fatalf("outer error: %v", err)
	}
	if !errors.As(ne.Err, &ne) || ne.Node != "review/draft" {
		t.Fatalf("inner error: %#v", ne)
	}
}

// TestSubflowNestedThreads: a question two subworkflows deep waits,
// named "b/c/ask", and another process answers it; the run climbs back
// out through both frames.
func TestSubflowNestedThreads(t *testing.T) {
	const wf = `
workflow A {
  nodes {
    node b {
      type: WORKFLOW
      workflow: B
      inputs {
        x: "a"
      }
      outputs {
        y: String
      }
    }
  }
  initial: b
  finals: [ b ]
}

workflow B {
  parameters {
    x: String
  }
  nodes {
    node c {
      type: WORKFLOW
      workflow: C
      inputs {
        x: x + "b"
      }
      outputs {
        y: String
      }
    }
    node add {
      type: FUNCTION
      action: "work"
      inputs {
        x: c.y
      }
      outputs {
        y: String
      }
    }
  }
  edges {
    edge { from: c; to: add }
  }
  initial: c
  finals: [ add ]
}

workflow C {
  parameters {
    x: String
  }
  nodes {
    node double {
      type: FUNCTION
      action: "work"
      inputs {
        x: x + "c"
      }
      outputs {
        y: String
      }
    }
    node ask {
      type: HUMAN
      inputs {
        question: "Keep " + double.y + "?"
      }
      outputs {
        y: String
      }
    }
  }
  edges {
    edge { from: double; to: ask }
  }
  initial: double
  finals: [ ask ]
}
`
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "nested.wf", wf)
		calls := map[string]int{}
		var mu sync.Mutex
		th := &engine.Threads{Runner: workRunner(calls, &mu, nil), Store: open()}
		res, err := th.Run(ctx, plan, "n", nil, nil, nil)
		if err != nil || res.Status != engine.Waiting || len(res.Waiting) != 1 || res.Waiting[0].Node != "b/c/ask" || res.Waiting[0].Question.Text() != "Keep double(abc)?" {
			t.Fatalf("run: %v, %+v, %v", res.Status, res.Waiting, err)
		}
		th2 := &engine.Threads{Runner: workRunner(calls, &mu, nil), Store: open()}
		res, err = th2.Resume(ctx, plan, "n", []engine.Answer{{ID: res.Waiting[0].ID, Outputs: map[string]flow.Value{"y": flow.StringValue("yes")}}}, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume: %v, %v", res.Status, err)
		}
		if got := res.Output("y").Text(); got != "add(yes)" {
			t.Errorf("output = %q", got)
		}
		if want := map[string]int{"double": 1, "add": 1}; !mapsEqual(calls, want) {
			t.Errorf("calls = %v, want %v", calls, want)
		}
		hist, err := th2.History(ctx, "n", 1)
		if err != nil {
			t.Fatal(err)
		}
		var nodes []string
		for _, e := range hist {
			if e.Node != "" && e.Kind == store.Step {
				nodes = append(nodes, e.Node)
			}
		}
		if got, want := strings.Join(nodes, " "), "b/c/double b/c/ask b/c/ask b/add"; got != want {
			t.Errorf("history = %q, want %q", got, want)
		}
	})
}

// TestSubflowFork: a thread forked while it waits inside a subworkflow
// waits there too (its question recorded with its path), and answering
// the fork goes on inside the frame, independently of the source.
func TestSubflowFork(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "review.wf", reviewWF)
	calls := map[string]int{}
	var mu sync.Mutex
	th := &engine.Threads{Runner: workRunner(calls, &mu, nil), Store: memory.New()}
	res, err := th.Run(ctx, plan, "src", nil, nil, nil)
	if err != nil || res.Status != engine.Waiting {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	ts, err := th.Load(ctx, "src")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := th.Fork(ctx, "src", ts.Seq, "fork", &engine.ForkOptions{Plan: plan}); err != nil {
		t.Fatal(err)
	}
	pend, err := th.Store.Pending(ctx, "fork")
	if err != nil || len(pend) != 1 || pend[0].Node != "review/ask" || string(pend[0].Question) != `"Approve draft(prep(tides))?"` {
		t.Fatalf("fork's pending = %+v, %v", pend, err)
	}
	res, err = th.Resume(ctx, plan, "fork", []engine.Answer{{ID: pend[0].ID, Outputs: map[string]flow.Value{"note": flow.StringValue("forked")}}}, nil)
	if err != nil || res.Status != engine.Completed || res.Output("y").Text() != "publish(finish(draft(prep(tides)) (forked)))" {
		t.Fatalf("fork's resume: %v, %s, %v", res.Status, res.Output("y"), err)
	}
	if src, _ := th.Load(ctx, "src"); src.Status() != engine.Waiting {
		t.Errorf("source thread: %v, want still waiting", src.Status())
	}
	if want := map[string]int{"prep": 1, "draft": 1, "finish": 1, "publish": 1}; !mapsEqual(calls, want) {
		t.Errorf("calls = %v, want %v", calls, want)
	}
}

// TestSubflowRecordsStayFlat: a subworkflow that loops, appending to a
// list, is recorded step by step as what changed (the appended element),
// not as its whole state at every step: the records of its late steps are
// no bigger than those of its early ones.
func TestSubflowRecordsStayFlat(t *testing.T) {
	const wf = `
workflow Outer {
  nodes {
    node loop {
      type: WORKFLOW
      workflow: Loop
      outputs {
        n: Int
      }
    }
  }
  initial: loop
  finals: [ loop ]
}

workflow Loop {
  variables {
    log: List[String] = [] reduce append
    i: Int = 0
  }
  nodes {
    node step {
      type: FUNCTION
      action: "step"
      inputs {
        i: i
      }
      outputs {
        line: String
      }
    }
    node done {
      type: FUNCTION
      action: "done"
      inputs {
        i: i
      }
      outputs {
        n: Int
      }
    }
  }
  edges {
    edge { from: step; to: step; condition: i < 60
           update: { log = step.line; i = i + 1 } }
    edge { from: step; to: done }
  }
  initial: step
  finals: [ done ]
}
`
	ctx := context.Background()
	plan := load(t, "loop.wf", wf)
	reg := engine.NewRegistry()
	reg.Register("step", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		c.Outputs[0] = flow.StringValue(fmt.Sprintf("line %03d %s", c.Input("i").Int(), strings.Repeat("x", 200)))
		return nil
	}))
	reg.Register("done", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		c.Outputs[0] = c.Input("i")
		return nil
	}))
	st := memory.New()
	th := &engine.Threads{Runner: &engine.Runner{Registry: reg}, Store: st}
	res, err := th.Run(ctx, plan, "l", nil, nil, nil)
	if err != nil || res.Status != engine.Completed || res.Output("n").Int() != 60 {
		t.Fatalf("run: %v, %s, %v", res.Status, res.Output("n"), err)
	}
	recs, err := st.Records(ctx, "l", 1)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range recs {
		if r.Kind == store.Step {
			sizes = append(sizes, len(r.Data))
		}
	}
	if len(sizes) < 60 {
		t.Fatalf("%d step records", len(sizes))
	}
	early, late := sizes[5], sizes[55]
	if late > early+100 {
		t.Errorf("step records grow with the frame's state: %d bytes at step 5, %d at step 55", early, late)
	}
	// The thread's state folded from them is the frame's: the run ended,
	// and resuming nothing is refused as for any ended run.
	ts, err := th.Load(ctx, "l")
	if err != nil || ts.Status() != engine.Completed {
		t.Fatalf("load: %v, %v", ts.Status(), err)
	}
}

// TestFoldPartialFrameWithoutFrame: a partial frame state that has no
// frame of its task and attempt to apply to is a *StateError.
func TestFoldPartialFrameWithoutFrame(t *testing.T) {
	st := &engine.State{Workflow: "W", Control: engine.Control{Final: -1,
		Tasks: []engine.TaskState{{ID: 3, Sub: &engine.SubState{Attempt: 1, Control: engine.Control{Final: -1}}}}}}
	for _, ts := range []engine.TaskState{
		{ID: 4, Sub: &engine.SubState{Attempt: 1, Partial: true}}, // no frame of task 4
		{ID: 3, Sub: &engine.SubState{Attempt: 2, Partial: true}}, // task 3's frame is attempt 1
	} {
		err := st.Fold(nil, engine.Control{Final: -1, Tasks: []engine.TaskState{ts}})
		var se *engine.StateError
		if !errors.As(err, &se) || !strings.Contains(se.Field, "sub") {
			t.Errorf("fold of %+v: %v, want a *StateError", ts, err)
		}
	}
	if err := st.Fold(nil, engine.Control{Final: -1, Tasks: []engine.TaskState{{ID: 3, Sub: &engine.SubState{Attempt: 1, Partial: true,
		Cells: []engine.CellValue{{Cell: 0, Value: flow.IntValue(7)}}, Control: engine.Control{Final: -1, Path: []int{0}}}}}}); err != nil {
		t.Fatal(err)
	}
	if sub := st.Control.Tasks[0].Sub; sub.Partial || len(sub.Cells) != 1 || sub.Cells[0].Value.Int() != 7 || len(sub.Control.Path) != 1 {
		t.Errorf("folded frame = %+v", sub)
	}
}

// TestSubflowDeadlines: a subworkflow's own max_time and its WORKFLOW
// node's timeout bound its frame: the frame fails when they pass, even in
// the middle of an action that ignores its context, and the node's retry
// and error edges apply.
func TestSubflowDeadlines(t *testing.T) {
	const wf = `
workflow Outer {
  nodes {
    node capped {
      type: WORKFLOW
      workflow: Slow
      outputs {
        y: String
      }
    }
    node timed {
      type: WORKFLOW
      workflow: Fast
      outputs {
        y: String
      }
      timeout: 100ms
      retry {
        max: 2
      }
    }
    node recover {
      type: FUNCTION
      action: "recover"
      inputs {
        why: why
      }
      outputs {
        y: String
      }
    }
  }
  edges {
    edge { from: capped; to: timed }
    edge { from: capped; to: recover; on: error; override: { why: error } }
    edge { from: recover; to: timed }
  }
  initial: capped
  finals: [ timed ]
}

workflow Slow {
  limits { max_time: 100ms }
  nodes {
    node slow {
      type: FUNCTION
      action: "slow"
      outputs {
        y: String
      }
    }
  }
  initial: slow
  finals: [ slow ]
}

workflow Fast {
  nodes {
    node first {
      type: FUNCTION
      action: "first"
      outputs {
        y: String
      }
    }
  }
  initial: first
  finals: [ first ]
}
`
	plan := compile(t, "deadlines.wf", wf)
	release := make(chan struct{})
	defer close(release)
	var mu sync.Mutex
	firstCalls := 0
	var why string
	reg := engine.NewRegistry()
	reg.Register("slow", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		<-release // ignores its context
		return nil
	}))
	reg.Register("first", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		mu.Lock()
		firstCalls++
		n := firstCalls
		mu.Unlock()
		if n == 1 {
			<-release // the first attempt outlives the node's timeout
		}
		c.Outputs[0] = flow.StringValue(fmt.Sprintf("attempt %d", n))
		return nil
	}))
	reg.Register("recover", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		mu.Lock()
		why = c.Input("why").Text()
		mu.Unlock()
		c.Outputs[0] = flow.StringValue("recovered")
		return nil
	}))
	res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
	if err != nil || res.Status != engine.Completed {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	if want := "subworkflow Slow: max_time (100ms) exceeded at node capped/slow"; !strings.Contains(why, want) {
		t.Errorf("why = %q, want it to contain %q", why, want)
	}
	if got := res.Output("y").Text(); got != "attempt 2" || firstCalls != 2 {
		t.Errorf("timed: %q after %d calls, want the second attempt's output", got, firstCalls)
	}
	if got := strings.Join(res.Path, " "); got != "capped recover timed" {
		t.Errorf("path = %q", got)
	}
}
