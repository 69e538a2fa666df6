package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

const parWF = `
workflow Par {
  nodes {
    node start {
      type: FUNCTION
      action: "noop"
    }
    node a {
      type: FUNCTION
      action: "slow"
    }
    node b1 {
      type: FUNCTION
      action: "fast"
    }
    node b2 {
      type: FUNCTION
      action: "fast"
    }
    node b3 {
      type: FUNCTION
      action: "fast"
    }
    node join {
      type: FUNCTION
      action: "noop"
    }
  }
  edges {
    edge { from: start; to: [a, b1]; join: join }
    edge { from: b1; to: b2 }
    edge { from: b2; to: b3 }
    edge { from: b3; to: join }
    edge { from: a; to: join }
  }
  initial: start
  finals: [ join ]
}
`

// A slow Observer does not hold up the run: it is called outside the
// executor's lock, so while it blocks (here until the fast branch is
// done, and 50ms on every event) the fast branch runs to its end. The
// events still arrive each once, numbered 1, 2, 3, ... in the order they
// arrive, and all of them before Run returns.
func TestSlowObserverDoesNotStallBranches(t *testing.T) {
	plan := load(t, "par.wf", parWF)
	fastDone := make(chan struct{})
	var fast sync.Mutex
	nfast := 0
	reg := engine.NewRegistry()
	reg.Register("noop", engine.ActionFunc(func(context.Context, *engine.Call) error { return nil }))
	reg.Register("fast", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		c.Emit("progress", flow.StringValue(c.Node.Name))
		fast.Lock()
		defer fast.Unlock()
		if nfast++; nfast == 3 {
			close(fastDone)
		}
		return nil
	}))
	reg.Register("slow", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		select {
		case <-fastDone:
			return nil
		case <-time.After(10 * time.Second):
			return context.DeadlineExceeded
		}
	}))
	var mu sync.Mutex
	var got []engine.Event
	blocked := false // the observer blocked until the fast branch was done
	obs := engine.ObserverFunc(func(e engine.Event) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
		if e.Type == engine.NodeStarted && e.Node == "a" {
			select {
			case <-fastDone:
				blocked = true
			case <-time.After(10 * time.Second):
			}
		}
		time.Sleep(50 * time.Millisecond)
	})
	res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, obs)
	if err != nil || res.Status != engine.Completed {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !blocked {
		t.Fatal("the fast branch did not finish while the observer was blocked")
	}
	count := map[string]int{}
	for i, e := range got {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has Seq %d: %v", i, e.Seq, got)
		}
		key := e.Type.String() + " " + e.Node
		count[key]++
	}
	want := map[string]int{
		"run_started ": 1, "run_finished join": 1, "edge_taken ": 5,
		"node_started start": 1, "node_finished start": 1,
		"node_started a": 1, "node_finished a": 1,
		"node_started join": 1, "node_finished join": 1,
	}
	for _, n := range []string{"b1", "b2", "b3"} {
		want["node_started "+n], want["node_finished "+n], want["action "+n] = 1, 1, 1
	}
	total := 0
	for k, n := range want {
		total += n
		if count[k] != n {
			t.Errorf("%q: %d events, want %d (%v)", k, count[k], n, count)
		}
	}
	if len(got) != total {
		t.Errorf("%d events, want %d", len(got), total)
	}
	if got[0].Type != engine.RunStarted || got[len(got)-1].Type != engine.RunFinished {
		t.Errorf("first %v, last %v", got[0], got[len(got)-1])
	}
}

// The events of a thread's run carry the thread and the run's number, and
// their Seq goes on across a resume in another process (it is part of the
// run's records): (Thread, Run, Seq) names each event once. A new run of
// the thread numbers its events from 1 again.
func TestThreadEventSeqAcrossResume(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "ask.wf", askWF)
		counts := map[string]int{}
		var got []engine.Event
		obs := engine.ObserverFunc(func(e engine.Event) { got = append(got, e) })
		th := &engine.Threads{Runner: countRunner(counts), Store: open()}
		if res, err := th.Run(ctx, plan, "t", nil, obs, nil); err != nil || res.Status != engine.Waiting {
			t.Fatalf("run: %v, %v", res.Status, err)
		}
		first := len(got)
		if first == 0 || got[first-1].Type != engine.RunWaiting {
			t.Fatalf("events before the question: %v", got)
		}
		th2 := &engine.Threads{Runner: countRunner(counts), Store: open()}
		answer := []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}
		if res, err := th2.Resume(ctx, plan, "t", answer, obs); err != nil || res.Status != engine.Completed {
			t.Fatalf("resume: %v, %v", res.Status, err)
		}
		if len(got) <= first || got[len(got)-1].Type != engine.RunFinished {
			t.Fatalf("events after the answer: %v", got[first:])
		}
		for i, e := range got {
			if e.Seq != int64(i+1) || e.Thread != "t" || e.Run != 1 {
				t.Fatalf("event %d: seq %d, thread %q, run %d; want seq %d of thread t, run 1 (%v)", i, e.Seq, e.Thread, e.Run, i+1, e)
			}
		}
		b, _ := json.Marshal(got[0])
		if !strings.Contains(string(b), `"seq":1,"thread":"t","run":1,`) {
			t.Errorf("JSON: %s", b)
		}
		got = nil
		if res, err := th2.Run(ctx, plan, "t", nil, obs, nil); err != nil || res.Status != engine.Waiting {
			t.Fatalf("second run: %v, %v", res.Status, err)
		}
		if len(got) == 0 || got[0].Seq != 1 || got[0].Run != 2 || got[0].Thread != "t" {
			t.Fatalf("second run's first event: %+v", got)
		}
	})
}

// echoWF copies its input through two parallel branches.
const echoWF = `workflow Echo {
  nodes {
    node split {
      type: FUNCTION
      action: "pass"
      inputs { text: input_text }
      outputs { out: String }
    }
    node left {
      type: FUNCTION
      action: "pass"
      inputs { text: split.out }
      outputs { out: String }
    }
    node right {
      type: FUNCTION
      action: "pass"
      inputs { text: split.out }
      outputs { out: String }
    }
  }
  edges {
    edge { from: split; to: left }
    edge { from: split; to: right }
  }
  initial: split
  finals: [ left, right ]
}
`

// TestObservedEventsAcrossReuse: the event queue's buffers are reused from
// drive to drive (pooled with the drive's scratch). Runs in parallel and
// one after another each see only their own events, with their own
// values, and the events an observer kept are not changed by later runs.
func TestObservedEventsAcrossReuse(t *testing.T) {
	plan := load(t, "echo.wf", echoWF)
	reg := engine.NewRegistry()
	reg.Register("pass", engine.ActionFunc(func(_ context.Context, c *engine.Call) error {
		c.Outputs[0] = c.Inputs[0]
		return nil
	}))
	r := &engine.Runner{Registry: reg}
	const runs = 40
	kept := make([][]engine.Event, runs)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < runs; i += 4 {
				in := fmt.Sprintf("run-%d", i)
				var evs []engine.Event
				res, err := r.Run(context.Background(), plan, map[string]flow.Value{flow.InputText: flow.StringValue(in)}, engine.ObserverFunc(func(e engine.Event) { evs = append(evs, e) }))
				if err != nil || res.Status != engine.Completed {
					t.Errorf("run %d: %v", i, err)
					return
				}
				kept[i] = evs
			}
		}()
	}
	wg.Wait()
	for i, evs := range kept {
		want := fmt.Sprintf("run-%d", i)
		finished := 0
		for j, e := range evs {
			if e.Seq != int64(j+1) {
				t.Fatalf("run %d: event %d has seq %d", i, j, e.Seq)
			}
			if e.Type != engine.NodeFinished {
				continue
			}
			finished++
			if len(e.Outputs) != 1 || e.Outputs[0].Value.Str() != want {
				t.Fatalf("run %d: %s finished with %v, want %q", i, e.Node, e.Outputs, want)
			}
		}
		if finished < 2 { // split, and the final node that ended the run
			t.Fatalf("run %d: %d nodes finished, want split and a final one", i, finished)
		}
	}
}

// RunStarted carries the values a run starts with: its parameters and
// the variables and slots it begins with, null ones left out, so that an
// observer (the server's values stream) knows the whole state from the
// first event on.
func TestRunStartedCarriesTheStartingValues(t *testing.T) {
	plan := load(t, "start.wf", `workflow Start {
  parameters { who: String }
  variables { n: Int = 2
              unset: String }
  nodes { node done { type: END } }
  initial: done
  finals: [ done ]
}`)
	var first engine.Event
	obs := engine.ObserverFunc(func(e engine.Event) {
		if e.Seq == 1 {
			first = e
		}
	})
	params := map[string]flow.Value{"input_text": flow.StringValue("hi"), "who": flow.StringValue("ann")}
	res, err := (&engine.Runner{Registry: engine.NewRegistry()}).Run(context.Background(), plan, params, obs)
	if err != nil || res.Status != engine.Completed {
		t.Fatalf("run: %v, %v", res, err)
	}
	if first.Type != engine.RunStarted {
		t.Fatalf("first event %v", first)
	}
	var got []string
	for _, c := range first.Changes {
		got = append(got, c.Name+"="+c.Value.String())
	}
	if s := strings.Join(got, " "); s != `input_text="hi" who="ann" n=2` {
		t.Fatalf("RunStarted.Changes = %s", s)
	}
}
