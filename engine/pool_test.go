package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store/memory"
)

// TestReusedRunsStayIndependent runs many runs at once, each with its own
// parameter, so that machines and drive scratch released by one run are
// taken up by others: every result must be its own run's. Runs whose
// action outlived its timeout are mixed in; their memory may still be read
// by the abandoned action and must not be reused. Run with -race.
func TestReusedRunsStayIndependent(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "loop.wf", loopWF)
	var keys []string
	var mu sync.Mutex
	r := stepRunner(&keys, &mu, nil)

	const slowSrc = `
workflow Slow {
  nodes {
    node step {
      type: FUNCTION
      action: "slow"
      timeout: 5ms
      inputs {
        i: 7
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
    edge { from: step; to: done }
  }
  initial: step
  finals: [ done ]
}
`
	slow := load(t, "slow.wf", slowSrc)
	release := make(chan struct{})
	r.Registry.Register("slow", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		// It ignores its context, so the attempt is abandoned, and
		// goes on reading its inputs until the test ends.
		for {
			if c.Input("i").Int() != 7 {
				t.Error("an abandoned action's inputs changed under it")
			}
			select {
			case <-release:
				return nil
			case <-time.After(50 * time.Microsecond):
			}
		}
	}))
	defer close(release)

	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 50 {
				if k%10 == 3 {
					res, err := r.Run(ctx, slow, nil, nil)
					if err == nil || res.Status != engine.Failed {
						t.Errorf("slow run: %v, %v; want a timeout", res.Status, err)
					}
					continue
				}
				n := int64(1 + (g*50+k)%23)
				res, err := r.Run(ctx, plan, map[string]flow.Value{"n": flow.IntValue(n)}, nil)
				if err != nil || res.Status != engine.Completed {
					t.Errorf("run n=%d: %v, %v", n, res.Status, err)
					return
				}
				want := int64(0)
				for i := range n {
					want += i * i
				}
				if acc := resultVar(t, res, "acc").Int(); acc != want || res.Steps != int(n)+1 || len(res.Path) != int(n)+1 {
					t.Errorf("run n=%d: acc %d (want %d), %d steps, path %v", n, acc, want, res.Steps, res.Path)
				}
			}
		})
	}
	wg.Wait()
}

const yearWF = `
workflow Ask {
  nodes {
    node ask {
      type: HUMAN
      question: "Which year?"
      outputs {
        year: Int
      }
    }
    node answer {
      type: FUNCTION
      action: "answer"
      inputs {
        y: ask.year
      }
      outputs {
        text: String
      }
    }
  }
  edges {
    edge { from: ask; to: answer }
  }
  initial: ask
  finals: [ answer ]
}
`

func askRunner(t *testing.T) *engine.Runner {
	t.Helper()
	return &engine.Runner{Registry: registry(t, map[string]engine.ActionFunc{
		"answer": func(ctx context.Context, c *engine.Call) error {
			c.Outputs[0] = flow.StringValue("revenue in " + c.Input("y").String())
			return nil
		},
	})}
}

func yearAnswer(res *engine.Result, year int64) map[string]map[string]flow.Value {
	return map[string]map[string]flow.Value{res.Waiting[0].ID: {"year": flow.IntValue(year)}}
}

// TestResumeStaleResult resumes a Result a second time after its run
// ended (its machine went back to the pool) and another run B started:
// the stale Result must be refused, and B must go on with its own state.
// Several rounds, since sync.Pool does not always hand the machine on.
func TestResumeStaleResult(t *testing.T) {
	ctx := context.Background()
	plan := compile(t, "ask.wf", yearWF)
	r := askRunner(t)
	for round := range 20 {
		a, err := r.Run(ctx, plan, nil, nil)
		if err != nil || a.Status != engine.Waiting {
			t.Fatalf("round %d: run A: %v, %v", round, a.Status, err)
		}
		aCopy := *a // a copy of a Result is the same run
		done, err := r.Resume(ctx, a, yearAnswer(a, 2001), nil)
		if err != nil || done.Output("text").Str() != "revenue in 2001" {
			t.Fatalf("round %d: resume A: %v, %v", round, done.Outputs, err)
		}
		b, err := r.Run(ctx, plan, nil, nil)
		if err != nil || b.Status != engine.Waiting {
			t.Fatalf("round %d: run B: %v, %v", round, b.Status, err)
		}
		for _, stale := range []*engine.Result{a, &aCopy} {
			got, err := r.Resume(ctx, stale, yearAnswer(stale, 1999), nil)
			if err == nil || !errors.Is(err, engine.ErrStale) {
				t.Fatalf("round %d: stale resume of A = %v %v, %v; want ErrStale", round, got.Status, got.Outputs, err)
			}
			if got.Output("text").Str() == "revenue in 1999" {
				t.Fatalf("round %d: the stale resume of A answered a run: %v", round, got.Outputs)
			}
		}
		// A Result that did not wait cannot be made to resume either.
		forged := *done
		forged.Status = engine.Waiting
		forged.Waiting = b.Waiting
		if _, err := r.Resume(ctx, &forged, yearAnswer(b, 1998), nil); err == nil {
			t.Fatalf("round %d: resuming a completed result (marked waiting) succeeded", round)
		}
		res, err := r.Resume(ctx, b, yearAnswer(b, 2019), nil)
		if err != nil || res.Status != engine.Completed || res.Output("text").Str() != "revenue in 2019" || strings.Join(res.Path, " ") != "ask answer" {
			t.Fatalf("round %d: resume B: %v %v path %v, %v; want revenue in 2019", round, res.Status, res.Outputs, res.Path, err)
		}
		if done.Output("text").Str() != "revenue in 2001" {
			t.Fatalf("round %d: A's result changed to %v", round, done.Outputs)
		}
	}
}

// TestResumeConcurrently resumes one waiting Result from two goroutines,
// each with its own answer: exactly one resume takes the run (and its
// result has its answer); the other is refused with ErrStale. Run with
// -race.
func TestResumeConcurrently(t *testing.T) {
	ctx := context.Background()
	plan := compile(t, "ask.wf", yearWF)
	r := askRunner(t)
	for round := range 20 {
		res, err := r.Run(ctx, plan, nil, nil)
		if err != nil || res.Status != engine.Waiting {
			t.Fatalf("run: %v, %v", res.Status, err)
		}
		var wg sync.WaitGroup
		var got [2]*engine.Result
		var errs [2]error
		for i := range 2 {
			wg.Go(func() {
				got[i], errs[i] = r.Resume(ctx, res, yearAnswer(res, int64(2020+i)), nil)
			})
		}
		wg.Wait()
		won := 0
		for i := range 2 {
			switch {
			case errs[i] == nil:
				won++
				if want := fmt.Sprintf("revenue in %d", 2020+i); got[i].Status != engine.Completed || got[i].Output("text").Str() != want {
					t.Errorf("round %d: resume %d: %v %v; want %q", round, i, got[i].Status, got[i].Outputs, want)
				}
			case !errors.Is(errs[i], engine.ErrStale):
				t.Errorf("round %d: resume %d: %v; want ErrStale", round, i, errs[i])
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d resumes took the run (%v); want exactly one", round, won, errs)
		}
	}
}

// TestResumeRefusals checks the Resumes that must change nothing: a bad
// answer leaves the Result waiting and resumable; a Result of a thread's
// run is resumed through its thread, never in memory.
func TestResumeRefusals(t *testing.T) {
	ctx := context.Background()
	plan := compile(t, "ask.wf", yearWF)
	r := askRunner(t)
	res, err := r.Run(ctx, plan, nil, nil)
	if err != nil || res.Status != engine.Waiting {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	id := res.Waiting[0].ID
	for _, bad := range []map[string]map[string]flow.Value{
		{id: {"yeer": flow.IntValue(2019)}},                                       // no such output
		{id: {"year": flow.IntValue(2019)}, id + "7": {"year": flow.IntValue(1)}}, // a question that does not wait
	} {
		if got, err := r.Resume(ctx, res, bad, nil); err == nil || errors.Is(err, engine.ErrStale) || got != res {
			t.Fatalf("resume with %v: %v, %v; want an answer error and res back", bad, got.Status, err)
		}
	}
	done, err := r.Resume(ctx, res, yearAnswer(res, 2019), nil)
	if err != nil || done.Output("text").Str() != "revenue in 2019" {
		t.Fatalf("resume after bad answers: %v, %v; want revenue in 2019", done.Outputs, err)
	}

	th := &engine.Threads{Runner: r, Store: memory.New()}
	tres, err := th.Run(ctx, plan, "t", nil, nil, nil)
	if err != nil || tres.Status != engine.Waiting {
		t.Fatalf("thread run: %v, %v", tres.Status, err)
	}
	if got, err := r.Resume(ctx, tres, yearAnswer(tres, 1999), nil); err == nil || got.Output("text").Str() != "" {
		t.Fatalf("in-memory resume of a thread's result: %v %v, %v; want it refused", got.Status, got.Outputs, err)
	}
	out, err := th.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.IntValue(2020)}}}, nil)
	if err != nil || out.Output("text").Str() != "revenue in 2020" {
		t.Fatalf("thread resume: %v, %v; want revenue in 2020", out.Outputs, err)
	}
}

// TestResumeWithPoolReuse runs waiting runs from many goroutines, so that
// machines released by one run are taken up by others, and resumes each
// Result, then its stale copy: every answer must reach its own run only,
// a stale copy is refused, and a result once made never changes. Run
// with -race.
func TestResumeWithPoolReuse(t *testing.T) {
	ctx := context.Background()
	plan := compile(t, "ask.wf", yearWF)
	r := askRunner(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			var earlier []*engine.Result
			for k := range 30 {
				year := int64(1000*(g+1) + k)
				a, err := r.Run(ctx, plan, nil, nil)
				if err != nil || a.Status != engine.Waiting {
					t.Errorf("run: %v, %v", a.Status, err)
					return
				}
				stale := *a
				done, err := r.Resume(ctx, a, yearAnswer(a, year), nil)
				if want := fmt.Sprintf("revenue in %d", year); err != nil || done.Output("text").Str() != want {
					t.Errorf("resume: %v, %v; want %q", done.Outputs, err, want)
					return
				}
				if _, err := r.Resume(ctx, &stale, yearAnswer(&stale, 1), nil); !errors.Is(err, engine.ErrStale) {
					t.Errorf("stale resume: %v; want ErrStale", err)
				}
				earlier = append(earlier, done)
			}
			for k, res := range earlier {
				want := fmt.Sprintf("revenue in %d", 1000*(g+1)+k)
				if res.Output("text").Str() != want || strings.Join(res.Path, " ") != "ask answer" {
					t.Errorf("result %d changed: %v path %v; want %q", k, res.Outputs, res.Path, want)
				}
			}
		})
	}
	wg.Wait()
}
