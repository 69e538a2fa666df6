package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
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
