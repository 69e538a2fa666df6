package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/sqlite"
)

func load(t testing.TB, name, src string) *flow.Plan {
	t.Helper()
	m, ds := lang.LoadSource(name, []byte(src), nil)
	if ds.HasErrors() {
		t.Fatalf("%s does not load:\n%v", name, ds)
	}
	plan, ds := flow.Compile(m.Main(), nil)
	if ds.HasErrors() {
		t.Fatalf("%s does not compile:\n%v", name, ds)
	}
	return plan
}

// stores runs fn on each store kind the engine tests use.
func stores(t *testing.T, fn func(t *testing.T, open func() store.Store)) {
	t.Run("memory", func(t *testing.T) {
		s := memory.New()
		fn(t, func() store.Store { return s })
	})
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "weft.db")
		var mu sync.Mutex
		var opened []store.Store
		t.Cleanup(func() {
			for _, s := range opened {
				s.Close()
			}
		})
		fn(t, func() store.Store {
			// Every call is a new connection to the file: as a new
			// process would see it.
			s, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			opened = append(opened, s)
			mu.Unlock()
			return s
		})
	})
}

const chatWF = `
workflow Chat {
  variables {
    messages: List[String] = [] reduce append
    turns: Int = 0 reduce sum
    rephrased: Int = 0
    last: String
  }
  nodes {
    node reply {
      type: FUNCTION
      action: "reply"
      inputs {
        text: input_text
        turns: turns
        seen: rephrased
      }
      outputs {
        answer: String
      }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: reply; to: done
           update: { messages = [input_text, reply.answer]; turns = 1; rephrased = rephrased + 1; last = reply.answer } }
  }
  initial: reply
  finals: [ done ]
}
`

// resultVar returns a variable of a run's result; a missing one fails the
// test.
func resultVar(t testing.TB, res *engine.Result, name string) flow.Value {
	t.Helper()
	for _, nv := range res.Vars {
		if nv.Name == name {
			return nv.Value
		}
	}
	t.Fatalf("the result has no variable %s", name)
	return flow.Null
}

func chatRunner(t testing.TB, calls *[]string) *engine.Runner {
	reg := engine.NewRegistry()
	reg.Register("reply", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		*calls = append(*calls, c.Key)
		return c.SetOutput("answer", flow.StringValue(fmt.Sprintf("re: %s (turn %d, seen %d)", c.Input("text").Text(), c.Input("turns").Int(), c.Input("seen").Int())))
	}))
	return &engine.Runner{Registry: reg}
}

func TestThreadCarriesStateAcrossRuns(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "chat.wf", chatWF)
		var calls []string
		for i, q := range []string{"hello", "how are you", "bye"} {
			// A new Threads (a new process) for every turn.
			th := &engine.Threads{Runner: chatRunner(t, &calls), Store: open()}
			res, err := th.Run(ctx, plan, "c1", map[string]flow.Value{"input_text": flow.StringValue(q)}, nil, nil)
			if err != nil {
				t.Fatalf("turn %d: %v", i+1, err)
			}
			if res.Status != engine.Completed || res.Run != i+1 || res.Thread != "c1" {
				t.Fatalf("turn %d: status %s, run %d, thread %q", i+1, res.Status, res.Run, res.Thread)
			}
		}
		th := &engine.Threads{Runner: chatRunner(t, &calls), Store: open()}
		ts, err := th.Load(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		msgs, _ := ts.Value("messages")
		want := []string{"hello", "re: hello (turn 0, seen 0)", "how are you", "re: how are you (turn 1, seen 0)", "bye", "re: bye (turn 2, seen 0)"}
		var got []string
		for _, m := range msgs.List() {
			got = append(got, m.Text())
		}
		if !slices.Equal(got, want) {
			t.Errorf("messages = %q\nwant %q", got, want)
		}
		// turns (a reducer) accumulates; rephrased (initial value, no
		// reducer) starts again each run; last (no initial value) keeps
		// the previous run's value until overwritten.
		if v, _ := ts.Value("turns"); v.Int() != 3 {
			t.Errorf("turns = %s, want 3", v)
		}
		if v, _ := ts.Value("rephrased"); v.Int() != 1 {
			t.Errorf("rephrased = %s, want 1", v)
		}
		if v, _ := ts.Value("last"); v.Text() != "re: bye (turn 2, seen 0)" {
			t.Errorf("last = %s", v)
		}
		if ts.RunNumber != 3 || ts.Status() != engine.Completed {
			t.Errorf("run %d, status %s", ts.RunNumber, ts.Status())
		}
		runs, err := th.Store.Runs(ctx, "c1")
		if err == nil && len(runs) == 3 {
			// THREAD/RUN-ID/STEP: each run's random id in its keys.
			want := []string{"c1/1-" + runs[0].ID + "/1", "c1/2-" + runs[1].ID + "/1", "c1/3-" + runs[2].ID + "/1"}
			if !slices.Equal(calls, want) {
				t.Errorf("idempotency keys = %q, want %q", calls, want)
			}
		}
		if err != nil || len(runs) != 3 || runs[2].Status != "completed" || runs[2].Number != 3 {
			t.Fatalf("runs = %+v, %v", runs, err)
		}
		hist, err := th.History(ctx, "c1", 1)
		if err != nil {
			t.Fatal(err)
		}
		// run 1: snapshot, reply; runs 2, 3: start, reply.
		var kinds []string
		for _, h := range hist {
			switch {
			case h.Kind == store.Snapshot:
				kinds = append(kinds, fmt.Sprintf("%d:snapshot>%s", h.Run, strings.Join(h.Next, ",")))
			case h.Start:
				kinds = append(kinds, fmt.Sprintf("%d:start>%s", h.Run, strings.Join(h.Next, ",")))
			default:
				kinds = append(kinds, fmt.Sprintf("%d:%s>%s", h.Run, h.Node, strings.Join(h.Next, ",")))
			}
		}
		if want := []string{"1:snapshot>reply", "1:reply>done", "2:start>reply", "2:reply>done", "3:start>reply", "3:reply>done"}; !slices.Equal(kinds, want) {
			t.Errorf("history = %q\nwant %q", kinds, want)
		}
		// The step that appends two messages records two messages.
		for _, c := range hist[5].Changes {
			if c.Name == "messages" && (!c.Append || len(c.Value.List()) != 2) {
				t.Errorf("messages change = %+v, want an append of 2", c)
			}
		}
	})
}

const askWF = `
workflow Ask {
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
      action: "count"
      outputs {
        n: Int
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

func countRunner(counts map[string]int) *engine.Runner {
	var mu sync.Mutex
	reg := engine.NewRegistry()
	reg.Register("count", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		mu.Lock()
		counts[c.Node.Name]++
		n := counts[c.Node.Name]
		mu.Unlock()
		return c.SetOutput("n", flow.IntValue(int64(n)))
	}))
	return &engine.Runner{Registry: reg}
}

func TestThreadWaitsAndResumesInANewProcess(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "ask.wf", askWF)
		counts := map[string]int{}
		th := &engine.Threads{Runner: countRunner(counts), Store: open()}
		res, err := th.Run(ctx, plan, "t", nil, nil, nil)
		if err != nil || res.Status != engine.Waiting {
			t.Fatalf("run: %v, %v", res.Status, err)
		}
		pend, err := th.Store.Pending(ctx, "t")
		if err != nil || len(pend) != 1 || pend[0].Node != "ask" || string(pend[0].Question) != `"Which year?"` {
			t.Fatalf("pending = %+v, %v", pend, err)
		}
		// A new run in a waiting thread is refused.
		_, err = th.Run(ctx, plan, "t", nil, nil, nil)
		var te *engine.ThreadError
		if !errors.As(err, &te) || te.Status != engine.Waiting || te.Run != 1 || !errors.Is(err, engine.ErrWaiting) {
			t.Fatalf("run on a waiting thread: %v", err)
		}
		// Resuming without an answer is refused too.
		if _, err := th.Resume(ctx, plan, "t", nil, nil); !errors.As(err, &te) || !errors.Is(err, engine.ErrWaiting) {
			t.Fatalf("resume without answers: %v", err)
		}

		th2 := &engine.Threads{Runner: countRunner(counts), Store: open()}
		res, err = th2.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume: %v, %v", res.Status, err)
		}
		if counts["prepare"] != 1 || counts["answer"] != 1 {
			t.Errorf("counts = %v: prepare must not run again", counts)
		}
		if got := strings.Join(res.Path, " "); got != "prepare ask answer done" {
			t.Errorf("path = %q", got)
		}
		ts, err := th2.Load(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := ts.Value("ask.year"); v.Text() != "2019" {
			t.Errorf("ask.year = %s", v)
		}
		if pend, _ := th2.Store.Pending(ctx, "t"); len(pend) != 0 {
			t.Errorf("pending after the answer: %+v", pend)
		}
		if _, err := th2.Resume(ctx, plan, "t", nil, nil); !errors.As(err, &te) || te.Status != engine.Completed {
			t.Errorf("resume of an ended run: %v", err)
		}
	})
}

const twoQuestionsWF = `
workflow Two {
  nodes {
    node start {
      type: FUNCTION
      action: "count"
      outputs {
        n: Int
      }
    }
    node ask_a {
      type: HUMAN
      question: "A?"
      outputs {
        a: String
      }
    }
    node ask_b {
      type: HUMAN
      question: "B?"
      outputs {
        b: String
      }
    }
    node both {
      type: FUNCTION
      action: "count"
      outputs {
        n: Int
      }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: start; to: [ask_a, ask_b]; join: both }
    edge { from: ask_a; to: both }
    edge { from: ask_b; to: both }
    edge { from: both; to: done }
  }
  initial: start
  finals: [ done ]
}
`

func TestThreadSeveralQuestionsAnsweredByID(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "two.wf", twoQuestionsWF)
		counts := map[string]int{}
		th := &engine.Threads{Runner: countRunner(counts), Store: open()}
		res, err := th.Run(ctx, plan, "q", nil, nil, nil)
		if err != nil || res.Status != engine.Waiting || len(res.Waiting) != 2 {
			t.Fatalf("run: %v %+v %v", res.Status, res.Waiting, err)
		}
		ids := map[string]string{}
		pend, _ := th.Store.Pending(ctx, "q")
		for _, p := range pend {
			ids[p.Node] = p.ID
		}
		if len(ids) != 2 {
			t.Fatalf("pending = %+v", pend)
		}
		var te *engine.ThreadError
		if _, err := th.Resume(ctx, plan, "q", []engine.Answer{{Outputs: map[string]flow.Value{"a": flow.StringValue("x")}}}, nil); !errors.As(err, &te) || !strings.Contains(err.Error(), "several questions") {
			t.Fatalf("an answer without id to two questions: %v", err)
		}
		if _, err := th.Resume(ctx, plan, "q", []engine.Answer{{ID: "99", Outputs: nil}}, nil); !errors.As(err, &te) || !strings.Contains(err.Error(), `no question "99"`) {
			t.Fatalf("an answer to an unknown question: %v", err)
		}
		th2 := &engine.Threads{Runner: countRunner(counts), Store: open()}
		res, err = th2.Resume(ctx, plan, "q", []engine.Answer{{ID: ids["ask_b"], Outputs: map[string]flow.Value{"b": flow.StringValue("bee")}}}, nil)
		if err != nil || res.Status != engine.Waiting || len(res.Waiting) != 1 || res.Waiting[0].Node != "ask_a" {
			t.Fatalf("after answering b: %v %+v %v", res.Status, res.Waiting, err)
		}
		if pend, _ := th2.Store.Pending(ctx, "q"); len(pend) != 1 || pend[0].Node != "ask_a" {
			t.Fatalf("pending after b = %+v", pend)
		}
		th3 := &engine.Threads{Runner: countRunner(counts), Store: open()}
		res, err = th3.Resume(ctx, plan, "q", []engine.Answer{{ID: ids["ask_a"], Outputs: map[string]flow.Value{"a": flow.StringValue("ay")}}}, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("after answering a: %v %v", res.Status, err)
		}
		if counts["start"] != 1 || counts["both"] != 1 {
			t.Errorf("counts = %v", counts)
		}
		ts, _ := th3.Load(ctx, "q")
		a, _ := ts.Value("ask_a.a")
		b, _ := ts.Value("ask_b.b")
		if a.Text() != "ay" || b.Text() != "bee" {
			t.Errorf("answers = %s, %s", a, b)
		}
	})
}

const loopWF = `
workflow Loop {
  parameters {
    n: Int = 20
  }
  variables {
    i: Int = 0
    acc: Int = 0
  }
  nodes {
    node step {
      type: FUNCTION
      action: "step"
      inputs {
        i: i
      }
      outputs {
        v: Int
      }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: step; to: step; condition: i + 1 < n; update: { i = i + 1; acc = acc + step.v } }
    edge { from: step; to: done; update: { acc = acc + step.v } }
  }
  initial: step
  finals: [ done ]
}
`

// stepRunner's action returns i*i and records the keys it ran with; stop,
// when set, cancels the run when step i is reached.
func stepRunner(keys *[]string, mu *sync.Mutex, stop func(i int64)) *engine.Runner {
	reg := engine.NewRegistry()
	reg.Register("step", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		i := c.Input("i").Int()
		mu.Lock()
		*keys = append(*keys, c.Key)
		mu.Unlock()
		if stop != nil {
			stop(i)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		return c.SetOutput("v", flow.IntValue(i*i))
	}))
	return &engine.Runner{Registry: reg}
}

func TestThreadInterruptedRunResumesWithTheStepInFlight(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		plan := load(t, "loop.wf", loopWF)
		var keys []string
		var mu sync.Mutex
		ctx, cancel := context.WithCancel(context.Background())
		th := &engine.Threads{Runner: stepRunner(&keys, &mu, func(i int64) {
			if i == 7 {
				cancel()
			}
		}), Store: open()}
		res, err := th.Run(ctx, plan, "l", nil, nil, nil)
		if err == nil || res.Status != engine.Cancelled {
			t.Fatalf("cancelled run: %v, %v", res.Status, err)
		}
		th2 := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: open()}
		ts, err := th2.Load(context.Background(), "l")
		if err != nil || ts.Status() != engine.Running {
			t.Fatalf("after the cancel: %v, %v", ts.Status(), err)
		}
		// A new run is refused while this one did not finish.
		var te *engine.ThreadError
		if _, err := th2.Run(context.Background(), plan, "l", nil, nil, nil); !errors.As(err, &te) || te.Status != engine.Running {
			t.Fatalf("run on an unfinished thread: %v", err)
		}
		res, err = th2.Resume(context.Background(), plan, "l", nil, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume: %v, %v", res.Status, err)
		}
		var sum int64
		for i := int64(0); i < 20; i++ {
			sum += i * i
		}
		if acc := resultVar(t, res, "acc"); acc.Int() != sum {
			t.Errorf("acc = %s, want %d", acc, sum)
		}
		// Every step ran once, except step 8 (i == 7), which was in
		// flight and ran again with the same key.
		want := []string{}
		for s := 1; s <= 20; s++ {
			want = append(want, fmt.Sprintf("l/1-%s/%d", ts.Run, s))
			if s == 8 {
				want = append(want, fmt.Sprintf("l/1-%s/8", ts.Run))
			}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("keys = %q\nwant %q", keys, want)
		}
		hist, _ := th2.History(context.Background(), "l", 1)
		if err := stepsOnce(hist, 20); err != nil {
			t.Errorf("%v", err)
		}
	})
}

func TestThreadFork(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "loop.wf", loopWF)
		var keys []string
		var mu sync.Mutex
		th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: open()}
		if _, err := th.Run(ctx, plan, "src", nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		hist, _ := th.History(ctx, "src", 1)
		// Fork right after step 5 completed, with i moved on to 15.
		var at int64
		for _, h := range hist {
			if h.Node == "step" && h.Step == 5 {
				at = h.Seq
			}
		}
		fts, err := th.Fork(ctx, "src", at, "dst", &engine.ForkOptions{Set: map[string]flow.Value{"i": flow.IntValue(15)}, Plan: plan})
		if err != nil {
			t.Fatal(err)
		}
		if fts.Status() != engine.Running || fts.Forked == nil || fts.Forked.Seq != at {
			t.Fatalf("forked: %s %+v", fts.Status(), fts.Forked)
		}
		// The store lists the forked run, as Load sees it.
		if runs, err := th.Store.Runs(ctx, "dst"); err != nil || len(runs) != 1 || runs[0].Number != fts.RunNumber || runs[0].Status != "running" || runs[0].ID != fts.Run {
			t.Fatalf("runs of the fork: %+v, %v; want run %d (%s), running", runs, err, fts.RunNumber, fts.Run)
		}
		res, err := th.Resume(ctx, plan, "dst", nil, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume of the fork: %v %v", res.Status, err)
		}
		if runs, err := th.Store.Runs(ctx, "dst"); err != nil || len(runs) != 1 || runs[0].Status != "completed" {
			t.Fatalf("runs of the fork after its resume: %+v, %v; want one, completed", runs, err)
		}
		// Steps 1..5 accumulated 0+1+4+9+16 = 30; the ready step 6 ran
		// with its resolved input i=5 (25), then i jumped: 16..19.
		want := int64(30 + 25 + 16*16 + 17*17 + 18*18 + 19*19)
		if acc := resultVar(t, res, "acc"); acc.Int() != want {
			t.Errorf("acc = %s, want %d", acc, want)
		}
		src, _ := th.Load(ctx, "src")
		if v, _ := src.Value("acc"); v.Int() != 2470 {
			t.Errorf("source thread changed: acc = %s", v)
		}
		var te *engine.ThreadError
		if _, err := th.Fork(ctx, "src", 999, "x", nil); !errors.As(err, &te) {
			t.Errorf("fork at a missing record: %v", err)
		}
		if _, err := th.Fork(ctx, "src", at, "y", &engine.ForkOptions{Set: map[string]flow.Value{"acx": flow.IntValue(1)}}); !errors.As(err, &te) || !strings.Contains(err.Error(), `did you mean "acc"`) {
			t.Errorf("fork with an unknown name: %v", err)
		}
		if _, err := th.Fork(ctx, "src", at, "dst", nil); !errors.Is(err, store.ErrExists) {
			t.Errorf("fork onto an existing thread: %v", err)
		}
	})
}

func TestThreadPlanChanged(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "ask.wf", askWF)
	counts := map[string]int{}
	th := &engine.Threads{Runner: countRunner(counts), Store: memory.New()}
	if _, err := th.Run(ctx, plan, "p", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	changed := load(t, "ask.wf", strings.Replace(askWF, "year: String", "year: String\n        month: String", 1))
	_, err := th.Resume(ctx, changed, "p", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("1")}}}, nil)
	var pe *engine.PlanChangedError
	if !errors.As(err, &pe) || pe.Run != 1 {
		t.Fatalf("resume with a changed plan: %v", err)
	}
}

// TestThreadCorruptRecord: a record whose checksum is right but whose data
// does not fit the thread is an error naming thread, record and field.
func TestThreadCorruptRecord(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "chat.wf", chatWF)
	var calls []string
	s := memory.New()
	th := &engine.Threads{Runner: chatRunner(t, &calls), Store: s}
	if _, err := th.Run(ctx, plan, "c", map[string]flow.Value{"input_text": flow.StringValue("hi")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	ts, _ := th.Load(ctx, "c")
	bad := []*store.Record{
		{ThreadID: "c", Seq: ts.Seq + 1, Step: 3, Kind: store.Step, Data: []byte(`{"delta":[{"c":9999,"v":1}],"control":{}}`)},
	}
	if err := s.Append(ctx, bad...); err != nil {
		t.Fatal(err)
	}
	_, err := th.Load(ctx, "c")
	var ce *store.CorruptError
	if !errors.As(err, &ce) || ce.ThreadID != "c" || ce.Seq != ts.Seq+1 || ce.Step != 3 || ce.Field != "data.delta" {
		t.Fatalf("load of a bad record: %v", err)
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "c", Seq: ts.Seq + 2, Kind: store.Step, Data: []byte(`{"control":{"status":"bogus"}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := th.History(ctx, "c", 1); !errors.As(err, &ce) {
		t.Fatalf("history with a bad record: %v", err)
	}
}

// TestThreadBytesPerTurnStayFlat runs a 500-turn conversation whose
// messages grow with every turn, and checks the bytes stored per turn do
// not grow with it, where storing the whole state at every step (as
// LangGraph's checkpointers do) grows linearly.
func TestThreadBytesPerTurnStayFlat(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "chat.wf", chatWF)
	var calls []string
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "chat.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	th := &engine.Threads{Runner: chatRunner(t, &calls), Store: s}
	const turns = 500
	for i := range turns {
		if _, err := th.Run(ctx, plan, "long", map[string]flow.Value{"input_text": flow.StringValue(fmt.Sprintf("question number %d", i))}, nil, nil); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	recs, err := s.Records(ctx, "long", 1)
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := s.Runs(ctx, "long")
	runOf := map[string]int{}
	for _, r := range runs {
		runOf[r.ID] = r.Number
	}
	perTurn := make([]int, turns+1)
	snapshots := 0
	for _, r := range recs {
		perTurn[runOf[r.RunID]] += len(r.Data)
		if r.Kind == store.Snapshot {
			snapshots++
		}
	}
	sum := func(from, to int) int {
		n := 0
		for _, b := range perTurn[from:to] {
			n += b
		}
		return n
	}
	first, last := sum(1, 101), sum(401, 501)
	ts, _ := th.Load(ctx, "long")
	state, _ := json.Marshal(ts.State)
	t.Logf("500 turns: %d records (%d snapshots), turns 1-100: %d B (%d B/turn), turns 401-500: %d B (%d B/turn); state at the end: %d B (full-state checkpoints would store about that per step)",
		len(recs), snapshots, first, first/100, last, last/100, len(state))
	if last > 2*first {
		t.Errorf("bytes per turn grew from %d to %d", first/100, last/100)
	}
	if msgs, _ := ts.Value("messages"); len(msgs.List()) != 2*turns {
		t.Errorf("%d messages, want %d", len(msgs.List()), 2*turns)
	}
}

// TestThreadIdempotencyKeysUniqueForever: a thread deleted and made again
// under the same id, the same id in a fresh store, and a fork made again
// after its deletion number their runs and steps from 1 again, but send
// none of the keys sent before; a step that was in flight when its run
// stopped is sent again with its key, by a new process.
func TestThreadIdempotencyKeysUniqueForever(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "loop.wf", loopWF)
	params := map[string]flow.Value{"n": flow.IntValue(3)}
	var mu sync.Mutex
	seen := map[string]string{} // key -> the case that sent it
	run := func(what string, th *engine.Threads, resume bool, id string) {
		t.Helper()
		var keys []string
		th.Runner = stepRunner(&keys, &mu, nil)
		var err error
		if resume {
			_, err = th.Resume(ctx, plan, id, nil, nil)
		} else {
			_, err = th.Run(ctx, plan, id, params, nil, nil)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(keys) == 0 {
			t.Fatalf("%s sent no key", what)
		}
		for _, k := range keys {
			if !strings.HasPrefix(k, id+"/") {
				t.Errorf("%s: key %q does not start with the thread", what, k)
			}
			if prev, ok := seen[k]; ok {
				t.Errorf("%s sent key %q again, first sent by %s", what, k, prev)
			}
			seen[k] = what
		}
	}
	st := memory.New()
	th := &engine.Threads{Store: st}
	run("the first thread k", th, false, "k")
	run("a second run of k", th, false, "k")
	if err := st.DeleteThread(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	run("k made again after its deletion", th, false, "k")
	run("k in a fresh store", &engine.Threads{Store: memory.New()}, false, "k")

	if _, err := th.Fork(ctx, "k", 2, "f", nil); err != nil {
		t.Fatal(err)
	}
	run("fork f", th, true, "f")
	if err := st.DeleteThread(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := th.Fork(ctx, "k", 2, "f", nil); err != nil {
		t.Fatal(err)
	}
	run("fork f made again", th, true, "f")

	// A run stopped in the middle of step 2 (its process died), resumed
	// by another process of a store on the same file: step 2 is sent
	// again with the key it was first sent with, and no other key
	// repeats.
	path := filepath.Join(t.TempDir(), "weft.db")
	open := func() store.Store {
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	var keys []string
	cctx, cancel := context.WithCancel(ctx)
	th1 := &engine.Threads{Runner: stepRunner(&keys, &mu, func(i int64) {
		if i == 1 {
			cancel()
		}
	}), Store: open()}
	if _, err := th1.Run(cctx, plan, "c", params, nil, nil); err == nil {
		t.Fatal("the stopped run did not fail")
	}
	th2 := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: open()}
	if _, err := th2.Resume(ctx, plan, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 4 || keys[1] != keys[2] || keys[0] == keys[1] || keys[2] == keys[3] {
		t.Errorf("keys of a run stopped in step 2 and resumed = %q, want steps 1, 2, 2, 3", keys)
	}
	for _, k := range keys {
		if prev, ok := seen[k]; ok {
			t.Errorf("resumed thread c sent key %q of %s", k, prev)
		}
	}
}

// stepsOnce checks that a history records each of the steps 1 to n of
// the node "step" exactly once.
func stepsOnce(hist []engine.HistoryEntry, n int) error {
	steps := map[int]int{}
	for _, h := range hist {
		if h.Node == "step" {
			steps[h.Step]++
		}
	}
	for s := 1; s <= n; s++ {
		if steps[s] != 1 {
			return fmt.Errorf("step %d recorded %d times", s, steps[s])
		}
	}
	return nil
}
