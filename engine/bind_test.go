package engine_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

const boundWF = `
action greet {
  type: LLM
  prompt: "Say hello"
}

workflow Bound {
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
`

// TestBindOncePerPlanNode: a plan run many times binds each node once; a
// Bind error is not kept (the next run tries again); another plan binds
// its own.
func TestBindOncePerPlanNode(t *testing.T) {
	ctx := context.Background()
	var binds atomic.Int32
	fail := atomic.Bool{}
	r := &engine.Runner{Bind: func(b *flow.Binding) (engine.Action, error) {
		binds.Add(1)
		if fail.Load() {
			return nil, context.DeadlineExceeded
		}
		return engine.ActionFunc(func(_ context.Context, c *engine.Call) error {
			c.Outputs[0] = flow.StringValue("hello")
			return nil
		}), nil
	}}
	fail.Store(true)
	plan := load(t, "bound.wf", boundWF)
	if res, err := r.Run(ctx, plan, nil, nil); err == nil || res.Status != engine.Failed {
		t.Fatalf("a failing Bind: %v, %v", res.Status, err)
	}
	fail.Store(false)
	for range 5 {
		res, err := r.Run(ctx, plan, nil, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("run: %v, %v", res.Status, err)
		}
	}
	if n := binds.Load(); n != 2 {
		t.Errorf("Bind called %d times; want 2 (the failure, then once for every later run)", n)
	}
	other := load(t, "bound.wf", boundWF)
	if _, err := r.Run(ctx, other, nil, nil); err != nil || binds.Load() != 3 {
		t.Errorf("another plan: %v, %d binds; want its own", err, binds.Load())
	}
	// The entries of a plan that is no longer used go with it.
	plan, other = nil, nil
	for range 20 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := engine.BoundEntries(r); n != 0 {
		t.Errorf("%d bound actions kept after their plans were dropped", n)
	}
}
