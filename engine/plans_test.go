package engine_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store/memory"
)

// plannedWF is a workflow whose variable, and so whose fingerprint and
// cell names, differ with its number.
func plannedWF(i int) string {
	return fmt.Sprintf(`
action greet {
  type: LLM
  prompt: "Say hello"
}

workflow Planned%[1]d {
  variables {
    v%[1]d: Int = %[1]d
  }
  nodes {
    node hello {
      type: LLM
      action: "greet"
      outputs {
        text: String
      }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: hello; to: done }
  }
  initial: hello
  finals: [ done ]
}
`, i)
}

// TestThreadsPlansGoWithTheirPlans: Threads keeps what it derives from a
// plan (fingerprint, cell and node names) only while the plan is in use,
// so a server that compiles workflow after workflow does not grow; while
// the plans live, every thread records its own plan's values.
func TestThreadsPlansGoWithTheirPlans(t *testing.T) {
	ctx := context.Background()
	r := &engine.Runner{Bind: func(*flow.Binding) (engine.Action, error) {
		return engine.ActionFunc(func(_ context.Context, c *engine.Call) error {
			c.Outputs[0] = flow.StringValue("hello")
			return nil
		}), nil
	}}
	th := &engine.Threads{Runner: r, Store: memory.New()}
	const n = 20
	plans := make([]*flow.Plan, n)
	for i := range plans {
		plans[i] = load(t, "planned.wf", plannedWF(i))
	}
	// Twice each, interleaved: the second run of a plan uses what the
	// first derived, and must still get its own plan's values.
	for round := range 2 {
		for i, plan := range plans {
			id := fmt.Sprintf("t%d-%d", i, round)
			res, err := th.Run(ctx, plan, id, nil, nil, nil)
			if err != nil || res.Status != engine.Completed {
				t.Fatalf("plan %d: %v, %v", i, res.Status, err)
			}
			ts, err := th.Load(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if want := engine.Fingerprint(plan); ts.Plan != want {
				t.Errorf("thread %s: plan %q; want %q", id, ts.Plan, want)
			}
			if v, ok := ts.Value(fmt.Sprintf("v%d", i)); !ok || v.Int() != int64(i) {
				t.Errorf("thread %s: v%d = %v, %v; want %d (cells %v)", id, i, v, ok, i, ts.Cells)
			}
			if !slices.Equal(ts.Nodes, []string{"hello", "done"}) && !slices.Equal(ts.Nodes, []string{"done", "hello"}) {
				t.Errorf("thread %s: nodes %v", id, ts.Nodes)
			}
		}
	}
	if got := engine.PlanEntries(th); got != n {
		t.Errorf("%d plan entries while %d plans are in use; want %d", got, n, n)
	}
	runtime.KeepAlive(plans)
	plans = nil
	for range 20 {
		runtime.GC()
		time.Sleep(time.Millisecond)
		if engine.PlanEntries(th) == 0 {
			break
		}
	}
	if got := engine.PlanEntries(th); got != 0 {
		t.Errorf("%d plan entries kept after their plans were dropped; want 0", got)
	}
}
